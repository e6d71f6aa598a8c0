"""web_search / web_extract: unavailable without a key; with one, real HTTP to 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from tests.support.http import JSONHandler
from workbench.core.tools.invoke import call_tool
from workbench.core.tools.registry import registry

KEY = "fc-test-key"


class FirecrawlHandler(JSONHandler):
    """A small Firecrawl v1 API: /v1/search and /v1/scrape, bearer-key checked."""

    requests: list[tuple[str, dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body))
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            return self.send_json(401, {"success": False, "error": "Unauthorized: invalid token"})
        if self.path == "/v1/search":
            data = [
                {"title": f"Result {i}", "url": f"https://example.org/{i}", "description": "d"}
                for i in range(body["limit"])
            ]
            return self.send_json(200, {"success": True, "data": data})
        if self.path == "/v1/scrape":
            if "broken" in body["url"]:
                return self.send_json(500, {"success": False, "error": "scrape failed"})
            page = {"markdown": f"# Page\n{body['url']}\n" + "z" * 3000, "metadata": {"title": "T"}}
            return self.send_json(200, {"success": True, "data": page})
        return self.send_json(404, {"success": False, "error": "no such endpoint"})


@pytest.fixture
def firecrawl(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[FirecrawlHandler]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FirecrawlHandler)
    FirecrawlHandler.requests = []
    # shutdown() waits for the loop to see it: poll often, not every 0.5 s
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    monkeypatch.setenv("FIRECRAWL_API_URL", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("FIRECRAWL_API_KEY", KEY)
    registry.invalidate_check_fn_cache()
    yield FirecrawlHandler
    server.shutdown()
    server.server_close()
    registry.invalidate_check_fn_cache()


def test_unavailable_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIRECRAWL_API_KEY", raising=False)
    registry.invalidate_check_fn_cache()
    for name in ("web_search", "web_extract"):
        availability = registry.availability(name)
        assert not availability.available
        assert "missing environment variable: FIRECRAWL_API_KEY" in availability.reason
    assert registry.get_definitions({"web_search", "web_extract"}) == []


def test_search_over_real_http(firecrawl) -> None:
    assert registry.availability("web_search").available
    out = json.loads(call_tool(registry, "web_search", {"query": "hermes agent", "limit": 2}))
    assert out["results"] == [
        {"title": "Result 0", "url": "https://example.org/0", "description": "d"},
        {"title": "Result 1", "url": "https://example.org/1", "description": "d"},
    ]
    assert firecrawl.requests == [("/v1/search", {"query": "hermes agent", "limit": 2})]


def test_extract_clips_pages_and_reports_per_url_errors(firecrawl) -> None:
    args = {"urls": ["https://a.example", "https://broken.example"], "char_limit": 1000}
    out = json.loads(call_tool(registry, "web_extract", args))
    first, second = out["results"]
    assert first["title"] == "T" and first["content"].startswith("# Page\nhttps://a.example")
    assert "characters omitted" in first["content"] and len(first["content"]) < 1100
    assert second["url"] == "https://broken.example" and "HTTP 500" in second["error"]


def test_a_rejected_key_is_a_clear_error(firecrawl, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "wrong")
    out = json.loads(call_tool(registry, "web_search", {"query": "x"}))
    assert out["error"].startswith("web_search failed: HTTP 401")
    assert "invalid token" in out["error"]


def test_an_unreachable_server_is_a_clear_error(firecrawl, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("FIRECRAWL_API_URL", f"http://127.0.0.1:{port}")
    out = json.loads(call_tool(registry, "web_search", {"query": "x"}))
    assert "cannot reach" in out["error"] and "refused" in out["error"].lower()
