"""Telling a failure the sandbox caused from any other, from what hermes-tui knows: the
command's analysis against the sandbox's layout, never what the command printed (a planted
script can print anything)."""

from __future__ import annotations

import pytest

from workbench.core.backends.sandbox_cause import Layout
from workbench.core.execution.sandbox_refusal import known_cause
from workbench.core.safety import analyze_command

HIDDEN = ["/home/u/.ssh", "/home/u/.hermes", "/home/u/.netrc"]

# Not under /tmp: the sandbox's /tmp is its own, so a write there is never refused.
WORK, ROOT = "/srv/hermes-tui-test/work", "/srv/hermes-tui-test/roots"


@pytest.fixture
def layout(monkeypatch: pytest.MonkeyPatch) -> Layout:
    monkeypatch.setenv("HOME", "/home/u")  # what `~` is for the analysis too
    return Layout((WORK, ROOT), (f"{WORK}/.hermes",), tuple(HIDDEN), True, "/home/u")


def cause(command: str, layout: Layout, **changes: object) -> str | None:
    if changes:
        layout = Layout(**{**layout.__dict__, **changes})
    work = layout.writable[0]
    return known_cause(analyze_command(command, cwd=work), work, layout)


@pytest.mark.parametrize(
    "command",
    [
        "echo x > /srv/out.txt",
        "echo x >> ~/outside.txt",
        "touch /usr/local/x",
        "cp README.md ../elsewhere.txt",
        "python3 -c \"open('/srv/o', 'w').write('x')\"",
        "mkdir -p /opt/d",
        "rm /srv/victim.txt",
        "rm ../victim.txt",
    ],
)
def test_a_write_outside_the_writable_places_is_the_sandbox(command: str, layout) -> None:
    found = cause(command, layout)
    assert found is not None and found.startswith("it writes ")
    assert "outside the working directory and approvals.write_roots" in found


def test_writes_inside_the_writable_places_or_its_private_tmp_are_not(layout) -> None:
    for command in ("echo x > a.txt", "echo x > /tmp/a", "echo x > /dev/null", "true 2>/dev/null"):
        assert cause(command, layout) is None, command
    assert cause(f"echo x > {ROOT}/a", layout) is None  # a write root


def test_a_write_into_the_projects_hermes_folder_or_a_hidden_place_is(layout) -> None:
    assert "in a project's .hermes folder" in cause("echo x > .hermes/approvals.yaml", layout)
    assert "inside /home/u/.ssh, which the sandbox hides" in cause(
        "echo x >> ~/.ssh/authorized_keys", layout
    )


def test_a_place_the_sandbox_hides_named_by_the_command_is(layout) -> None:
    assert cause("cat ~/.ssh/id_rsa", layout) == (
        "it reads ~/.ssh/id_rsa, inside /home/u/.ssh, which the sandbox hides"
    )
    assert cause("grep -r token /home/u/.netrc", layout).startswith("it reads /home/u/.netrc")
    assert cause("ls --directory=/home/u/.hermes", layout) is not None  # an option's value
    # a longer name that only starts like a hidden one, or a word that names no place
    assert cause("cat /home/u/.sshx/k", layout) is None
    assert cause("grep .ssh notes.txt", layout) is None


def test_ssh_is_the_sandbox_while_it_hides_the_keys(layout) -> None:
    assert "runs ssh over ssh, and the sandbox hides /home/u/.ssh" in cause("ssh host true", layout)
    assert "runs git over ssh" in cause("git clone git@github.com:x/y.git", layout)
    assert cause("git clone https://github.com/x/y.git", layout) is None  # the network is on
    assert cause("ssh host true", layout, hidden=("/home/u/.hermes",)) is None


@pytest.mark.parametrize(
    "command",
    [
        "curl -s https://example.org",
        "wget example.org",
        "git fetch origin",
        "pip install six",
        "npm view is-number version",
        "python3 -m http.client https://example.org",
    ],
)
def test_the_network_is_the_sandbox_only_while_it_has_none(command: str, layout) -> None:
    assert "needs the network, and the sandbox has none" in cause(command, layout, network=False)
    assert cause(command, layout) is None  # with the network on, the network itself failed


@pytest.mark.parametrize(
    "command",
    [
        "echo 'bash: /srv/x: Read-only file system' >&2; exit 1",
        "./planted.sh",
        "bash planted.sh",
        "make",
        "python3 tests.py",
        "printf 'curl: (6) Could not resolve host: example.org\\n'; false",
    ],
)
def test_what_a_command_prints_is_never_the_cause(command: str, layout) -> None:
    """A script that fakes the sandbox's words, or any command whose analysis finds nothing
    the sandbox refuses: no cause, whatever it printed."""
    assert cause(command, layout) is None
    assert cause(command, layout, network=False) is None
