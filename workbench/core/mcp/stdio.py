"""A stdio server's process and its message streams, the process started before the SDK loads.

Importing the `mcp` SDK takes most of a second (every protocol version's models are built),
and a stdio server takes about as long to start. The SDK's own `stdio_client` spawns the
server only once it is imported, so the two added up; here the process is spawned first
(anyio only) and the SDK is imported while the server starts. The streams carry the SDK's
`SessionMessage`s, a line of JSON-RPC each way as the SDK's transport does; a line that is
not JSON-RPC is handed on as the exception that says why (the session counts it as noise).
Shutdown follows the spec's order: stdin closed, a grace to exit, then the process group
terminated and at last killed, every wait bounded and shielded from cancellation.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.abc import Process

EXIT_GRACE = 2.0  # seconds a server gets to exit by itself once its stdin is closed
TERM_GRACE = 2.0  # then, after SIGTERM to its process group, before SIGKILL
FLUSH_TIMEOUT = 0.5  # for messages already accepted to be written before stdin closes
POLL = 0.01  # seconds between looks at whether the process has exited


# What the SDK's stdio transport always passes on from our environment, below the server's own.
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def environment(own: dict[str, str]) -> dict[str, str]:
    """The server's environment: the variables the SDK's transport would pass (a shell
    function's text never), then the server's own (config.child_env())."""
    base = {
        name: value
        for name in INHERITED
        if (value := os.environ.get(name)) is not None and not value.startswith("()")
    }
    return {**base, **own}


async def spawn(argv: list[str], env: dict[str, str], cwd: str | None, errlog: IO[Any]) -> Process:
    """Start the server in a session of its own (its process group is its kill scope)."""
    import anyio

    return await anyio.open_process(argv, env=env, cwd=cwd, stderr=errlog, start_new_session=True)


@contextlib.asynccontextmanager
async def streams(process: Process) -> AsyncIterator[tuple[Any, Any]]:
    """The session's (read, write) streams over a spawned server's stdout and stdin; on
    leaving, the server is stopped (`stop`)."""
    import anyio
    import mcp_types
    from anyio.streams.text import TextReceiveStream
    from mcp.shared.message import SessionMessage

    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()

    def parse(line: str) -> SessionMessage | Exception:
        try:
            return SessionMessage(
                mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            )
        except ValueError as exc:
            return exc

    async def reader() -> None:
        buffer = ""
        try:
            async with read_in:
                async for chunk in TextReceiveStream(stdout, errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        await read_in.send(parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the session is gone, or our own shutdown closed the pipe
        # what it still writes is read and dropped: a server blocked on a full pipe
        # could not read the end of its stdin, and so never exit
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            while await stdout.receive():
                pass

    async def writer() -> None:
        try:
            async with write_out:
                async for message in write_out:
                    line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((line + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_in.aclose()  # it stopped reading: the session sees the end
        finally:
            written.set()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_out, write_in
        finally:
            with anyio.CancelScope(shield=True):
                read_out.close()
                write_in.close()
                with anyio.move_on_after(FLUSH_TIMEOUT):
                    await written.wait()
                await stop(process)
            group.cancel_scope.cancel()


async def stop(process: Process) -> None:
    """Close its stdin, give it `EXIT_GRACE` to go, then terminate its process group and at
    last kill it; a process already gone returns at once (stopping twice is harmless)."""
    import anyio

    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        if not await _exited(process, EXIT_GRACE):
            for number, grace in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, TERM_GRACE)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, number)  # its pid is its group's (a new session)
                if await _exited(process, grace):
                    break
        if process.stdout is not None:
            with contextlib.suppress(Exception):
                await process.stdout.aclose()


async def _exited(process: Process, timeout: float) -> bool:
    """Whether it exited within `timeout`, by its return code (not `wait()`, which waits for
    the pipes too: a child it left holding them would make it look hung)."""
    import anyio

    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(POLL)
        return True
    return False
