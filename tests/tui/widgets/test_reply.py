"""A streamed reply: where it may be cut, and that a long one stays a few widgets without
losing or repeating a character."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tests.support.pilot import wait_until
from workbench.tui.widgets.reply import SEAL_CHARS, AssistantMessage, Part, settled_length


def test_a_block_is_settled_once_two_more_follow_it() -> None:
    assert settled_length("one\n\ntwo\n") == 0  # `two` may still become a heading (setext)
    assert settled_length("one\n\ntwo\n\nthree") == len("one\n\n")
    listed = "- a\n- b\n\n- c\n\nafter\n\nlast"
    assert settled_length(listed) == len("- a\n- b\n\n- c\n\n")  # the loose list is one block


def test_an_open_code_fence_is_never_cut() -> None:
    fenced = "intro\n\n```python\nx = 1\n\ny = 2\n\nz = 3\n"
    assert settled_length(fenced) == 0  # intro, then the fence running to the end
    closed = fenced + "```\n\nafter\n\nmore"
    assert closed[: settled_length(closed)].endswith("```\n\n")


class Host(App):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="log")


def long_reply() -> str:
    blocks = []
    for n in range(120):
        if n % 15 == 7:
            blocks.append(f"```python\ndef f{n}():\n\n    return {n}\n```")
        elif n % 10 == 3:
            blocks.append(f"## Part {n}")
        elif n % 10 == 5:
            blocks.append("- one item\n- another item")
        else:
            blocks.append(f"Paragraph {n} " + "with some **bold** words " * 8)
    return "\n\n".join(blocks) + "\n"


def shown_text(message: AssistantMessage) -> str:
    parts = [part.text for part in message.query(Part)]
    return message.query_one(".head", Markdown).source + "".join(parts)


async def test_a_long_reply_is_a_few_widgets_holding_every_character() -> None:
    reply = long_reply()
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        message = AssistantMessage()
        await app.query_one("#log").mount(message)
        for start in range(0, len(reply), 37):  # fragments cut anywhere, fences included
            message.add_fragment(reply[start : start + 37])
        message.finish()
        await wait_until(pilot, lambda: message.whole)
        assert message.reply == reply and shown_text(message) == reply
        sealed = list(message.query(".sealed"))
        assert len(reply) > 4 * SEAL_CHARS and len(sealed) >= 3
        assert all(part.text.count("```") % 2 == 0 for part in sealed)  # no fence cut open
        assert len(list(message.walk_children())) < 60  # not one widget per block


async def test_a_short_reply_is_textual_markdown_rendered_whole() -> None:
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        message = AssistantMessage()
        await app.query_one("#log").mount(message)
        for fragment in ["Some `code", "` and a fence:\n\n```\nopen", " still\n"]:
            message.add_fragment(fragment)
        message.finish()
        await wait_until(pilot, lambda: message.whole)
        head = message.query_one(".head", Markdown)
        assert head.source == message.reply and not message.query(Part)
        assert len(head.children) == 2  # the paragraph and the code block
