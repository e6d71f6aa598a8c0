"""What an approver reads: control and invisible characters made visible, lines kept."""

from __future__ import annotations

from workbench.core.printable import escape, escape_with_spans


def test_plain_text_is_unchanged() -> None:
    assert escape("rm -rf build\n\tnext line") == "rm -rf build\n\tnext line"


def test_control_bidi_and_separators_are_escaped() -> None:
    text = "a\rb\x1b[2Kc\x07d\x7fe\x85f\u202eg\u2066h\u200bi\u2028j\ufeffk\x00"
    shown = escape(text)
    assert shown == ("a\\rb\\x1b[2Kc\\x07d\\x7fe\\x85f\\u202eg\\u2066h\\u200bi\\u2028j\\ufeffk\\0")
    assert all(c == "\n" or c == "\t" or c.isprintable() for c in shown)


def test_spans_move_with_the_escapes() -> None:
    text = "\x1b[2K rm -rf x"
    shown, (span,) = escape_with_spans(text, [(5, 13)])
    assert shown[span[0] : span[1]] == "rm -rf x"
    assert escape_with_spans("ls", [(0, 2)]) == ("ls", [(0, 2)])


def test_non_latin_text_stays_readable() -> None:
    assert escape("echo 'héllo wörld 日本'") == "echo 'héllo wörld 日本'"
