"""The sandbox's file system, for real (bubblewrap): where a command may write (the session's
working directory and the write roots, whatever its `workdir`), what it sees of a home
(default-deny), what it cannot do as root, and what stays read-only inside the places it
may write (`.hermes`, the git dir's executable parts).

Each world lies outside /tmp (the sandbox replaces /tmp, so a place there would be missing
inside rather than refused), with a fake home as HOME.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import hostile
from workbench.builtins.terminal.terminal_tool import run_spawn
from workbench.core.backends import backend_from_config
from workbench.core.backends.sandbox import SandboxBackend, bwrap_status
from workbench.core.config import Config
from workbench.core.safety import secrets

pytestmark = pytest.mark.skipif(not bwrap_status()[0], reason="bubblewrap does not work here")

SECRET = "hostile-layout-secret-9d2f"


@dataclass
class World:
    root: Path
    home: Path
    work: Path
    hermes: Path

    def backend(self, **fields: object) -> SandboxBackend:
        return SandboxBackend(hermes_home=self.hermes, **fields)  # type: ignore[arg-type]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    root = hostile.scratch_root(tmp_path)
    w = World(root, root / "home", root / "work", root / "home" / ".hermes")
    for folder in (w.work, w.hermes):
        folder.mkdir(parents=True)
    (w.hermes / ".env").write_text(f"KEY={SECRET}\n")
    monkeypatch.setenv("HOME", str(w.home))
    monkeypatch.setattr(secrets, "_user_shown", ())
    yield w
    if root != tmp_path:
        shutil.rmtree(root, ignore_errors=True)


def _write(path: Path, text: str = f"{SECRET}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(backend: SandboxBackend, command: str, session: Path, workdir: Path | None = None):
    spawn = backend.shell(command, str(workdir or session), 30, session=str(session))
    assert spawn.release is not None
    result = json.loads(run_spawn(spawn, 30))
    return result["output"], result["exit_code"]


# -- 1. the writable places are the session's ------------------------------------------------


def test_a_workdir_is_where_a_command_starts_never_where_it_may_write(world: World) -> None:
    bashrc = _write(world.home / ".bashrc", "export PS1='$ '\n")
    notes = _write(world.home / "notes" / "n.txt", "mine\n")
    backend = world.backend()
    out, code = run(
        backend, "pwd; echo x >> .bashrc; echo x >> notes/n.txt", world.work, world.home
    )
    assert out.splitlines()[0] == str(world.home)
    assert out.count("Read-only file system") == 2 and code != 0
    assert bashrc.read_text() == "export PS1='$ '\n" and notes.read_text() == "mine\n"
    out, _ = run(backend, "pwd; touch escaped", world.work, Path("/"))
    assert out.startswith("/\n") and "Read-only file system" in out
    assert not Path("/escaped").exists()
    out, code = run(backend, "touch made", world.work, world.work)
    assert code == 0 and (world.work / "made").exists()


def test_a_workdir_the_sandbox_hides_is_refused(world: World) -> None:
    """And a session at `/`, which would make everything writable."""
    _write(world.home / ".ssh" / "id_rsa")
    from workbench.core.backends import BackendError

    with pytest.raises(BackendError, match="the whole file system writable"):
        world.backend().shell("ls", "/", 30, session="/")

    with pytest.raises(BackendError, match="which the sandbox hides"):
        world.backend().shell("ls", str(world.home / ".ssh"), 30, session=str(world.work))
    with pytest.raises(BackendError, match="which the sandbox hides"):
        world.backend().shell("ls", str(world.hermes), 30, session=str(world.hermes))


# -- 2. it holds as root -------------------------------------------------------------------


def test_the_sandbox_holds_as_root_too(world: World) -> None:
    """No capability and a user namespace of its own: what it hides stays hidden, mounts
    and the clock cannot be changed, /proc/sys is read-only (the same value written back,
    so a failure of this test changes nothing)."""
    out, _ = run(
        world.backend(),
        f"grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; umount -l {world.hermes}; "
        f"cat {world.hermes}/.env; mount -o remount,rw /; date -s @0; mknod dev c 1 3; "
        "v=$(cat /proc/sys/kernel/core_uses_pid); echo $v > /proc/sys/kernel/core_uses_pid; "
        "cat /proc/keys; echo end",
        world.work,
    )
    assert "CapEff:\t0000000000000000" in out and "NoNewPrivs:\t1" in out
    assert SECRET not in out and not (world.work / "dev").exists()
    assert "/proc/sys/kernel/core_uses_pid: Read-only file system" in out
    assert "cannot set date: Operation not permitted" in out
    assert out.endswith("end\n")


def test_the_probe_checks_the_options_every_command_gets(tmp_path: Path) -> None:
    """A bubblewrap that cannot drop capabilities (or make a user namespace) is not one the
    sandbox can use: it is said, and commands are refused rather than run with them."""
    from workbench.core.backends.sandbox import _probe

    real = shutil.which("bwrap")
    assert real is not None
    fake = tmp_path / "bwrap"
    fake.write_text(
        f'#!/bin/sh\nfor a; do [ "$a" = --cap-drop ] && {{ echo "Unknown option" >&2; exit 1; }}; '
        f'done\nexec {real} "$@"\n'
    )
    fake.chmod(0o755)
    works, why = _probe(str(fake))
    assert not works and "Unknown option" in why


# -- 3. the home: default-deny -------------------------------------------------------------


def test_the_home_shows_only_what_commands_need(world: World) -> None:
    home = world.home
    _write(home / ".bashrc", "alias ll='ls -l'\n")
    _write(home / ".gitconfig", "[user]\n  name = t\n")
    secrets_ = [
        _write(home / ".bash_history"),
        _write(home / ".my.cnf"),
        _write(home / ".env"),
        _write(home / ".zz-unknown-tool" / "token"),
        _write(home / ".cargo" / "credentials.toml"),
        _write(home / ".config" / "git" / "credentials"),
        _write(home / ".config" / "rclone" / "rclone.conf"),
        _write(home / ".cache" / "huggingface" / "token"),
        _write(home / ".terraform.d" / "credentials.tfrc.json"),
        _write(home / ".local" / "share" / "zz-app" / "session"),
    ]
    _write(home / ".cargo" / "config.toml", "[build]\n")
    _write(home / ".config" / "git" / "ignore", "*.o\n")
    _write(home / ".local" / "bin" / "tool", "#!/bin/sh\n")
    _write(home / "Documents" / "plan.txt", "plan\n")
    cats = " ".join(f"'{p}'" for p in secrets_)
    out, _ = run(
        world.backend(),
        f"ls -A ~ ~/.config ~/.local ~/.local/share; cat {cats}; cat ~/.bashrc ~/.gitconfig "
        "~/.cargo/config.toml ~/.config/git/ignore ~/Documents/plan.txt; echo end",
        world.work,
    )
    assert SECRET not in out, out
    listed = out.split("cat:")[0]
    for hidden in (".bash_history", ".my.cnf", ".env", ".zz-unknown-tool", ".terraform.d",
                   ".hermes", "rclone", "zz-app"):  # fmt: skip
        assert hidden not in listed, hidden
    for shown in ("alias ll", "name = t", "[build]", "*.o", "plan\n"):
        assert shown in out
    assert out.endswith("end\n")


def test_nothing_new_at_the_top_of_a_home_and_its_entries_read_only(world: World) -> None:
    doc = _write(world.home / "Documents" / "plan.txt", "plan\n")
    (world.home / ".config").mkdir()
    out, _ = run(
        world.backend(),
        "mkdir ~/.ssh; touch ~/new ~/.config/new; echo x > ~/Documents/plan.txt",
        world.work,
    )
    assert out.count("Read-only file system") == 4, out
    assert doc.read_text() == "plan\n" and not (world.home / ".ssh").exists()


def test_with_the_home_as_the_working_directory_its_entries_are_writable(world: World) -> None:
    doc = _write(world.home / "Documents" / "plan.txt", "plan\n")
    bashrc = _write(world.home / ".bashrc", "alias ll='ls -l'\n")
    out, _ = run(
        world.backend(),
        "echo more >> Documents/plan.txt; echo x >> .bashrc; touch new; cat .hermes/.env",
        world.home,
    )
    assert doc.read_text() == "plan\nmore\n"
    assert bashrc.read_text() == "alias ll='ls -l'\n" and not (world.home / "new").exists()
    assert out.count("Read-only file system") == 2 and SECRET not in out


def test_a_project_in_a_shown_dot_folder_is_writable(world: World) -> None:
    project = world.home / ".cache" / "project"
    project.mkdir(parents=True)
    other = _write(world.home / ".cache" / "other.txt", "other\n")
    out, _ = run(world.backend(), "echo x > made.txt; echo y > ../other.txt", project)
    assert (project / "made.txt").read_text() == "x\n"
    assert other.read_text() == "other\n" and "Read-only file system" in out


def test_links_are_made_again_never_bound_through(world: World) -> None:
    """A shown link stays a link; one that leads into a hidden place leads nowhere; a hidden
    dot entry that links elsewhere is hidden where it leads."""
    dotfiles = world.home / "dotfiles"
    _write(dotfiles / "bashrc", "from dotfiles\n")
    _write(dotfiles / "ssh" / "id_rsa")
    _write(world.home / ".vault" / "token")
    (world.home / ".bashrc").symlink_to("dotfiles/bashrc")
    (world.home / ".ssh").symlink_to("dotfiles/ssh")
    (world.home / "keys").symlink_to(".vault")
    out, _ = run(
        world.backend(),
        "readlink ~/.bashrc; cat ~/.bashrc; cat ~/keys/token ~/dotfiles/ssh/id_rsa; "
        "ls -A ~/dotfiles/ssh; echo end",
        world.work,
    )
    assert out.startswith("dotfiles/bashrc\nfrom dotfiles\n")
    assert SECRET not in out and out.endswith("end\n")


def test_a_shown_link_into_a_writable_place_holds_what_it_leads_to(world: World) -> None:
    dotfiles = world.home / "dotfiles"
    bashrc = _write(dotfiles / "bashrc", "mine\n")
    (world.home / ".bashrc").symlink_to("dotfiles/bashrc")
    (world.home / ".profile").symlink_to("dotfiles/profile")  # nothing there yet
    from workbench.core.backends import BackendError

    with pytest.raises(BackendError, match="profile, which does not exist"):
        world.backend().shell("true", str(dotfiles), 30, session=str(dotfiles))
    (world.home / ".profile").unlink()
    out, _ = run(world.backend(), "echo evil >> bashrc; echo ok > other", dotfiles)
    assert bashrc.read_text() == "mine\n" and "Read-only file system" in out
    assert (dotfiles / "other").read_text() == "ok\n"


def test_home_allow_shows_more_and_bubblewrap_hide_hides_more(world: World) -> None:
    _write(world.home / ".config" / "nvim" / "init.lua", "set number\n")
    _write(world.home / ".zz-tool" / "settings", "zz\n")
    _write(world.home / "Documents" / "keys" / "k")
    config = Config(
        world.root / "config.yaml",
        {
            "terminal": {
                "home_allow": [".config/nvim", ".ssh"],
                "bubblewrap_home_allow": ".zz-tool",
                "bubblewrap_hide": ["~/Documents/keys"],
            }
        },
    )
    backend = backend_from_config(config, world.hermes)
    assert isinstance(backend, SandboxBackend)
    assert backend.problems == [
        "terminal.home_allow: '.ssh' is a credential store; it stays hidden"
    ]
    out, _ = run(
        backend, "cat ~/.config/nvim/init.lua ~/.zz-tool/settings ~/Documents/keys/k", world.work
    )
    assert "set number" in out and "zz\n" in out and SECRET not in out
    assert str(world.home / "Documents" / "keys") in backend.hidden()


def test_the_file_tools_are_told_what_commands_cannot_see(world: World) -> None:
    history = _write(world.home / ".bash_history")
    token = _write(world.home / ".cargo" / "credentials.toml")
    _write(world.home / ".bashrc", "x\n")
    hidden = world.backend().hidden()
    assert str(history) in hidden and str(token) in hidden and str(world.hermes) in hidden
    assert str(world.home / ".bashrc") not in hidden


# -- 4. nothing written inside runs later unconfined ----------------------------------------


DIFF = """\
--- /dev/null
+++ b/.hermes/approvals.yaml
@@ -0,0 +1,2 @@
+rules:
+  - {action: allow, command_prefix: rm}
"""


@pytest.mark.parametrize(
    "command",
    [
        "mkdir -p .hermes/plugins/evil",
        "patch -p1 < d.diff",
        "git apply d.diff",
        "mkdir -p x && echo 'rules: []' > x/approvals.yaml && cp -r x .hermes",
        "mkdir x && ln -s x .hermes",
        "rmdir .hermes && mkdir .hermes && echo 'rules: []' > .hermes/approvals.yaml",
        "mv .hermes gone",
    ],
)
def test_a_command_cannot_create_the_projects_hermes_folder(world: World, command: str) -> None:
    _write(world.work / "d.diff", DIFF)
    subprocess.run(["git", "init", "-q"], cwd=world.work, check=True)
    out, code = run(world.backend(), command, world.work)
    assert code != 0, out
    assert not (world.work / ".hermes").exists()  # and the placeholder is gone again


def test_an_existing_hermes_folder_stays_as_it_is(world: World) -> None:
    rules = _write(world.work / ".hermes" / "approvals.yaml", "rules: []\n")
    out, _ = run(world.backend(), "echo x >> .hermes/approvals.yaml; rm -rf .hermes", world.work)
    assert rules.read_text() == "rules: []\n" and "Read-only file system" in out


def test_a_hermes_link_refuses_the_command(world: World, tmp_path: Path) -> None:
    (world.root / "rules").mkdir()
    (world.work / ".hermes").symlink_to(world.root / "rules")
    from workbench.core.backends import BackendError

    with pytest.raises(BackendError, match="cannot hold read-only"):
        world.backend().shell("true", str(world.work), 30, session=str(world.work))


GIT = "git -c user.name=t -c user.email=t@example.org"
EVERYDAY = (
    f"echo a > a.txt && {GIT} add a.txt && {GIT} commit -qm a && git status --short && "
    f"echo b >> a.txt && git diff --stat && {GIT} stash -q && git stash list && "
    f"{GIT} stash pop -q && git branch topic && git checkout -q topic && "
    f"{GIT} commit -qam b && git log --oneline | wc -l && git checkout -q - && "
    f"echo u > untracked && {GIT} stash -u -q && {GIT} stash pop -q && git clean -fdq && "
    "echo everyday-ok"
)


def test_git_works_inside_and_its_config_and_hooks_stay_read_only(world: World) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=world.work, check=True)
    config = (world.work / ".git" / "config").read_text()
    out, _ = run(world.backend(), EVERYDAY, world.work)
    assert out.endswith("everyday-ok\n"), out
    out, _ = run(
        world.backend(),
        "git remote add origin https://example.org/x.git; git config core.hooksPath h; "
        "echo 'rm -rf ~' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
        "mv .git/hooks .git/h; mv .git .git.old; echo end",
        world.work,
    )
    assert "could not write config file .git/config" in out
    assert "Read-only file system" in out and out.endswith("end\n")
    assert (world.work / ".git" / "config").read_text() == config
    assert not (world.work / ".git" / "hooks" / "pre-commit").exists()


def test_a_dot_git_file_cannot_be_pointed_elsewhere(world: World) -> None:
    main = world.root / "main"
    main.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=main, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty",
         "-m", "x"], cwd=main, check=True,
    )  # fmt: skip
    shutil.rmtree(world.work)
    subprocess.run(["git", "worktree", "add", "-q", str(world.work)], cwd=main, check=True)
    pointer = (world.work / ".git").read_text()
    out, _ = run(
        world.backend(), "echo 'gitdir: /elsewhere' > .git; git status -s; echo end", world.work
    )
    assert (world.work / ".git").read_text() == pointer and "Read-only file system" in out
