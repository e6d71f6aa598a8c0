"""The sandbox's limits, for real: memory (RLIMIT_DATA), CPU, processes (RLIMIT_NPROC inside
the sandbox's user namespace, a pids cgroup as root), and a /tmp, /var/tmp and /dev/shm of a
size. Each command runs the terminal's way (backend, reaper)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.procs import processes_with, unique_sleep
from tests.support.sandbox import confined
from workbench.core.backends import limits
from workbench.core.backends.limits import DEFAULT, MB, Limits, limits_request, tmpfs_args
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status

needs_bwrap = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")
ROOT = os.geteuid() == 0
ALLOCATE = 'python3 -c "b = bytearray(1500 << 20); print(len(b))"'


def sandbox(tmp_path: Path, **limits: int) -> SandboxBackend:
    return SandboxBackend(hermes_home=tmp_path / "hermes", limits=Limits(**limits))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_tmp_var_tmp_and_dev_shm_get_the_size_set() -> None:
    assert tmpfs_args(Limits(tmp_mb=8)) == [
        *("--size", str(8 * MB), "--tmpfs", "/tmp"),
        *("--size", str(8 * MB), "--tmpfs", "/var/tmp"),
        *("--size", str(8 * MB), "--tmpfs", "/dev/shm"),
    ]
    assert tmpfs_args(Limits(tmp_mb=0)) == [
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/var/tmp",
        "--tmpfs",
        "/dev/shm",
    ]


def test_the_request_names_each_limit_and_none_switched_off() -> None:
    request = limits_request(Limits(memory_mb=100, cpu_seconds=5, max_procs=0))
    assert request == {"rlimits": [["DATA", 100 * MB, 100 * MB], ["CPU", 5, 6]]}
    assert limits_request(Limits(0, 0, 0, 0)) == {"rlimits": []}


@pytest.mark.skipif(ROOT, reason="as root the process limit is a cgroup")
def test_as_a_user_the_process_limit_is_set_inside_the_sandbox() -> None:
    assert limits_request(DEFAULT)["nproc"] == 256


@needs_bwrap
def test_a_1_5_gb_allocation_fails_by_default_and_runs_without_the_limit(
    tmp_path: Path, work: Path
) -> None:
    out = confined(SandboxBackend(hermes_home=tmp_path / "hermes"), ALLOCATE, work)
    assert out["exit_code"] == 1 and "MemoryError" in out["output"]
    unlimited = confined(sandbox(tmp_path, memory_mb=0), ALLOCATE, work)
    assert unlimited["exit_code"] == 0 and unlimited["output"] == f"{1500 << 20}\n"


@needs_bwrap
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_runs_under_the_default_memory_limit(tmp_path: Path, work: Path) -> None:
    """V8 reserves more address space than the limit: RLIMIT_DATA does not count it."""
    out = confined(
        SandboxBackend(hermes_home=tmp_path / "hermes"), "node -e 'console.log(6*7)'", work
    )
    assert out["exit_code"] == 0 and out["output"] == "42\n", out


@needs_bwrap
def test_a_process_past_its_cpu_seconds_is_stopped(tmp_path: Path, work: Path) -> None:
    out = confined(sandbox(tmp_path, cpu_seconds=1), 'python3 -c "while True: pass"', work, 30)
    assert out["exit_code"] == 128 + 24, out  # SIGXCPU, long before the timeout


@needs_bwrap
@pytest.mark.parametrize("place", ["/tmp", "/var/tmp", "/dev/shm"])
def test_filling_a_private_tmp_fails_with_no_space(tmp_path: Path, work: Path, place: str) -> None:
    out = confined(sandbox(tmp_path, tmp_mb=8), f"head -c 20M /dev/zero > {place}/fill", work)
    assert out["exit_code"] != 0 and "No space left on device" in out["output"], out


@needs_bwrap
@pytest.mark.parametrize(
    "loop",
    [
        'python3 -c \'import subprocess\nwhile True: subprocess.Popen(["sleep", "{s}"])\'',
        # dash: bash retries a refused fork for 15 s before it gives up (tests/e2e has it)
        "sh -c 'for i in $(seq 2000); do sleep {s} & done; wait'",
    ],
    ids=["python-popen", "sh-background"],
)
def test_a_spawn_loop_stops_at_the_limit_and_leaves_nothing(
    tmp_path: Path, work: Path, loop: str
) -> None:
    if ROOT and limits.pids_cgroup()[0] is None:
        pytest.skip(f"as root without a pids cgroup: {limits.pids_cgroup()[1]}")
    marker = unique_sleep()
    out = confined(sandbox(tmp_path, max_procs=40), loop.format(s=marker), work, 120)
    refused = ("Resource temporarily unavailable", "Cannot fork")  # Python's, dash's words
    assert out["exit_code"] != 0 and any(r in out["output"] for r in refused), out
    assert processes_with(marker) == []  # the call returned with nothing left running


@needs_bwrap
@pytest.mark.skipif(not ROOT, reason="as a user the kernel holds RLIMIT_NPROC")
def test_as_root_without_a_pids_cgroup_the_missing_limit_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "CGROUP_ROOT", str(tmp_path))  # no cgroup file system there
    limits.pids_cgroup.cache_clear()
    try:
        backend = SandboxBackend(hermes_home=tmp_path / "hermes")
        assert limits.process_limit_missing(DEFAULT).startswith(
            "no process limit: as root the kernel does not hold RLIMIT_NPROC"
        )
        assert backend.label() == "terminal: sandboxed, NO process limit"
        assert "NO process limit (root, no pids cgroup)" in backend.describe()
        assert "pids_cgroup" not in limits_request(DEFAULT)
    finally:
        limits.pids_cgroup.cache_clear()


def test_a_place_with_no_cgroup_file_system_has_no_pids_cgroup(tmp_path: Path) -> None:
    assert limits.find_pids_cgroup(str(tmp_path), {}) == (
        None,
        f"neither cgroup v1's {tmp_path}/pids nor cgroup v2's pids controller in {tmp_path}",
    )


@pytest.mark.skipif(not ROOT, reason="only root makes cgroups here")
def test_as_root_the_pids_cgroup_is_found_by_making_one() -> None:
    parent, why = limits.pids_cgroup()
    if parent is None:
        pytest.skip(why)
    assert os.path.isfile(os.path.join(parent, "cgroup.procs")) and not why
    assert not any(name.startswith("hermes-tui-probe-") for name in os.listdir(parent))
