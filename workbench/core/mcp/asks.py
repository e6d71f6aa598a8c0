"""What a server may ask of us: its roots, input from the user (elicitation), and a
completion from the session's model (sampling).

The user is asked through the session's `Asker` (workbench.core.asking), the one way the
core waits for a person. Everything fails closed. An elicitation nobody answers in time is
declined; with no front end to ask it is declined at once and said. A sampling request
reaches the model only after the user approves it, seeing the messages, the system prompt
and the token limit; silence, a timeout, or no front end refuse it. A server can never
answer for the user. A question holds the server's one call in flight, when there is one:
that call's timeline bar shows it waiting.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.core.asking import ANSWERED, Ask, Asker, AskKind
from workbench.core.mcp.events import AskSettled

logger = logging.getLogger(__name__)

ASK_TIMEOUT = 120.0  # seconds a question waits for the user before it is declined
MAX_SAMPLING_TOKENS = 4096  # a server may ask for more; the model is never asked for more
NO_ONE = "no one can be asked (no UI)"
KINDS = (AskKind.ELICITATION, AskKind.SAMPLING)


@dataclass
class Elicitation:
    """A server's request for input: `schema` is the JSON schema of the answer it wants."""

    id: int
    server: str
    message: str
    schema: dict[str, Any]
    deadline: float  # time.monotonic()


@dataclass
class SamplingRequest:
    """A server's request for a completion, as the user is shown it before approving."""

    id: int
    server: str
    messages: list[dict[str, str]]  # role, text
    system_prompt: str
    max_tokens: int
    temperature: float | None
    deadline: float  # time.monotonic()


@dataclass(frozen=True)
class ElicitAnswer:
    action: str  # accept, decline, cancel
    content: dict[str, Any] | None = None


Sampler = Callable[[SamplingRequest], Awaitable[tuple[str, str]]]  # -> (text, model name)


