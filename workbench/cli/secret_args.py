"""Secrets given as options: kept out of `ps`, or never put there.

`--api-key KEY` (and `serve --token`) is overwritten in the process's arguments right after
parsing, so `ps` and `/proc/PID/cmdline` no longer show it; the short moment before that
remains, so `--api-key-file PATH` and `--api-key -` (one line from stdin) are offered to
give a key that never appears there at all.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

from workbench.core import own_process

SECRET_OPTIONS = ("api_key", "token")  # dests of options that carry a secret
FROM_STDIN = "-"


def add_key_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-key-file",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="read the API key from this file (its first line; keep it private, mode 0600)",
    )


def settle(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Right after parsing: hide the secrets given as arguments, then read the key from the
    file or stdin it names. A file that cannot be read is a usage error."""
    own_process.hide_arguments(
        v for k in SECRET_OPTIONS if isinstance(v := getattr(args, k, None), str) and v != "-"
    )
    path = getattr(args, "api_key_file", None)
    given = getattr(args, "api_key", None)
    if path is not None and given is not None:
        parser.error("give the API key one way: --api-key or --api-key-file")
    if path is not None:
        args.api_key = _from_file(path, parser)
    elif given == FROM_STDIN:
        args.api_key = _from_stdin(parser)


def _from_file(path: str, parser: argparse.ArgumentParser) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            key = handle.readline().strip()
    except (OSError, UnicodeDecodeError) as exc:
        parser.error(f"--api-key-file {path}: {getattr(exc, 'strerror', None) or exc}")
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        sys.stderr.write(
            f"hermes-tui: warning: {path} is readable by other users "
            f"(mode {stat.S_IMODE(mode):04o}); `chmod 600 {path}` keeps the key yours\n"
        )
    if not key:
        parser.error(f"--api-key-file {path}: the file's first line is empty")
    return key


def _from_stdin(parser: argparse.ArgumentParser) -> str:
    if sys.stdin.isatty():  # typed: not echoed
        import getpass

        key = getpass.getpass("API key: ", stream=sys.stderr).strip()
    else:
        key = sys.stdin.readline().strip()  # one line: the rest stays for the conversation
    if not key:
        parser.error("--api-key -: no key on the first line of stdin")
    return key
