"""bubblewrap's start, held until the reaper has set the sandbox up from outside.

bwrap writes the sandbox's first process's pid on `--info-fd` and waits on `--block-fd`
before it runs the command; meanwhile the reaper sets the process limit on that process
(inside its user namespace, where the kernel counts only the sandbox's processes) and
starts slirp4netns on its network namespace. The descriptors have these numbers in bwrap's
process (the reaper puts them there); RESOLV_FD carries the resolv.conf of `--ro-bind-data`.
"""

from __future__ import annotations

from typing import Any

INFO_FD, BLOCK_FD, RESOLV_FD = 3, 4, 5


def handshake_args() -> list[str]:
    return ["--info-fd", str(INFO_FD), "--block-fd", str(BLOCK_FD)]


def handshake_request() -> dict[str, Any]:
    return {"handshake": {"info_fd": INFO_FD, "block_fd": BLOCK_FD}}
