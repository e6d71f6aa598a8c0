"""`hermes-tui checkpoints`: list a working directory's checkpoints, see what changed since one,
and restore it (or some of its files).

It reads the store and config.yaml only: no tools, plugins or MCP servers are loaded, so it
works when they are broken. A restore first takes a checkpoint of the state it replaces (the
undo), lists the files it would delete before those it would write back, and names the files
changed since by someone other than the agent; those are kept unless the person says to
overwrite them (`--overwrite-hand-edits`, or `y` to the question on a terminal). Without a
terminal and without `--yes` it says what it would do and changes nothing (exit 1).

Exit codes: 0 done, 1 nothing changed (declined, or no `--yes` without a terminal), 2 an
error (a working directory that is not a directory, an unknown id, a file outside the working
directory, a damaged store): the message says which, and nothing changed.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import TYPE_CHECKING

from workbench.core.checkpoints import wording as say
from workbench.core.printable import escape

if TYPE_CHECKING:
    import argparse

    from workbench.core.checkpoints import Checkpoint, CheckpointStore, RestorePlan

EXIT_OK, EXIT_UNCHANGED, EXIT_ERROR = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse

    where = "the working directory (default: the current one)"
    parser.add_argument("--cwd", help=where)
    parser.add_argument("--json", action="store_true", help="machine-readable list")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="the checkpoints, newest first (the default)")
    diff = sub.add_parser("diff", help="what changed since a checkpoint, with each file's diff")
    restore = sub.add_parser(
        "restore", help="bring the files back as they were (the state now is checkpointed first)"
    )
    for each in (listing, diff, restore):  # after the action too; never over one given before
        each.add_argument("--cwd", default=argparse.SUPPRESS, help=where)
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    for each in (diff, restore):
        each.add_argument("id", nargs="?", metavar="ID", help="a checkpoint (default: the latest)")
    restore.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="only this file (inside the working directory; may be repeated)",
    )
    restore.add_argument(
        "--yes", action="store_true", help="answer the confirmation (keeps hand edits)"
    )
    restore.add_argument(
        "--overwrite-hand-edits",
        action="store_true",
        help="also overwrite files changed by hand since the checkpoint",
    )


def run(args: argparse.Namespace) -> int:
    """The command, with the store of $HERMES_HOME (nothing else of the core is loaded)."""
    from workbench.core.checkpoints import CheckpointError, RestoreStopped

    action = args.action or "list"
    if action != "list" and args.json:
        return _usage("--json goes with `checkpoints list`")
    cwd = os.path.abspath(os.path.expanduser(args.cwd or os.getcwd()))
    if not os.path.isdir(cwd):
        return _usage(f"{escape(cwd)} is not a directory")
    try:
        store = _store()
        if action == "list":
            return _list(store, cwd, args.json)
        if action == "diff":
            return _diff(store, cwd, args.id)
        return _restore(store, cwd, args)
    except RestoreStopped as exc:  # some files were changed: it says which
        _err(str(exc))
        return EXIT_ERROR
    except CheckpointError as exc:
        _err(f"{exc} (nothing was changed)")
        return EXIT_ERROR


def _store() -> CheckpointStore:
    from workbench.core.checkpoints import CheckpointStore
    from workbench.core.config import hermes_home, load_config

    home = hermes_home()
    config = load_config(home / "config.yaml")
    if config.error:  # said, and the defaults used: listing and restoring still work
        _err(f"{config.error}; the checkpoint settings' defaults are used")
    return CheckpointStore(home, config)


# -- list --------------------------------------------------------------------------


def _list(store: CheckpointStore, cwd: str, as_json: bool) -> int:
    found = store.list(cwd)
    if as_json:
        rows = [_row(c) for c in found]
        _out(json.dumps({"cwd": cwd, "enabled": store.enabled, "checkpoints": rows}, indent=2))
        return EXIT_OK
    if not found:
        _out(say.no_checkpoints(cwd, store.enabled))
        return EXIT_OK
    _out(f"{len(found)} checkpoint(s) of {escape(cwd)}, newest first:")
    for checkpoint in found:
        _out(f"  {say.headline(checkpoint)}")
    if not store.enabled:
        _out(f"checkpoints are off: no new ones are taken ({say.HOW_TO_ENABLE})")
    return EXIT_OK


def _row(checkpoint: Checkpoint) -> dict:
    return {
        "id": checkpoint.id,
        "created": checkpoint.created,
        "time": say.when(checkpoint.created),
        "turn": checkpoint.turn,
        "session": checkpoint.session,
        "reason": checkpoint.reason,
        "files": checkpoint.files,
    }


# -- diff --------------------------------------------------------------------------


def _diff(store: CheckpointStore, cwd: str, wanted: str | None) -> int:
    checkpoint = store.get(cwd, wanted)
    changes = store.changes(cwd, checkpoint.id)
    _out(f"checkpoint {say.headline(checkpoint)}")
    _out(f"in {escape(cwd)}: {say.counted(changes)}")
    for change in changes:
        _out(f"  {change.kind:<8} {escape(change.path)}")
    for change in changes:
        diff = store.file_diff(cwd, checkpoint.id, change.path)
        _out("")
        _out(f"{change.kind} {escape(change.path)}: {diff.summary}")
        for line in diff.lines:
            _out(escape(line))
        if diff.more:
            _out(f"… {diff.more:,} more lines")
    return EXIT_OK


# -- restore -----------------------------------------------------------------------


def _restore(store: CheckpointStore, cwd: str, args: argparse.Namespace) -> int:
    plan = store.plan_restore(cwd, args.id, args.file)
    _show_plan(plan, cwd)
    if not plan.writes and not plan.deletes:
        _out("nothing to restore: the files are as in the checkpoint")
        return EXIT_OK
    hand = set(plan.hand_edited)
    overwrite = args.overwrite_hand_edits
    if not args.yes:
        if not sys.stdin.isatty():
            _err(
                "nothing was changed: without a terminal to ask, --yes restores (files "
                "changed by hand are kept unless --overwrite-hand-edits is given too)"
            )
            return EXIT_UNCHANGED
        if hand and not overwrite:
            overwrite = _ask(f"Overwrite your changes to {say.files(len(hand))} marked above?")
        if not _ask("Restore?"):
            _err("nothing was changed")
            return EXIT_UNCHANGED
    result = store.restore(plan, overwrite=plan.hand_edited if overwrite else ())
    _out(say.restored(plan.checkpoint, result))
    if not result.written and not result.deleted:  # every file was a hand edit, kept
        return EXIT_UNCHANGED
    if result.backup is not None:
        where = f" --cwd {shlex.quote(cwd)}" if args.cwd else ""
        _out(f"undo with: hermes-tui checkpoints restore {result.backup.id}{where}")
    return EXIT_OK


def _show_plan(plan: RestorePlan, cwd: str) -> None:
    """Deletes first, then writes; each file changed by hand since is marked."""
    hand = set(plan.hand_edited)
    _out(f"restore checkpoint {say.headline(plan.checkpoint)}")
    _out(f"in {escape(cwd)}:")
    for title, paths in (
        ("deletes (added since the checkpoint)", plan.deletes),
        ("writes back (changed or deleted since)", plan.writes),
    ):
        if paths:
            _out(f"  {title}: {len(paths)}")
        for path in paths:
            mark = "  ← changed by hand since (not by the agent)" if path in hand else ""
            _out(f"    {escape(path)}{mark}")
    if hand:
        _out(
            f"{say.files(len(hand))} changed by hand since the checkpoint: kept unless you "
            "answer y to overwrite, or give --overwrite-hand-edits"
        )


def _ask(question: str) -> bool:
    """y/N on the terminal: only `y` or `yes` is a yes."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _usage(text: str) -> int:
    _err(f"{text} (nothing was changed)")
    return EXIT_ERROR


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(f"hermes-tui: {text}\n")
