"""What a server offers besides tools: its resources, resource templates and prompts.

Plain data the front ends show (the Sources panel, `hermes-tui mcp ...`), converted from
the SDK's models once; and the readings of a resource or a prompt as text a person reads.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote

MAX_TEXT = 2_000_000  # characters of one resource kept for showing; the rest is said


@dataclass(frozen=True)
class ServerInfo:
    """What the server said about itself when it connected."""

    name: str = ""
    version: str = ""
    protocol: str = ""
    instructions: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)

    def can(self, capability: str) -> bool:
        return self.capabilities.get(capability) is not None


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None


@dataclass(frozen=True)
class Template:
    uri_template: str
    name: str = ""
    description: str = ""
    mime_type: str = ""

    @property
    def variables(self) -> list[str]:
        return template_variables(self.uri_template)


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass
class Catalog:
    """One server's resources, templates and prompts; `errors` says what could not be listed."""

    resources: list[Resource] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # kind -> why it is not listed
    listed: bool = False  # False until the server's first listing is done

    def prompt(self, name: str) -> Prompt | None:
        return next((p for p in self.prompts if p.name == name), None)


@dataclass(frozen=True)
class Content:
    """One part of a resource read: text, or binary shown as its size and type."""

    uri: str
    mime_type: str
    text: str | None = None
    size: int = 0  # bytes, for binary content

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# -- from the SDK's models ----------------------------------------------------------------


def server_info(client: Any) -> ServerInfo:
    info = getattr(client, "server_info", None)
    capabilities = getattr(client, "server_capabilities", None)
    return ServerInfo(
        name=str(getattr(info, "name", "") or ""),
        version=str(getattr(info, "version", "") or ""),
        protocol=str(getattr(client, "protocol_version", "") or ""),
        instructions=str(getattr(client, "instructions", "") or ""),
        capabilities=(
            capabilities.model_dump(mode="json", exclude_none=True, by_alias=True)
            if capabilities is not None
            else {}
        ),
    )


def resource(model: Any) -> Resource:
    return Resource(
        str(model.uri),
        str(model.name or ""),
        str(model.description or ""),
        str(model.mime_type or ""),
        model.size,
    )


def template(model: Any) -> Template:
    return Template(
        str(model.uri_template),
        str(model.name or ""),
        str(model.description or ""),
        str(model.mime_type or ""),
    )


def prompt(model: Any) -> Prompt:
    arguments = tuple(
        PromptArgument(str(a.name), str(a.description or ""), bool(a.required))
        for a in model.arguments or []
    )
    return Prompt(str(model.name), str(model.description or ""), arguments)


def contents(result: Any) -> list[Content]:
    """A `resources/read` result as text parts and binary parts (size and type only)."""
    parts = []
    for item in getattr(result, "contents", None) or []:
        uri, mime = str(item.uri), str(getattr(item, "mime_type", "") or "")
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(Content(uri, mime or "text/plain", str(text)))
        else:
            parts.append(Content(uri, mime or "application/octet-stream", None, _size(item.blob)))
    return parts


def _size(blob: str) -> int:
    try:
        return len(base64.b64decode(blob, validate=False))
    except (binascii.Error, ValueError):
        return len(blob) * 3 // 4


# -- for a person -------------------------------------------------------------------------


def render_contents(parts: list[Content]) -> str:
    """Text as it is (JSON pretty-printed), binary as its size and MIME type."""
    if not parts:
        return "(the server returned no content)"
    chunks = []
    for part in parts:
        head = f"── {part.uri} ({part.mime_type})" if len(parts) > 1 else ""
        if part.text is None:
            body = f"[binary: {part.size:,} bytes, {part.mime_type}]"
        else:
            body = _pretty(part.text, part.mime_type)
        chunks.append(f"{head}\n{body}" if head else body)
    text = "\n\n".join(chunks)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT:,} more characters not shown)"
    return text


def _pretty(text: str, mime: str) -> str:
    looks_json = "json" in mime or text.lstrip()[:1] in ("{", "[")
    if not looks_json:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def render_prompt(result: Any) -> str:
    """A `prompts/get` result: each message with its role, content as text."""
    lines = [str(result.description)] if getattr(result, "description", None) else []
    for message in getattr(result, "messages", None) or []:
        lines.append(f"[{message.role}]")
        lines.append(_content_text(message.content))
    return "\n".join(lines)


