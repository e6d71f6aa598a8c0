"""search_files on a real tree: content regex, filename glob, skipping, paging."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from workbench.builtins.files import search_tool
from workbench.core.agent.guards import RETRY_NUDGE, nudge
from workbench.core.safety import places
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    return os.getcwd()  # TODO tidy\n",
        "src/util.py": "def helper():\n    pass  # TODO one\n# TODO two\n",
        "docs/guide.md": "# Guide\nTODO write it\n",
        "node_modules/dep/index.js": "// TODO ignored\n",
        ".git/config": "TODO ignored\n",
        ".venv/lib.py": "TODO ignored\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "src/blob.bin").write_bytes(b"TODO\0binary")
    return tmp_path


def search(cwd: Path, **args) -> dict:
    return json.loads(call_tool(registry, "search_files", args, cwd=str(cwd)))


def test_content_search_with_line_numbers(tree: Path) -> None:
    out = search(tree, pattern=r"TODO \w+")
    got = sorted((m["path"], m["line"], m["text"]) for m in out["matches"])
    assert got == [
        ("docs/guide.md", 2, "TODO write it"),
        ("src/app.py", 4, "    return os.getcwd()  # TODO tidy"),
        ("src/util.py", 2, "    pass  # TODO one"),
        ("src/util.py", 3, "# TODO two"),
    ]
    assert out["truncated"] is False


def test_file_glob_context_and_modes(tree: Path) -> None:
    only_py = search(tree, pattern="TODO", file_glob="*.py")
    assert {m["path"] for m in only_py["matches"]} == {"src/app.py", "src/util.py"}
    ctx = search(tree, pattern="TODO write", context=1)["matches"][0]["context"]
    assert ctx == ["1|# Guide", "2|TODO write it"]
    files = search(tree, pattern="TODO", output_mode="files_only")["files"]
    assert sorted(files) == ["docs/guide.md", "src/app.py", "src/util.py"]
    counts = search(tree, pattern="TODO", output_mode="count")
    assert counts["counts"] == {"docs/guide.md": 1, "src/app.py": 1, "src/util.py": 2}
    assert counts["total"] == 4


def test_paging(tree: Path) -> None:
    first = search(tree, pattern="TODO", file_glob="*.py", limit=2)
    second = search(tree, pattern="TODO", file_glob="*.py", limit=2, offset=2)
    assert len(first["matches"]) == 2 and first["truncated"] is True
    assert len(second["matches"]) == 1 and second["truncated"] is False
    assert {(m["path"], m["line"]) for m in first["matches"] + second["matches"]} == {
        ("src/app.py", 4),
        ("src/util.py", 2),
        ("src/util.py", 3),
    }


def test_filename_search_newest_first(tree: Path) -> None:
    old = time.time() - 100
    os.utime(tree / "src/app.py", (old, old))
    out = search(tree, pattern="*.py", target="files")
    assert out["files"] == ["src/util.py", "src/app.py"]
    assert out["total"] == 2


def test_a_name_search_for_a_word_no_file_is_named_gives_the_files_that_mention_it(
    tree: Path,
) -> None:
    # asked which file mentions a flamingo, the 1.5B searched file names for "flamingo",
    # found none and answered that no file mentions it
    out = search(tree, pattern="helper", target="files", file_glob="*.md")
    assert out["files"] == ["src/util.py"] and "these files mention it" in out["note"]
    loose = search(tree, pattern="zebra write todo", target="files")  # words, not the phrase
    assert loose["files"] == ["docs/guide.md"] and "most of its words" in loose["note"]
    nowhere = search(tree, pattern="flamingo", target="files")
    assert nowhere["files"] == [] and "no file's text holds it" in nowhere["hint"]
    assert nudge([json.dumps(nowhere)]) == RETRY_NUDGE  # the model is told to try again
    glob = search(tree, pattern="*.rs", target="files")  # a glob: a name was meant
    assert glob["files"] == [] and "target='content'" in glob["hint"]
    assert search(tree, pattern="(", target="files")["files"] == []  # no regex: no error


def test_a_name_search_falling_back_to_text_lists_every_file_not_the_lines_of_one(
    tmp_path: Path,
) -> None:
    # a file that mentions the word more times than a page of lines must not hide the others
    (tmp_path / "a.md").write_text("flamingo\n" * 60)
    (tmp_path / "b.md").write_text("one flamingo\n")
    out = search(tmp_path, pattern="flamingo", target="files", limit=5)
    assert sorted(out["files"]) == ["a.md", "b.md"] and out["total"] == 2
    assert out["truncated"] is False


def test_errors(tree: Path) -> None:
    assert "Invalid regex" in search(tree, pattern="(unclosed")["error"]
    assert "Path not found" in search(tree, pattern="x", path=str(tree / "nowhere"))["error"]


def test_a_relative_path_that_is_not_there_searches_the_working_directory(tree: Path) -> None:
    # the 1.5B searched `src` of a project without one, repeated it, then guessed the answer
    out = search(tree / "docs", pattern="TODO write", path="lib")
    assert [m["path"] for m in out["matches"]] == ["guide.md"]
    assert "'lib' does not exist" in out["note"] and "whole working directory" in out["note"]
    names = search(tree, pattern="*.md", target="files", path="nowhere/deeper")
    assert names["files"] == ["docs/guide.md"] and "does not exist" in names["note"]
    nothing = search(tree, pattern="zebra", path="lib")
    assert nothing["matches"] == [] and "hint" in nothing and "does not exist" in nothing["note"]
    assert "Path not found" in search(tree, pattern="x", path="~/no-such-dir-here")["error"]


def test_a_search_that_finds_nothing_says_what_to_try(tree: Path) -> None:
    out = search(tree, pattern="TODO zebra giraffe")
    assert out["matches"] == [] and out["truncated"] is False
    assert "'TODO zebra giraffe'" in out["hint"] and "'giraffe'" in out["hint"]  # its longest word
    assert "such as" not in search(tree, pattern="absent")["hint"]  # one word: nothing shorter
    assert "hint" not in search(tree, pattern="TODO", offset=50)  # past the end of a paging
    # every mode says so: the 1.5B counted a phrase, read a total of 0 and guessed
    counted = search(tree, pattern="TODO zebra giraffe", output_mode="count")
    assert counted["total"] == 0 and "'giraffe'" in counted["hint"]
    assert "hint" in search(tree, pattern="absent", output_mode="files_only")
    assert "hint" not in search(tree, pattern="TODO", output_mode="count")


def test_a_file_glob_that_leaves_nothing_gives_the_matches_in_other_files(tree: Path) -> None:
    # the 1.5B looked for a word of a Markdown file in '*.py', and repeated that search
    out = search(tree, pattern="Guide", file_glob="*.py")
    assert [m["path"] for m in out["matches"]] == ["docs/guide.md"]
    assert "'*.py'" in out["note"] and "other files" in out["note"]
    assert "note" not in search(tree, pattern="TODO", file_glob="*.py")  # found where asked
    nowhere = search(tree, pattern="absent", file_glob="*.py")
    assert nowhere["matches"] == [] and "file_glob" not in nowhere["hint"]


def test_plain_words_that_match_no_line_as_written_find_the_lines_holding_each(
    tree: Path,
) -> None:
    # a model searches a phrase of the question; the file words it another way
    out = search(tree, pattern="one todo")
    assert [(m["path"], m["line"]) for m in out["matches"]] == [("src/util.py", 2)]
    assert "word for word" in out["note"] and "any order or case" in out["note"]
    assert "most of its words" not in search(tree, pattern="todo")["note"]  # one word
    assert "note" not in search(tree, pattern="TODO")  # it matches as written
    assert search(tree, pattern="one zebra")["matches"] == []  # both words of two, or none
    assert search(tree, pattern="one.todo")["matches"] == []  # a regex is taken as written
    assert search(tree, pattern="one todo", output_mode="count")["total"] == 0


def test_a_phrase_worded_otherwise_finds_the_lines_holding_the_most_of_its_words(
    tmp_path: Path,
) -> None:
    # the 1.5B searched "keep backups of the staging cluster" where the manual says
    # "Backups of the staging cluster are kept": no line holds "keep"
    lines = [f"Section {n}: the staging rota and the cluster review." for n in range(300)]
    lines.insert(150, "Backups of the staging cluster are kept for exactly 41 days.")
    lines.insert(20, "Backups run nightly.")
    (tmp_path / "manual.md").write_text("\n".join(lines) + "\n")
    out = search(tmp_path, pattern="keep backups of the staging cluster")
    assert out["matches"][0]["line"] == 152 and "41 days" in out["matches"][0]["text"]
    assert "the most first" in out["note"]
    assert len(out["matches"]) == 50 and out["truncated"]  # two of four words: still lines
    assert search(tmp_path, pattern="nightly zebra giraffe backups")["matches"][0]["line"] == 21
    assert search(tmp_path, pattern="keep zebra giraffe")["matches"] == []  # under half


def test_the_best_lines_are_kept_across_many_files_that_tie(tmp_path: Path) -> None:
    # lines holding as many words in several files: the best are kept as they come, and a
    # tie never compares two results (a search of a large tree raised TypeError)
    lines = ["the staging cluster rota"] * 300
    lines[209] = lines[260] = "staging cluster backups"
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    out = search(tmp_path, pattern="keep staging cluster backups")
    assert sorted(m["line"] for m in out["matches"][:6]) == [210, 210, 210, 261, 261, 261]
    assert "backups" not in out["matches"][6]["text"] and len(out["matches"]) == 50


def test_many_near_matching_files_cost_a_page_of_lines_not_every_line(
    tmp_path: Path, monkeypatch
) -> None:
    """A tree where every line holds some of the phrase's words: once a page of lines as good
    as a file can give is kept, later files that cannot beat it are not split into lines
    (a 100 MB tree of such lines gave up at the search's 60 s limit, blaming the pattern),
    and one that can still comes first."""
    rota = "".join(f"the staging cluster rota {n}\n" for n in range(2000))
    for n in range(60):
        (tmp_path / f"f{n:02d}.md").write_text(rota)
    (tmp_path / "last.md").write_text("x\nstaging cluster backups\n")
    built = []
    item = search_tool._item
    monkeypatch.setattr(search_tool, "_item", lambda *a: built.append(a) or item(*a))
    out = search(tmp_path, pattern="keep staging cluster backups")
    assert (out["matches"][0]["path"], out["matches"][0]["line"]) == ("last.md", 2)
    assert all("rota" in m["text"] for m in out["matches"][1:]) and len(out["matches"]) == 50
    assert len(built) < 200  # a page, and a little: not 2,000 lines a file


def test_search_a_single_file(tree: Path) -> None:
    out = search(tree, pattern="def", path="src/util.py")
    assert [m["line"] for m in out["matches"]] == [1]


def test_a_search_never_reads_the_apps_state_or_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project holding HERMES_HOME (not hidden) and a link to a private key: neither is read.
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text("SECRET key\n")
    state = project / "hermes-home"
    (state / "sessions").mkdir(parents=True)
    (state / ".env").write_text("OPENAI_API_KEY=SECRET\n")
    (state / "sessions/a.jsonl").write_text('{"content": "SECRET"}\n')
    (project / "key").symlink_to(home / ".ssh/id_rsa")
    (project / "notes.txt").write_text("not a SECRET\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HERMES_HOME", str(state))
    out = json.loads(
        call_tool(registry, "search_files", {"pattern": "SECRET", "path": str(project)})
    )
    assert [Path(m["path"]).name for m in out["matches"]] == ["notes.txt"], out
    names = json.loads(
        call_tool(
            registry, "search_files", {"pattern": "*", "target": "files", "path": str(project)}
        )
    )
    assert names["files"] == [str(project / "notes.txt")], names
    skipped = {Path(item["path"]).name: item["why"] for item in names["skipped"]}
    assert set(skipped) == {"key", "hermes-home"}, names  # said, by name
    assert "SECRET" not in json.dumps(names) and "a.jsonl" not in json.dumps(names)


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with secrets no list of credential files names, and a project holding links
    to them: a symlink, a hard link, a linked folder, and one shipped in a git repository."""
    home, project = tmp_path / "home", tmp_path / "project"
    secrets = {
        ".vault-token": "TOKEN-vault",
        ".cargo/credentials.toml": "TOKEN-cargo",
        ".config/rclone/rclone.conf": "TOKEN-rclone",
        ".zz-new-tool/auth": "TOKEN-unknown",
    }
    for rel, text in secrets.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{text}\n")
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('TOKEN-free')\n")
    (project / "notes.txt").symlink_to(home / ".vault-token")
    os.link(home / ".cargo" / "credentials.toml", project / "src" / "cargo.txt")
    (project / "rclone").symlink_to(home / ".config" / "rclone")
    repo = tmp_path / "repo"
    (repo).mkdir()
    (repo / "README").symlink_to(home / ".zz-new-tool" / "auth")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "a link"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "clone", "-q", str(repo), str(project / "vendor")], check=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(places, "_KNOWN", {})  # the hard-link scan, not shared
    return project


