"""One definition of what is secret: every dot entry of a home unless shown, credential
stores whatever is shown, hermes-tui's state, `.env` files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.core.safety import secrets


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home}/.zz-tool/bin:/usr/bin:/bin")
    secrets._homes.cache_clear()
    yield home
    secrets.show_also([])
    secrets._homes.cache_clear()


@pytest.mark.parametrize(
    "rel",
    [
        ".cargo/credentials.toml",
        ".config/git/credentials",
        ".bash_history",
        ".config/rclone/rclone.conf",
        ".my.cnf",
        ".cache/huggingface/token",
        ".terraform.d/credentials.tfrc.json",
        ".vault-token",
        ".env",
        ".ssh/id_rsa",
        ".zz-unknown-tool/token",  # no list names it: hidden by default
        ".config/some-app/auth.json",
        ".local/share/some-app/db",
    ],
)
def test_what_no_list_names_is_secret_by_default(home: Path, rel: str) -> None:
    assert secrets.secret_place(str(home / rel))


@pytest.mark.parametrize(
    "rel",
    [
        ".bashrc",
        ".gitconfig",
        ".cache/pip/x",
        ".cargo/bin/cargo",
        ".config/git/config",
        ".local/bin/tool",
        ".zz-tool/bin/x",
        "project/src/main.py",
    ],
)
def test_what_commands_need_is_shown(home: Path, rel: str) -> None:
    assert secrets.secret_place(str(home / rel)) is None


def test_a_link_to_a_secret_is_the_secret(home: Path, tmp_path: Path) -> None:
    (home / ".vault-token").write_text("t")
    link = tmp_path / "notes.txt"
    link.symlink_to(home / ".vault-token")
    assert secrets.secret_place(str(link))


def test_the_user_shows_a_unit_but_never_a_store(home: Path) -> None:
    assert secrets.secret_place(str(home / ".config/nvim/init.lua"))
    refused = secrets.show_also([".config/nvim", ".ssh", "~/.aws", ".config", "Documents"])
    assert secrets.secret_place(str(home / ".config/nvim/init.lua")) is None
    assert secrets.secret_place(str(home / ".ssh/id_rsa"))
    assert len(refused) == 4, refused


def test_the_account_home_counts_besides_home(home: Path) -> None:
    account = secrets._account_home()
    if not account or account == str(home):
        pytest.skip("no account home apart from $HOME")
    assert secrets.secret_place(os.path.join(account, ".bash_history"))


def test_state_and_system_secrets(home: Path, tmp_path: Path) -> None:
    state = tmp_path / "hermes"
    assert secrets.secret_place(str(state / "config.yaml"), state=[str(state)])
    assert secrets.secret_place("/etc/shadow")
    assert secrets.secret_place("/srv/app/.env.production")
    assert secrets.secret_place("/srv/app/.env.example") is None


def test_folders_that_hold_secrets(home: Path, tmp_path: Path) -> None:
    (home / ".cache" / "huggingface").mkdir(parents=True)
    (home / ".cache" / "huggingface" / "token").write_text("hf")
    (home / "project").mkdir()
    assert secrets.holds_secrets("/")
    assert secrets.holds_secrets(str(home))
    assert secrets.holds_secrets(str(home / ".cache"))
    assert not secrets.holds_secrets(str(home / "project"))
    assert not secrets.holds_secrets(str(tmp_path / "elsewhere"))


def test_a_default_deny_folder_holding_a_hidden_unit_holds_secrets(home: Path) -> None:
    (home / ".config" / "git").mkdir(parents=True)
    assert not secrets.holds_secrets(str(home / ".config"))  # only a shown unit in it
    (home / ".config" / "some-app").mkdir()
    assert secrets.holds_secrets(str(home / ".config"))
    (home / ".local" / "share" / "notes-app").mkdir(parents=True)
    assert secrets.holds_secrets(str(home / ".local"))


def test_the_secret_places_of_a_home(home: Path) -> None:
    for rel in (".bashrc", ".cargo/bin", ".cargo/credentials.toml", ".config/git/config",
                ".config/rclone/rclone.conf", ".local/share/keyrings/k", ".vault-token",
                "Documents/x"):  # fmt: skip
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).touch()
    found = sorted(os.path.relpath(p, home) for p in secrets.secret_places(str(home)))
    assert found == [
        ".cargo/credentials.toml",
        ".config/rclone",
        ".local/share/keyrings",
        ".vault-token",
    ]
    assert all(store.startswith(".") for store in secrets.CREDENTIAL_STORES)  # the fast path's


def test_what_the_user_hides_is_secret_too(home: Path, tmp_path: Path) -> None:
    keys = tmp_path / "Documents" / "keys"
    keys.mkdir(parents=True)
    assert secrets.secret_place(str(keys / "k")) is None
    secrets.hide_also([str(keys)])
    try:
        assert "bubblewrap_hide" in (secrets.secret_place(str(keys / "k")) or "")
        assert secrets.holds_secrets(str(tmp_path / "Documents"))
    finally:
        secrets.hide_also([])


def test_where_a_hidden_entry_leads_is_secret(home: Path, tmp_path: Path) -> None:
    """`~/.password-store -> /data/pass`: a command reading the target reads the store."""
    store = tmp_path / "data" / "pass"
    store.mkdir(parents=True)
    (home / ".password-store").symlink_to(store)
    (home / ".zz-usr").symlink_to("/usr")  # too shallow: the system stays readable
    (home / ".bashrc").symlink_to(tmp_path / "dotfiles-bashrc")  # shown: not hidden
    secrets._linked.cache_clear()
    assert secrets.secret_place(str(store / "github.gpg"))
    assert secrets.secret_place("/usr/bin/env") is None
    assert secrets.secret_place(str(tmp_path / "dotfiles-bashrc")) is None
    assert str(store) in secrets.secret_places(str(home))
