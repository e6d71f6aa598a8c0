"""A scripted OpenAI chat-completions server on 127.0.0.1, for agent tests and benchmarks.

Each request takes the next scripted reply: text (streamed as SSE deltas, or one JSON body
when the request does not stream), tool calls (name first, then argument fragments, as
real servers send them), an HTTP error, a stream cut mid-way, invalid JSON, or a slow
stream. Every request body is recorded for assertions. No monkeypatching: the agent talks
to this over a real socket with the real `openai` client.

With `window` set it has a context size, as a model server does: it counts each request's
tokens (its own count, `chars_per_token` characters a token plus a few per message, which
the client cannot know in advance), reports that count as `usage.prompt_tokens`, and refuses
a request at or over the window exactly as llama.cpp does (HTTP 400, its JSON), or as
OpenAI does with `refusal_style = "openai"`.

With `mode` set it answers every request alike, as a server that loses tool calls in one
way (`MODES`, for the model probe): a proper call of the first tool offered, a call written
in the text (fenced, tagged, bare JSON, in brackets), a call of a tool not offered, arguments
that are not JSON, no call, a call only when not streaming, an HTTP error, or no reply until
the server stops.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.http import JSONHandler


@dataclass
class Reply:
    kind: str  # text, tools, error, cut, garbage
    text: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments JSON text)
    status: int = 200
    chunks: int = 4  # text split into this many deltas (or chunk_size when given)
    chunk_size: int = 0
    delay: float = 0.0  # seconds between chunks
    usage: tuple[int, int] = (11, 7)
    cut_after: int = 2
    timings: Any = None  # llama.cpp's extra `timings` field, sent on the stream's last chunk
    # llama.cpp's `prompt_progress` chunks ((processed, total, cache) each), sent first, as
    # it does when asked with `return_progress`; then, if set, the stream waits for `hold`
    progress: list[tuple[int, int, int]] = field(default_factory=list)
    hold: Any = None  # a threading.Event
    ids: list[str] = field(default_factory=list)  # the calls' ids as the server names them


def text(content: str, **kw: Any) -> Reply:
    return Reply("text", text=content, **kw)


def tools(*calls: tuple[str, Any], content: str = "", **kw: Any) -> Reply:
    return Reply(
        "tools",
        text=content,
        calls=[(n, a if isinstance(a, str) else json.dumps(a)) for n, a in calls],
        **kw,
    )


def error(status: int, message: str = "boom") -> Reply:
    return Reply("error", text=message, status=status)


def cut(content: str = "partial answer that never", after: int = 2) -> Reply:
    return Reply("cut", text=content, cut_after=after)


def garbage() -> Reply:
    return Reply("garbage")


MODES = (
    "native",
    "text-fence",
    "text-tags",
    "text-bare",
    "text-brackets",
    "wrong-name",
    "bad-arguments",
    "no-call",
    "stream-broken",
    "refused",
    "timeout",
)
REFUSAL = "tools are not supported by this model"


def call_for(tool: dict[str, Any]) -> tuple[str, str]:
    """A call of `tool` whose arguments fit its schema: each required one, of its type."""
    function = tool["function"]
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    samples = {"string": "README.md", "integer": 1, "number": 1, "boolean": True,
               "array": [], "object": {}}  # fmt: skip
    arguments = {}
    for key in parameters.get("required") or []:
        kind = (properties.get(key) or {}).get("type", "string")
        arguments[key] = samples.get(kind if isinstance(kind, str) else kind[0], "README.md")
    return function["name"], json.dumps(arguments)


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        # replies for requests whose opening messages hold a marker (a sub-agent's goal):
        # concurrent conversations each get their own script, whatever order they ask in
        self.routes: list[tuple[str, deque[Reply]]] = []
        self.requests: list[dict[str, Any]] = []
        self.stream_ended: list[float] = []  # time.perf_counter() of each stream's last byte
        self.api_key = "test-key"
        self.window: int | None = None  # the server's context size, in its own tokens
        self.chars_per_token = 4.0
        self.refusal_style = "llama.cpp"
        self.refused: list[int] = []  # the token counts of requests refused as too long
        self.overflows: list[int] = []  # requests whose reply (max_tokens) would not fit
        self.prompt_tokens: list[int] = []  # every request's count, in order
        self.mode: str | None = None  # one of MODES: every request answered alike
        self.release = threading.Event()  # what mode "timeout" waits for (stop sets it)
        self._lock = threading.Lock()
        server = self

        class Handler(JSONHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(
                    self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}"
                )
                server.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), **body}
                )
                if self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self.send_json(
                        401,
                        {
                            "error": {
                                "message": "Incorrect API key provided",
                                "type": "invalid_request_error",
                            }
                        },
                    )
                if not self.path.endswith("/chat/completions"):
                    return self.send_json(404, {"error": {"message": f"no route {self.path}"}})
                if server.window is not None:
                    tokens = server.count(body)
                    server.prompt_tokens.append(tokens)
                    if tokens >= server.window:
                        server.refused.append(tokens)
                        return self.send_json(400, server.too_long(tokens))
                    if tokens + int(body.get("max_tokens") or 0) > server.window:
                        server.overflows.append(tokens)
                server.serve(self, server.next_reply(body), body)

        self._handler = Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # stop() waits for the server's loop to see the request: poll often, not every 0.5 s
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def model_config(self, name: str = "fake") -> str:
        """config.yaml text that points the model at this server."""
        return f"model:\n  base_url: {self.url}\n  api_key: {self.api_key}\n  name: {name}\n"

    def add(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def route(self, marker: str, *replies: Reply) -> None:
        self.routes.append((marker, deque(replies)))

    def count(self, body: dict[str, Any]) -> int:
        """This server's token count of a request: its own ratio, a few tokens per message."""
        chars, messages = 0, body.get("messages") or []
        for message in messages:
            content = message.get("content")
            chars += len(content if isinstance(content, str) else json.dumps(content or ""))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                chars += len(function.get("name") or "") + len(function.get("arguments") or "")
        if body.get("tools"):
            chars += len(json.dumps(body["tools"]))
        return math.ceil(chars / self.chars_per_token) + 4 * len(messages) + 3

    def too_long(self, tokens: int) -> dict[str, Any]:
        """The refusal's body, word for word as llama.cpp's server (or OpenAI) sends it."""
        if self.refusal_style == "openai":
            return {
                "error": {
                    "message": f"This model's maximum context length is {self.window} tokens. "
                    f"However, your messages resulted in {tokens} tokens. Please reduce the "
                    "length of the messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        return {
            "error": {
                "code": 400,
                "message": f"request ({tokens} tokens) exceeds the available context size "
                f"({self.window} tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": self.window,
            }
        }

    def usage(self, reply: Reply, body: dict[str, Any]) -> tuple[int, int]:
        """The scripted usage, or with a window the real count of the prompt."""
        if self.window is None:
            return reply.usage
        return self.count(body), max(1, math.ceil(len(reply.text) / self.chars_per_token))

    def moded(self, body: dict[str, Any]) -> Reply:
        """The reply of `mode` to this request."""
        offered = body.get("tools") or []
        name, arguments = call_for(offered[0]) if offered else ("get_time", "{}")
        written = json.dumps({"name": name, "arguments": json.loads(arguments)})
        streamed = bool(body.get("stream"))
        mode = self.mode
        if mode == "native" or (mode == "stream-broken" and not streamed):
            return tools((name, arguments))
        if mode == "text-fence":
            return text(f"I will look.\n```tool_call\n{written}\n```")
        if mode == "text-tags":
            return text(f"<tool_call>\n{written}\n</tool_call>")
        if mode == "text-bare":
            return text(written)
        if mode == "text-brackets":
            return text(f"[TOOL_CALLS] [{written}]")
        if mode == "wrong-name":
            return tools(("no_such_tool", arguments))
        if mode == "bad-arguments":
            return tools((name, '{"path": "READ'))
        if mode in ("no-call", "stream-broken"):
            return text("I cannot call tools, but it is probably noon.")
        if mode == "refused":
            return error(400, REFUSAL)
        if mode == "timeout":
            return Reply("text", text="too late", hold=self.release)
        raise ValueError(f"no mode {mode!r} (modes: {', '.join(MODES)})")

    def next_reply(self, body: dict[str, Any]) -> Reply:
        if self.mode is not None:
            return self.moded(body)
        opening = json.dumps(body.get("messages", [])[:1])
        with self._lock:
            for marker, queue in self.routes:
                if marker in opening:
                    return queue.popleft() if queue else error(500, f"route '{marker}' exhausted")
            return (
                self.script.popleft() if self.script else error(500, "the test script is exhausted")
            )

    # -- serving -----------------------------------------------------------------------

    def serve(self, handler: Any, reply: Reply, body: dict[str, Any]) -> None:
        if reply.kind == "error":
            payload = {
                "error": {"message": reply.text, "type": "server_error", "code": reply.status}
            }
            return handler.send_json(reply.status, payload)
        if not body.get("stream"):
            if reply.hold is not None:
                reply.hold.wait(60)
            time.sleep(reply.delay)  # a slow answer
            try:
                return handler.send_json(200, self._completion(reply, body))
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                return None
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        began = time.perf_counter()
        try:
            for index, chunk in enumerate(self._chunks(reply, body)):
                if reply.kind == "cut" and index >= reply.cut_after:
                    return  # the connection closes mid-stream
                handler.wfile.write(chunk)
                handler.wfile.flush()
                if reply.delay:  # paced by deadline, so the rate holds whatever a write costs
                    time.sleep(max(0.0, began + (index + 1) * reply.delay - time.perf_counter()))
        except (BrokenPipeError, ConnectionResetError):
            return
        self.stream_ended.append(time.perf_counter())

    def _chunks(self, reply: Reply, body: dict[str, Any]) -> Any:
        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        if reply.kind == "garbage":
            yield event({"role": "assistant", "content": "Hel"})
            yield b"data: {this is not json\n\n"
            return
        for processed, total, cache in reply.progress:
            chunk = json.loads(event({"role": "assistant", "content": None})[6:])
            chunk["prompt_progress"] = {"total": total, "cache": cache, "processed": processed}
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        if reply.hold is not None:
            reply.hold.wait(60)
        yield event({"role": "assistant", "content": ""})
        for piece in _split(reply.text, reply.chunks, reply.chunk_size):
            yield event({"content": piece})
        for index, (name, arguments) in enumerate(reply.calls):
            yield event(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": reply.ids[index]
                            if index < len(reply.ids)
                            else f"call_{index}_{len(self.requests)}",
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
            for piece in _split(arguments, 3, 0):
                yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        last = json.loads(event({}, "tool_calls" if reply.calls else "stop")[6:])
        if reply.timings is not None:
            last["timings"] = reply.timings
        yield f"data: {json.dumps(last)}\n\n".encode()
        if (body.get("stream_options") or {}).get("include_usage"):
            prompt, completion = self.usage(reply, body)
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            chunk = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [],
                "usage": usage,
            }
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(reply.calls)
            ]
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": dict(
                zip(("prompt_tokens", "completion_tokens"), self.usage(reply, body), strict=True),
                total_tokens=sum(self.usage(reply, body)),
            ),
        }


def _split(text: str, parts: int, size: int) -> list[str]:
    if not text:
        return []
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    step = max(1, -(-len(text) // parts))
    return [text[i : i + step] for i in range(0, len(text), step)]