class ServerAsks:
    """Shared by every server of one manager. A front end attaches to be asked; `sampler`
    runs an approved sampling request on the session's model."""

    def __init__(
        self,
        roots: list[Path] | None = None,
        *,
        timeout: float = ASK_TIMEOUT,
        emit: Callable[[object], None] | None = None,
        asker: Asker | None = None,
    ) -> None:
        self.roots = [Path(r).resolve() for r in (roots or [Path.cwd()])]
        self.timeout = timeout
        self.emit = emit or (lambda event: None)
        self.sampler: Sampler | None = None
        self.asker = asker or Asker()
        self._calls: dict[str, list[str]] = {}  # each server's calls in flight (MCP loop only)

    # -- the front end -------------------------------------------------------------------

    def attach(self, front_end: Callable[[object], None]) -> Callable[[], None]:
        """`front_end(request)` is called on the MCP thread; it answers with `answer()`.
        Returns `detach`, which refuses what waits when no one else can answer."""
        return self.asker.attach(lambda ask: front_end(ask.subject), KINDS)

    def pending(self) -> list[Elicitation | SamplingRequest]:
        return [ask.subject for ask in self.asker.pending() if ask.kind in KINDS]

    def answer(self, request_id: int, answer: Any) -> bool:
        """From any thread. An elicitation takes an ElicitAnswer, sampling True to approve;
        anything else declines or refuses."""
        return self.asker.answer(request_id, answer)

    async def _ask(self, kind: AskKind, request: Elicitation | SamplingRequest) -> tuple[Any, str]:
        """The user's answer and ANSWERED, or None and why there is none."""
        return await self.asker.ask(Ask.about(kind, request, self._call_of(request.server)), None)

    @contextmanager
    def calling(self, server: str, call_id: str) -> Iterator[None]:
        """A call to `server` is in flight (on the MCP loop) while the block runs."""
        calls = self._calls.setdefault(server, [])
        calls.append(call_id)
        try:
            yield
        finally:
            calls.remove(call_id)

    def _call_of(self, server: str) -> str:
        """The call a server's question holds up: its one call in flight ("" when it has
        none or several, since a question does not say which call it belongs to)."""
        calls = self._calls.get(server) or []
        return calls[0] if len(calls) == 1 else ""

    # -- roots ---------------------------------------------------------------------------

    def roots_callback(self, roots: list[str] | None = None) -> Callable[..., Awaitable[Any]]:
        """The session's roots, or a server's own (`roots:` in its config)."""
        chosen = self.roots if roots is None else [Path(r).resolve() for r in roots]

        async def list_roots(context: Any = None) -> Any:
            import mcp.types as types

            # Validated as the SDK validates a wire message: the string becomes its file URL.
            return types.ListRootsResult(
                roots=[
                    types.Root.model_validate({"uri": r.as_uri(), "name": r.name or str(r)})
                    for r in chosen
                ]
            )

        return list_roots

    # -- elicitation ---------------------------------------------------------------------

    def elicitation_callback(self, server: str) -> Callable[..., Awaitable[Any]]:
        async def callback(context: Any, params: Any) -> Any:
            return await self.elicit(server, params)

        return callback

    async def elicit(self, server: str, params: Any) -> Any:
        import mcp.types as types

        schema = getattr(params, "requested_schema", None)
        if getattr(params, "mode", "form") == "url" or schema is None:
            url = getattr(params, "url", "")
            return self._elicited(server, "decline", f"asks to open a URL ({url}); not supported")
        if not self.asker.can_ask(AskKind.ELICITATION):
            return self._elicited(server, "decline", NO_ONE)
        request = Elicitation(
            self.asker.next_id(),
            server,
            str(getattr(params, "message", "") or ""),
            dict(schema),
            self.asker.deadline(self.timeout),
        )
        answer, why = await self._ask(AskKind.ELICITATION, request)
        if not isinstance(answer, ElicitAnswer):
            return self._elicited(server, "decline", why if why != ANSWERED else "not answered")
        if answer.action != "accept":
            return self._elicited(server, answer.action, "the user chose it")
        problem = check_content(request.schema, answer.content or {})
        if problem:  # the form checks first; this is the last guard
            return self._elicited(server, "decline", problem)
        self.emit(AskSettled(server, "elicitation", "accepted"))
        return types.ElicitResult(action="accept", content=answer.content or {})

    def _elicited(self, server: str, action: str, why: str) -> Any:
        import mcp.types as types

        # Anything but the user's own "cancel" is a decline: an answer never accepts here.
        settled: Literal["decline", "cancel"] = "cancel" if action == "cancel" else "decline"
        outcome = {"decline": "declined", "cancel": "cancelled"}[settled]
        self.emit(AskSettled(server, "elicitation", outcome, why))
        logger.info("MCP server %s: elicitation %s (%s)", server, outcome, why)
        return types.ElicitResult(action=settled)

    # -- sampling ------------------------------------------------------------------------

    def sampling_callback(self, server: str) -> Callable[..., Awaitable[Any]]:
        async def callback(context: Any, params: Any) -> Any:
            return await self.sample(server, params)

        return callback

    async def sample(self, server: str, params: Any) -> Any:
        import mcp.types as types

        if not self.asker.can_ask(AskKind.SAMPLING):
            return self._refused(server, f"sampling refused: {NO_ONE}")
        request = SamplingRequest(
            self.asker.next_id(),
            server,
            [
                {"role": str(m.role), "text": _message_text(m.content)}
                for m in params.messages or []
            ],
            str(params.system_prompt or ""),
            max(1, min(int(params.max_tokens or 1), MAX_SAMPLING_TOKENS)),
            params.temperature,
            self.asker.deadline(self.timeout),
        )
        answer, why = await self._ask(AskKind.SAMPLING, request)
        if answer is not True:
            why = why if why != ANSWERED else "the user denied it"
            return self._refused(server, f"sampling refused: {why}")
        if self.sampler is None:
            return self._refused(server, "sampling refused: no model is configured")
        try:
            text, model = await self.sampler(request)
        except Exception as exc:
            self.emit(AskSettled(server, "sampling", "failed", str(exc)))
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"sampling failed: {exc}")
        self.emit(AskSettled(server, "sampling", "approved"))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model=model,
            stop_reason="endTurn",
        )

    def _refused(self, server: str, message: str) -> Any:
        import mcp.types as types

        self.emit(AskSettled(server, "sampling", "refused", message.split(": ", 1)[-1]))
        logger.info("MCP server %s: %s", server, message)
        return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def _message_text(content: Any) -> str:
    items = content if isinstance(content, list) else [content]
    parts = []
    for item in items:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(str(item.text))
        else:
            parts.append(f"[{kind or 'content'}: {getattr(item, 'mime_type', '')}]")
    return "\n".join(parts)


def check_content(schema: dict[str, Any], content: dict[str, Any]) -> str:
    """Why `content` does not answer `schema` ("" when it does)."""
    import jsonschema

    try:
        jsonschema.validate(content, schema)
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path)
        return f"{where + ': ' if where else ''}{exc.message}"
    except jsonschema.SchemaError as exc:
        return f"the server's schema is not valid: {exc.message}"
    return ""
