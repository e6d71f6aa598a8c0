"""web_search and web_extract over the Firecrawl API (hosted, or self-hosted via FIRECRAWL_API_URL).

Both need FIRECRAWL_API_KEY; without it they are unavailable and say so. The HTTP client is
the standard library's, imported on first use, so this module costs nothing at start-up.
"""

from __future__ import annotations

import json
import os
from typing import Any

from workbench.builtins.api import ToolUnavailable, registry, tool_error, tool_result

API_KEY_ENV = "FIRECRAWL_API_KEY"
API_URL_ENV = "FIRECRAWL_API_URL"
DEFAULT_API_URL = "https://api.firecrawl.dev"
HTTP_TIMEOUT = 30.0
DEFAULT_CHAR_LIMIT = 15_000
MAX_URLS = 5

WEB_SEARCH_SCHEMA = {
    "description": "Search the web. Returns titles, URLs and short descriptions.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for"},
            "limit": {"type": "integer", "default": 5, "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
    },
}

WEB_EXTRACT_SCHEMA = {
    "description": f"Fetch up to {MAX_URLS} web pages and return their content as Markdown.",
    "parameters": {
        "type": "object",
        "properties": {
            "urls": {"type": "array", "items": {"type": "string"}, "description": "Page URLs"},
            "char_limit": {
                "type": "integer",
                "description": f"Characters per page (default {DEFAULT_CHAR_LIMIT})",
                "minimum": 500,
            },
        },
        "required": ["urls"],
    },
}


class WebError(Exception):
    pass


def check_web_api_key() -> bool:
    if not os.environ.get(API_KEY_ENV, "").strip():
        raise ToolUnavailable(
            f"missing environment variable: {API_KEY_ENV} "
            f"(and {API_URL_ENV} for a self-hosted Firecrawl)"
        )
    return True


def _post(endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    import urllib.error  # imported on first use: urllib.request pulls in ssl and http
    import urllib.request

    base = os.environ.get(API_URL_ENV, "").strip().rstrip("/") or DEFAULT_API_URL
    url = f"{base}{endpoint}"
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {os.environ.get(API_KEY_ENV, '').strip()}",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            payload = json.loads(response.read().decode("utf-8", errors="replace"))
    except urllib.error.HTTPError as exc:
        detail = exc.read(300).decode("utf-8", errors="replace").strip()
        raise WebError(f"HTTP {exc.code} {exc.reason} from {url}: {detail}") from None
    except urllib.error.URLError as exc:
        raise WebError(f"cannot reach {url}: {exc.reason}") from None
    except (TimeoutError, json.JSONDecodeError, OSError) as exc:
        raise WebError(f"bad response from {url}: {exc}") from None
    if not isinstance(payload, dict) or payload.get("success") is False:
        raise WebError(f"{url} answered with an error: {str(payload)[:300]}")
    return payload


def web_search(args: dict[str, Any], **_: Any) -> str:
    try:
        payload = _post("/v1/search", {"query": args["query"], "limit": args.get("limit") or 5})
    except WebError as exc:
        return tool_error(f"web_search failed: {exc}")
    results = [
        {
            "title": item.get("title", ""),
            "url": item.get("url", ""),
            "description": item.get("description", ""),
        }
        for item in payload.get("data") or []
        if isinstance(item, dict)
    ]
    return tool_result(query=args["query"], results=results)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return (
        f"{text[:half]}\n\n[... {len(text) - 2 * half:,} characters omitted ...]\n\n{text[-half:]}"
    )


def web_extract(args: dict[str, Any], **_: Any) -> str:
    urls = [u for u in args["urls"] if isinstance(u, str) and u.strip()][:MAX_URLS]
    if not urls:
        return tool_error("web_extract needs at least one URL")
    limit = int(args.get("char_limit") or DEFAULT_CHAR_LIMIT)
    pages = []
    for url in urls:
        try:
            data = _post("/v1/scrape", {"url": url, "formats": ["markdown"]}).get("data") or {}
        except WebError as exc:
            pages.append({"url": url, "error": str(exc)})
            continue
        title = (data.get("metadata") or {}).get("title", "")
        pages.append(
            {"url": url, "title": title, "content": _clip(data.get("markdown") or "", limit)}
        )
    return tool_result(results=pages)


for _name, _schema, _handler, _emoji in (
    ("web_search", WEB_SEARCH_SCHEMA, web_search, "🔍"),
    ("web_extract", WEB_EXTRACT_SCHEMA, web_extract, "📄"),
):
    registry.register(
        _name,
        "web",
        _schema,
        _handler,
        check_web_api_key,
        [API_KEY_ENV],
        emoji=_emoji,
        max_result_size_chars=100_000,
        parallel_safe=True,
    )
