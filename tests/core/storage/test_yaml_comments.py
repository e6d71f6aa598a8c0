"""A comment of config.yaml stays above the key it stood above, whatever a save changes."""

from __future__ import annotations

from pathlib import Path

from workbench.core.config import set_path, update_config

BLOCK_LIST = """\
platform_toolsets:
  cli:
    - hermes-cli
  # the presets are in the example config

# ==== Terminal
terminal:
  backend: local
"""


def saved(tmp_path: Path, text: str, *changes: tuple[str, object]) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)

    def mutate(doc: object) -> None:
        for dotted, value in changes:
            set_path(doc, dotted, value)

    update_config(mutate, path)
    return path.read_text()


def test_replacing_a_block_list_keeps_the_comments_below_it(tmp_path: Path) -> None:
    # ruamel kept these lines in the list's last item: replaced, they were gone
    out = saved(tmp_path, BLOCK_LIST, ("platform_toolsets.cli", ["file", "todo"]))
    assert out == (
        "platform_toolsets:\n  cli:\n  - file\n  - todo\n"
        "  # the presets are in the example config\n\n# ==== Terminal\nterminal:\n"
        "  backend: local\n"
    )


def test_a_key_added_to_a_section_goes_above_the_next_sections_comments(
    tmp_path: Path,
) -> None:
    text = "agent:\n  max_turns: 90\n\n# ==== Gateway\ngateway:\n  port: 1\n"
    out = saved(tmp_path, text, ("agent.disabled_toolsets", ["todo"]))
    assert out == (
        "agent:\n  max_turns: 90\n  disabled_toolsets:\n  - todo\n\n# ==== Gateway\n"
        "gateway:\n  port: 1\n"
    )


def test_a_list_keeps_its_style_and_its_items_comments(tmp_path: Path) -> None:
    text = (
        "platform_toolsets:\n  cli: [hermes-cli]  # the preset\n"
        "allow:\n  - ls   # read only\n  # - rm (never)\n  - pwd\nend: 1\n"
    )
    out = saved(
        tmp_path,
        text,
        ("platform_toolsets.cli", ["hermes-cli", "todo"]),
        ("allow", ["git", "ls"]),
    )
    assert "  cli: [hermes-cli, todo] # the preset\n" in out  # still one line, its comment
    assert "allow:\n- git\n- ls     # read only\n  # - rm (never)\nend: 1\n" in out


def test_a_dropped_items_comment_lines_stay_in_the_list(tmp_path: Path) -> None:
    text = "allow:\n  - rm\n  # keep this note\n  - ls\nend: 1\n"
    out = saved(tmp_path, text, ("allow", ["ls"]))
    assert out == "allow:\n- ls\n  # keep this note\nend: 1\n"


def test_the_files_last_comments_stay_last_and_the_last_sections_stay_in_it(
    tmp_path: Path,
) -> None:
    text = "display:\n  compact: false\n  # skin: default\n\n# the end of the file\n"
    out = saved(tmp_path, text, ("tools.disabled", ["read_file"]))
    assert out == (
        "display:\n  compact: false\n  # skin: default\ntools:\n  disabled:\n  - read_file\n"
        "\n# the end of the file\n"
    )