@pytest.mark.parametrize("target", ["content", "files"])
def test_what_a_search_reaches_is_judged_where_it_leads(planted: Path, target: str) -> None:
    """Every file a search meets is judged where it resolves, as a confined command would
    see it: links to secret places are skipped and said by name, never read."""
    pattern = "TOKEN" if target == "content" else "*"
    out = search(planted, pattern=pattern, target=target)
    shown = json.dumps(out)
    assert "TOKEN-free" in shown or target == "files"
    assert not any(f"TOKEN-{t}" in shown for t in ("vault", "cargo", "rclone", "unknown"))
    skipped = {item["path"]: item["why"] for item in out["skipped"]}
    assert set(skipped) == {"notes.txt", "src/cargo.txt", "rclone", "vendor/README"}, out
    assert "~/.vault-token" in skipped["notes.txt"]
    assert "credentials.toml" in skipped["src/cargo.txt"]  # the other name of the file
    assert "~/.config/rclone" in skipped["rclone"]
    assert "secret" in out["note"]


def test_a_search_a_person_let_into_a_secret_place_reads_it(planted: Path) -> None:
    """The gate asked about the folder itself; once a person allowed it, its files are
    what was asked about (a link inside it to another secret place is still skipped)."""
    home = planted.parent / "home"
    (home / ".config" / "rclone" / "other").symlink_to(home / ".vault-token")
    out = search(planted, pattern="TOKEN", path=str(home / ".config" / "rclone"))
    assert [Path(m["path"]).name for m in out["matches"]] == ["rclone.conf"], out
    assert [Path(i["path"]).name for i in out["skipped"]] == ["other"]


