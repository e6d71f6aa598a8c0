"""MCP call results in Hermes's shapes (those of its `tools/mcp_tool.py`).

Text and structured content become `{"result": ...}` JSON; images make Hermes's multimodal
envelope; embedded resources and resource links are rendered as text; `is_error` becomes
`{"error": ...}`, which is the model's business, never a transport failure (Hermes counted
them toward its breaker and locked a healthy server out).
"""

from __future__ import annotations

import json
from typing import Any


def convert(result: Any) -> str | dict[str, Any]:
    texts, images = [], []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            images.append(block)
            texts.append(f"[{kind}: {getattr(block, 'mime_type', '')}]")
        elif kind == "resource":
            texts.append(_resource(block.resource))
        elif kind == "resource_link":
            texts.append(f"[resource link: {getattr(block, 'name', '')} {block.uri}]")
    text = "\n".join(texts)
    if getattr(result, "is_error", False):
        return json.dumps({"error": text or "the MCP tool reported an error"}, ensure_ascii=False)
    structured = getattr(result, "structured_content", None)
    if images:
        return _envelope(text, images, structured)
    if structured is not None:
        payload: dict[str, Any] = (
            {"result": text, "structuredContent": structured} if text else {"result": structured}
        )
        return json.dumps(payload, ensure_ascii=False)
    return json.dumps({"result": text}, ensure_ascii=False)


def _resource(resource: Any) -> str:
    uri = str(getattr(resource, "uri", ""))
    if getattr(resource, "text", None) is not None:
        return f"[resource {uri}]\n{resource.text}"
    blob = getattr(resource, "blob", "") or ""
    mime = getattr(resource, "mime_type", "") or "binary"
    return f"[resource {uri}: {mime}, {len(blob) * 3 // 4:,} bytes]"


def _envelope(text: str, images: list[Any], structured: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        if image.type == "image":
            url = f"data:{image.mime_type};base64,{image.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    summary = (
        text if structured is None else f"{text}\n{json.dumps(structured, ensure_ascii=False)}"
    )
    return {"_multimodal": True, "content": parts, "text_summary": summary}