def prompt_messages(result: Any) -> list[dict[str, Any]]:
    return [
        {"role": str(m.role), "content": _content_text(m.content)}
        for m in getattr(result, "messages", None) or []
    ]


def _content_text(content: Any) -> str:
    kind = getattr(content, "type", "")
    if kind == "text":
        return str(content.text)
    if kind == "resource":
        return render_contents(contents(type("R", (), {"contents": [content.resource]})()))
    if kind == "resource_link":
        return f"[resource link: {content.uri}]"
    if kind in ("image", "audio"):
        return f"[{kind}: {_size(content.data):,} bytes, {content.mime_type}]"
    return f"[{kind or 'content'}]"


# -- forms --------------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]+)\}")


def template_variables(uri_template: str) -> list[str]:
    names: list[str] = []
    for _, spec in _EXPRESSION.findall(uri_template):
        for name in spec.split(","):
            name = name.strip().rstrip("*").split(":")[0]
            if name and name not in names:
                names.append(name)
    return names


def expand_template(uri_template: str, values: dict[str, Any]) -> str:
    """An RFC 6570 expansion of the forms servers use: {x}, {+x}, {#x}, {/x}, {.x}, {?x,y},
    {&x}, {;x}. Simple values are percent-encoded, so a value never changes the URI's shape."""

    def expand(match: re.Match[str]) -> str:
        operator, spec = match.group(1), match.group(2)
        names = [n.strip().rstrip("*").split(":")[0] for n in spec.split(",")]
        present = [(n, str(values[n])) for n in names if values.get(n) not in (None, "")]
        safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""
        encoded = [(n, quote(v, safe=safe)) for n, v in present]
        if not encoded:
            return ""
        if operator in ("", "+"):
            return ",".join(v for _, v in encoded)
        if operator == "#":
            return "#" + ",".join(v for _, v in encoded)
        if operator in ("/", "."):
            return "".join(operator + v for _, v in encoded)
        if operator in ("?", "&"):
            return operator + "&".join(f"{n}={v}" for n, v in encoded)
        return "".join(f";{n}={v}" for n, v in encoded)  # ";"

    return _EXPRESSION.sub(expand, uri_template)


def template_schema(item: Template) -> dict[str, Any]:
    """A run-form schema for a template's variables (strings; every one needed)."""
    return {
        "type": "object",
        "description": item.description or item.uri_template,
        "properties": {name: {"type": "string", "description": name} for name in item.variables},
        "required": list(item.variables),
    }


def prompt_schema(item: Prompt) -> dict[str, Any]:
    """A run-form schema for a prompt's arguments (prompt arguments are strings)."""
    return {
        "type": "object",
        "description": item.description,
        "properties": {
            a.name: {"type": "string", "description": a.description} for a in item.arguments
        },
        "required": [a.name for a in item.arguments if a.required],
    }


def prompt_arguments(item: Prompt, values: Any) -> dict[str, str]:
    """Check a prompt's arguments: a JSON object of strings, the required ones present,
    no unknown names. Raises ValueError saying what is wrong."""
    if not isinstance(values, dict):
        raise ValueError("the arguments must be a JSON object of strings")
    known = {a.name for a in item.arguments}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"prompt {item.name} has no argument {', '.join(unknown)} "
            f"(its arguments: {', '.join(sorted(known)) or 'none'})"
        )
    missing = [a.name for a in item.arguments if a.required and values.get(a.name) in (None, "")]
    if missing:
        raise ValueError(f"prompt {item.name} needs {', '.join(missing)}")
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        out[name] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return out


def reading_path(home: Any, server: str, key: str) -> Any:
    """Where a reading of `key` (a URI, a prompt) from `server` is kept for the viewer: a
    private folder of HERMES_HOME, a file name no server can steer (a slug and a hash)."""
    import hashlib
    from pathlib import Path

    from workbench.core.storage.private import private_dir

    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[-60:].strip("._") or "reading"
    digest = hashlib.sha256(f"{server}\0{key}".encode()).hexdigest()[:10]
    folder = private_dir(Path(home) / "state" / "mcp" / re.sub(r"[^A-Za-z0-9_-]", "_", server))
    return folder / f"{slug}-{digest}.txt"