def test_a_match_shows_the_text_of_the_line_its_number_names(tmp_path: Path) -> None:
    # numbered by newlines, as read_file numbers them: a form feed, a \x85 or a \u2028 in a
    # line once shifted the text shown against the number given
    (tmp_path / "odd.txt").write_text("one\x0cpage\r\nsee\x85two\nTARGET here\r\nlast\u2028x\n")
    (match,) = search(tmp_path, pattern="TARGET")["matches"]
    assert (match["line"], match["text"]) == (3, "TARGET here")
    (near,) = search(tmp_path, pattern="here target")["matches"]  # the words, any order
    assert (near["line"], near["text"]) == (3, "TARGET here")
    (context,) = search(tmp_path, pattern="TARGET", context=1)["matches"]
    assert context["context"] == ["2|see\x85two", "3|TARGET here", "4|last\u2028x"]


def test_only_the_first_words_of_a_long_phrase_are_looked_for_line_by_line(
    tmp_path: Path,
) -> None:
    # each word is looked for in every line: a pattern of thousands of words must not make
    # that work thousands of times larger
    words = [f"word{n}" for n in range(40)]
    (tmp_path / "a.txt").write_text(" ".join(words[:6]) + "\n" + " ".join(words[20:]) + "\n")
    out = search(tmp_path, pattern=" ".join(words))
    assert [m["line"] for m in out["matches"]] == [1]  # line 2 holds only words past the 12th
    assert search(tmp_path, pattern=" ".join(words[:3]))["matches"][0]["line"] == 1
