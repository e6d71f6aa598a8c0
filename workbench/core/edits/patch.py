"""The patch tool's replacement rule, in the core: the tool applies it, and an approval's
diff shows what it would do before the call runs (one rule, so the two never differ)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from workbench.core.tools.errors import tool_error


def patched(text: str, args: dict[str, Any], path: PurePath) -> tuple[str, int] | str:
    """The new text and the number of replacements, or the error result (nothing changed)."""
    old, new = args["old_string"], args["new_string"]
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old:
        # A file with Windows line ends, matched as the model writes them; its ends are kept.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        return tool_error(
            f"old_string not found in {path}; nothing was changed. "
            "Read the file again and copy the text exactly, whitespace included."
        )
    if count > 1 and not args.get("replace_all"):
        return tool_error(
            f"old_string occurs {count} times in {path}; nothing was changed. Add surrounding "
            "lines to make it unique, or set replace_all to true."
        )
    updated = text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1)
    return updated, count
