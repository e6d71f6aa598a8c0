"""`mcp_servers` in config.yaml: Hermes's keys, validated per server.

A bad entry is reported for that server and the others start. Unknown keys are reported, not
fatal. `${VAR}` and `${env:VAR}` are expanded (unset ones stay literal, as in Hermes). A stdio
server's environment holds only what it needs plus its own `env`: never our API keys.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from workbench.core.backends.environment import scrubbed_env

KNOWN_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "url",
        "headers",
        "transport",
        "timeout",
        "connect_timeout",
        "enabled",
        "tools",
        "supports_parallel_tool_calls",
        "mode",
        "cwd",
        "trust",
        "roots",  # ours: the roots offered to this server (false: none; default: the cwd)
        # Hermes keys accepted for compatibility, not used by this front end:
        "keepalive_interval",
        "idle_timeout_seconds",
        "max_lifetime_seconds",
        "lifecycle",
        "skip_preflight",
        "auth",
        "oauth",
        "ssl_verify",
        "client_cert",
        "client_key",
        "sampling",
        "elicitation",
        "lazy",  # a headless command does not wait for it at start (ServerConfig.lazy)
    }
)
DEFAULT_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 60.0
_VAR = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class ServerConfig:
    name: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    transport: str = "stdio"  # stdio, http (streamable), sse
    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    enabled: bool = True
    include: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    resources: bool = True  # tools.resources: false drops list_resources and read_resource
    prompts: bool = True  # tools.prompts: false drops list_prompts and get_prompt
    parallel: bool = False
    mode: str = "legacy"
    cwd: str | None = None
    untrusted: bool = False  # trust: untrusted (Hermes's key)
    # lazy: true: `chat` and `replay` start without waiting for it (it still connects in the
    # background, and its tools are offered once it is ready); the TUI never waits for any
    lazy: bool = False
    roots: list[str] | None = None  # None: the session's working directory; []: no roots
    problems: list[str] = field(default_factory=list)  # fatal: the server is not started
    warnings: list[str] = field(default_factory=list)  # reported, not fatal

    def wants(self, tool: str) -> bool:
        """Include wins over exclude; neither means every tool."""
        if self.include is not None:
            return tool in self.include
        return tool not in self.exclude

    def child_env(self) -> dict[str, str]:
        return scrubbed_env(extra=self.env)


def interpolate(value: Any) -> Any:
    if isinstance(value, str):
        return _VAR.sub(lambda m: os.environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [interpolate(v) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v) for k, v in value.items()}
    return value


def boolish(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    return default


def parse_servers(section: Any) -> list[ServerConfig]:
    if section is None:
        return []
    if not isinstance(section, dict):
        return [
            ServerConfig(
                "mcp_servers", problems=["mcp_servers must be a mapping of name: settings"]
            )
        ]
    return [parse_server(str(name), entry) for name, entry in section.items()]


def parse_server(name: str, entry: Any) -> ServerConfig:
    server = ServerConfig(name)
    if not isinstance(entry, dict):
        server.problems.append("settings must be a mapping")
        return server
    entry = interpolate(entry)
    server.warnings += [f"unknown key '{k}' (ignored)" for k in sorted(set(entry) - KNOWN_KEYS)]
    server.enabled = boolish(entry.get("enabled"), True)
    server.lazy = boolish(entry.get("lazy"), False)
    server.parallel = boolish(entry.get("supports_parallel_tool_calls"), False)
    server.timeout = _seconds(entry, "timeout", DEFAULT_TIMEOUT, server)
    server.connect_timeout = _seconds(entry, "connect_timeout", DEFAULT_CONNECT_TIMEOUT, server)
    server.mode = str(entry.get("mode") or "legacy")
    if server.mode not in ("legacy", "auto"):
        server.problems.append(f"mode must be legacy or auto, not {server.mode!r}")
    _tool_filter(server, entry.get("tools"))
    _trust(server, entry.get("trust"))
    _roots(server, entry.get("roots", True))
    if entry.get("url"):
        _remote(server, entry)
    elif entry.get("command"):
        _stdio(server, entry)
    else:
        server.problems.append("needs a command (stdio) or a url (HTTP)")
    return server


def _trust(server: ServerConfig, value: Any) -> None:
    """`trust: untrusted` (Hermes's key). Anything else but `trusted` is not understood,
    so the server is treated as untrusted and the problem reported."""
    if value is None or value == "trusted":
        return
    server.untrusted = True
    if value != "untrusted":
        server.warnings.append(
            f"trust must be trusted or untrusted, not {value!r}: treated as untrusted"
        )


def _seconds(entry: dict[str, Any], key: str, default: float, server: ServerConfig) -> float:
    value = entry.get(key)
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    server.problems.append(f"{key} must be a positive number of seconds, not {value!r}")
    return default


def _tool_filter(server: ServerConfig, tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, dict):
        server.problems.append("tools must be a mapping with include/exclude/resources/prompts")
        return
    if tools.get("include") is not None:
        server.include = _names(tools["include"])
    server.exclude = _names(tools.get("exclude"))
    server.resources = boolish(tools.get("resources"), True)
    server.prompts = boolish(tools.get("prompts"), True)


def _roots(server: ServerConfig, roots: Any) -> None:
    """A server that takes its directories from the client's roots (as the filesystem
    server does) is scoped to the working directory unless told otherwise here."""
    if roots is True or roots is None:
        return
    if roots is False:
        server.roots = []
    elif isinstance(roots, str):
        server.roots = [os.path.expanduser(roots)]
    elif isinstance(roots, list) and all(isinstance(r, str) for r in roots):
        server.roots = [os.path.expanduser(r) for r in roots]
    else:
        server.problems.append("roots must be false or a list of directories")


def _remote(server: ServerConfig, entry: dict[str, Any]) -> None:
    server.url = str(entry["url"])
    if entry.get("command"):
        server.warnings.append("both url and command are set: the url is used (as in Hermes)")
    parsed = urlparse(server.url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        server.problems.append(f"url must be an http(s) URL, not {server.url!r}")
    transport = str(entry.get("transport") or "http").lower()
    if transport not in ("http", "sse", "streamable-http", "streamable_http"):
        server.problems.append(
            f"unknown transport {transport!r} (use sse, or leave it out for HTTP)"
        )
    server.transport = "sse" if transport == "sse" else "http"
    headers = entry.get("headers") or {}
    if not isinstance(headers, dict):
        server.problems.append("headers must be a mapping")
    else:
        server.headers = {str(k): str(v) for k, v in headers.items()}


def _stdio(server: ServerConfig, entry: dict[str, Any]) -> None:
    server.command = str(entry["command"])
    args = entry.get("args") or []
    if not isinstance(args, list):
        server.problems.append("args must be a list")
    else:
        server.args = [str(a) for a in args]
    env = entry.get("env") or {}
    if not isinstance(env, dict):
        server.problems.append("env must be a mapping")
    else:
        server.env = {str(k): str(v) for k, v in env.items()}
    if entry.get("transport") not in (None, "stdio"):
        server.problems.append(f"transport {entry['transport']!r} needs a url")
    server.cwd = str(entry["cwd"]) if entry.get("cwd") else None


def _names(value: Any) -> list[str]:
    """A tool filter's names: one name or a list of them (none when not given)."""
    return [value] if isinstance(value, str) else [str(x) for x in value or []]
