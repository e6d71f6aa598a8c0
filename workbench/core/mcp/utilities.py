"""Hermes's four utility tools of an MCP server: its resources and prompts, for the model.

Per server, `mcp__<server>__list_resources` and `read_resource` when it advertises the
`resources` capability, `list_prompts` and `get_prompt` when it advertises `prompts`;
`tools: {resources: false}` / `{prompts: false}` (Hermes's keys) leave them out. Names,
descriptions, parameters and results are Hermes's (its `tools/mcp_tool.py`). They only
read; `tools.include`/`tools.exclude` do not touch them, as in Hermes.

A binary resource is saved, as Hermes does, under HERMES_HOME/cache/documents (private
here), and the model gets the marker that says where; what the server sends cannot steer
the file's name out of that folder.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from workbench.core.mcp import catalog as cat
from workbench.core.mcp.config import ServerConfig

RESOURCE_TOOLS = ("list_resources", "read_resource")
PROMPT_TOOLS = ("list_prompts", "get_prompt")
MAX_BYTES = 50 * 1024 * 1024  # of one binary resource saved (Hermes's cap)
_MAX_B64 = MAX_BYTES * 4 // 3 + 4  # refused before decoding: no huge string doubled
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def offered(info: cat.ServerInfo, config: ServerConfig) -> list[str]:
    """The utility tools this server gets: what it advertises, less what its config drops."""
    tools: list[str] = []
    if info.can("resources") and config.resources:
        tools.extend(RESOURCE_TOOLS)
    if info.can("prompts") and config.prompts:
        tools.extend(PROMPT_TOOLS)
    return tools


def schema(server: str, tool: str) -> dict[str, Any]:
    """Hermes's description and parameters of one utility tool."""
    empty: dict[str, Any] = {"type": "object", "properties": {}}
    if tool == "list_resources":
        return {"description": f"List available resources from MCP server '{server}'",
                "parameters": empty}  # fmt: skip
    if tool == "list_prompts":
        return {"description": f"List available prompts from MCP server '{server}'",
                "parameters": empty}  # fmt: skip
    if tool == "read_resource":
        uri = {"type": "string", "description": "URI of the resource to read"}
        return {
            "description": f"Read a resource by URI from MCP server '{server}'",
            "parameters": {"type": "object", "properties": {"uri": uri}, "required": ["uri"]},
        }
    arguments = {
        "type": "object",
        "description": "Optional arguments to pass to the prompt",
        "properties": {},
        "additionalProperties": True,
    }
    name = {"type": "string", "description": "Name of the prompt to retrieve"}
    return {
        "description": f"Get a prompt by name from MCP server '{server}'",
        "parameters": {
            "type": "object",
            "properties": {"name": name, "arguments": arguments},
            "required": ["name"],
        },
    }


# -- results, in Hermes's shapes -------------------------------------------------------


def _json(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def error(message: str) -> str:
    return _json({"error": message})


def failure(exc: BaseException) -> str:
    """What a failed request says to the model (Hermes's wording); never raised."""
    return error(f"MCP call failed: {type(exc).__name__}: {exc}")


def resources_result(items: list[Any]) -> str:
    """`{"resources": [{uri, name, description?, mimeType?}]}`."""
    out = []
    for item in items:
        entry: dict[str, Any] = {"uri": str(item.uri), "name": item.name}
        if item.description:
            entry["description"] = item.description
        if item.mime_type:
            entry["mimeType"] = item.mime_type
        out.append(entry)
    return _json({"resources": out})


def prompts_result(items: list[Any]) -> str:
    """`{"prompts": [{name, description?, arguments?: [{name, description?, required}]}]}`."""
    out = []
    for item in items:
        entry: dict[str, Any] = {"name": item.name}
        if item.description:
            entry["description"] = item.description
        if item.arguments:
            entry["arguments"] = [_argument(a) for a in item.arguments]
        out.append(entry)
    return _json({"prompts": out})


def _argument(argument: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": argument.name}
    if argument.description:
        entry["description"] = argument.description
    entry["required"] = argument.required
    return entry


def prompt_result(result: Any) -> str:
    """`{"messages": [{role, content}], "description"?}`; content that is not text is
    described as the Sources panel describes it."""
    messages = cat.prompt_messages(result)
    payload: dict[str, Any] = {"messages": messages}
    if getattr(result, "description", None):
        payload["description"] = result.description
    return _json(payload)


def read_result(result: Any, documents: Path) -> str:
    """`{"result": text parts joined by newlines}`; a binary part becomes the marker of
    the file it was saved to."""
    parts = []
    for item in getattr(result, "contents", None) or []:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(str(text))
        else:
            uri, mime = str(item.uri), str(getattr(item, "mime_type", "") or "")
            parts.append(save_blob(documents, str(item.blob or ""), uri, mime))
    return _json({"result": "\n".join(parts)})


def save_blob(documents: Path, blob: str, uri: str, mime: str) -> str:
    """Decode and save one binary part; the marker Hermes gives for it (or why not)."""
    from workbench.core.storage.private import open_private, private_dir

    if len(blob) > _MAX_B64:
        return f"[MCP embedded resource too large to cache: ~{len(blob) * 3 // 4} bytes, uri={uri}]"
    try:
        data = base64.b64decode(blob)
    except (binascii.Error, ValueError):
        return f"[MCP embedded resource could not be decoded: {mime or uri}]"
    if len(data) > MAX_BYTES:
        return f"[MCP embedded resource too large to cache: {len(data)} bytes, uri={uri}]"
    try:
        path = private_dir(documents) / f"doc_{uuid.uuid4().hex[:12]}_{file_name(uri, mime)}"
        with open_private(path, binary=True) as handle:
            handle.write(data)
    except OSError:
        return f"[MCP embedded resource could not be cached: {mime or uri}]"
    return (
        f"[MCP resource saved to {path} ({mime or 'unknown type'}, {len(data)} bytes) — "
        "read it with read_file or terminal tools]"
    )


def file_name(uri: str, mime: str) -> str:
    """The last segment of the URI's path, without control characters or separators, at
    most 150 characters (its extension kept); else `resource<ext>` from the MIME type."""
    try:
        name = unquote(urlparse(uri).path or "").replace("\\", "/").rsplit("/", 1)[-1]
    except ValueError:
        name = ""
    name = _CONTROL.sub("", name).strip()
    if len(name) > 150:
        stem, dot, ext = name.rpartition(".")
        name = stem[: 150 - len(ext) - 1] + "." + ext if dot and 0 < len(ext) <= 12 else name[:150]
    if not name or name in (".", ".."):
        kind = mime.split(";", 1)[0].strip().lower()
        name = f"resource{mimetypes.guess_extension(kind) or '.bin'}"
    return name
