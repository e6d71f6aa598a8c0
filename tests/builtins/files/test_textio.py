"""The bounded line reader against Python's own splitting, on real files with real holes."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from workbench.builtins.files.textio import LineReader, NotRegularFile, open_regular, read_bounded


def expected_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines and lines[-1] == b"" else lines


@pytest.mark.parametrize("seed", range(20))
def test_lines_cut_and_counted_exactly_as_split_would(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for trial in range(40):
        pieces = [b"", b"a", b"abc", b"x" * 30, b"\r", "é".encode()]
        data = b"".join(
            rng.choice(pieces) + (b"\n" if rng.random() < 0.85 else b"")
            for _ in range(rng.randint(0, 30))
        )
        path = tmp_path / f"f{trial}"
        path.write_bytes(data)
        if rng.random() < 0.4:  # a real hole, maybe followed by more data
            hole = rng.choice([4096, 10_000, 1 << 16, 1 << 20])
            os.truncate(path, len(data) + hole)
            data += b"\0" * hole
            if rng.random() < 0.5:
                with path.open("ab") as handle:
                    handle.write(b"tail\nmore")
                data += b"tail\nmore"
        cap, chunk = rng.randint(1, 10), rng.choice([1, 3, 8, 4096])
        expected = expected_lines(data)
        stop = rng.randint(0, len(expected))
        fd = os.open(path, os.O_RDONLY)
        try:
            reader = LineReader(fd, cap, chunk)
            got = []
            for item in reader if stop else ():
                got.append(item)
                if len(got) >= stop:
                    break
            rest = reader.count_rest()
        finally:
            os.close(fd)
        assert got == [(line[:cap], len(line) > cap) for line in expected[:stop]]
        assert len(got) + rest == len(expected)


def test_a_long_line_of_real_data_holds_only_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    with path.open("wb") as handle:
        handle.write(b"first\n")
        for _ in range(32):  # 32 MB written for real: no hole to skip
            handle.write(b"y" * (1 << 20))
        handle.write(b"\nlast\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = list(LineReader(fd, 100, chunk=1 << 16))
    finally:
        os.close(fd)
    assert lines == [(b"first", False), (b"y" * 100, True), (b"last", False)]


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    for path, kind in [(tmp_path / "fifo", "a FIFO"), (Path("/dev/zero"), "a character device")]:
        with pytest.raises(NotRegularFile, match=kind):
            open_regular(path)
        with pytest.raises(NotRegularFile, match=kind):
            read_bounded(path, 100)


def test_read_bounded_refuses_what_is_over_its_limit(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 101)
    with pytest.raises(OSError, match="too large"):
        read_bounded(tmp_path / "f", 100)
    assert read_bounded(tmp_path / "f", 101) == b"x" * 101
