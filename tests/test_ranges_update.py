"""`crawl-audit update-ranges` against an HTTP server on 127.0.0.1 that the tests start."""
from __future__ import annotations

import json
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher.identity import verify
from pipeline.identity_cli import update_ranges_command
from pipeline.ranges_update import update_ranges

DAY = date(2026, 11, 29)
# Bing's file has carried zero-width spaces inside prefixes; this one also starts with a BOM.
BING_BODY = (
    "\ufeff" + json.dumps({
        "creationTime": "2026-11-28T00:00:00",
        "prefixes": [{"ipv4Prefix": "192.0.2.0/26\u200b"}, {"ipv4Prefix": "\u200b198.51.100.0/24"}],
    }, ensure_ascii=False)
).encode("utf-8")
GOOGLE_BODY = json.dumps({
    "creationTime": "2026-11-28T00:00:00",
    "prefixes": [{"ipv4Prefix": "203.0.113.0/24"}, {"ipv6Prefix": "2001:db8:1::/48"}, {"ipv4Prefix": "nonsense"}],
}).encode()
PAGES = {
    "/bingbot.json": (200, BING_BODY),
    "/googlebot.json": (200, GOOGLE_BODY),
    "/moved.json": (301, b""),
    "/missing.json": (404, b"<html>not found</html>"),
    "/html.json": (200, b"<html>maintenance</html>"),
    "/empty.json": (200, b'{"creationTime": "x", "prefixes": []}'),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body = PAGES.get(self.path, (404, b""))
        self.send_response(status)
        if status == 301:
            self.send_header("Location", "/googlebot.json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.server.agents.append(self.headers.get("User-Agent"))

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.agents = []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    thread.join()
    httpd.server_close()


def _registry(tmp_path: Path, server, pages: dict[str, str]) -> Path:
    """A registry whose range sources are `pages` (source name -> path) on the test server,
    each used by one crawler proved by it."""
    base = f"http://127.0.0.1:{server.server_address[1]}"
    document = {
        "range_sources": {name: {"operator": "Example", "url": base + page} for name, page in pages.items()},
        "crawler_classes": {"search": {"description": "test crawlers"}},
        "crawlers": [
            {
                "name": f"{name}-crawler", "operator": "Example", "crawler_class": "search",
                "ua_tokens": [f"Bot{index}"], "robots_tokens": [f"bot{chr(97 + index)}"],
                "honours_robots": True, "honours_crawl_delay": False, "ranges": [name],
            }
            for index, name in enumerate(pages)
        ],
    }
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_sources_are_saved_as_served_under_the_day(server, tmp_path):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json", "google": "/moved.json"}))
    downloads = update_ranges(registry, tmp_path / "ranges", DAY)
    assert [(d.source, d.prefixes) for d in downloads] == [("bingbot", 2), ("google", 2)]
    saved = tmp_path / "ranges" / "bingbot" / "2026-11-29.json"
    assert downloads[0].saved == saved and saved.read_bytes() == BING_BODY
    assert (tmp_path / "ranges" / "google" / "2026-11-29.json").read_bytes() == GOOGLE_BODY  # redirect followed
    assert downloads[0].problems == ()
    assert downloads[1].problems == ("google/2026-11-29.json: prefixes[2] {'ipv4Prefix': 'nonsense'} is not an IP prefix; ignored",)
    assert set(server.agents) == {"crawl-audit-update-ranges/0.1"}

    index = load_ranges(tmp_path / "ranges", registry)
    assert verify(registry.get("bingbot-crawler"), "198.51.100.9", DAY, index).status == "verified"
    assert verify(registry.get("google-crawler"), "2001:db8:1::1", DAY, index).status == "verified"


@pytest.mark.parametrize(
    "page, problem",
    [
        ("/missing.json", "HTTP 404 from http://127.0.0.1:"),
        ("/html.json", "/html.json is not JSON: "),
        ("/empty.json", "bingbot/2026-11-29.json: no usable prefix; snapshot ignored"),
    ],
)
def test_a_bad_download_keeps_the_previous_snapshot(server, tmp_path, page, problem):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": page}))
    earlier = tmp_path / "ranges" / "bingbot" / "2026-11-01.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_bytes(BING_BODY)
    (download,) = update_ranges(registry, tmp_path / "ranges", DAY)
    assert download.saved is None
    assert problem in download.problems[-1]
    assert sorted(p.name for p in earlier.parent.iterdir()) == ["2026-11-01.json"]


def test_an_unreachable_server_is_reported(tmp_path, server):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json"}))
    server.shutdown()
    server.server_close()  # the port now refuses connections
    (download,) = update_ranges(registry, tmp_path / "ranges", DAY, timeout=2)
    assert download.saved is None and download.problems[0].startswith("cannot fetch http://127.0.0.1:")


def test_a_second_download_on_the_same_day_replaces_the_first(server, tmp_path):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json"}))
    target = tmp_path / "ranges" / "bingbot" / "2026-11-29.json"
    target.parent.mkdir(parents=True)
    target.write_text("{}")
    update_ranges(registry, tmp_path / "ranges", DAY)
    assert target.read_bytes() == BING_BODY
    assert [p.name for p in target.parent.iterdir()] == ["2026-11-29.json"]  # no temporary file left


def test_the_command_reports_each_source_and_exits_1_on_a_failure(server, tmp_path, capsys):
    registry = _registry(tmp_path, server, {"bingbot": "/bingbot.json", "google": "/missing.json"})
    argv = [f"--registry={registry}", f"--ranges={tmp_path / 'ranges'}"]
    assert update_ranges_command(argv) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("bingbot: 2 prefixes -> ") and lines[0].endswith(".json")
    missing = f"http://127.0.0.1:{server.server_address[1]}/missing.json"
    assert lines[1:] == ["google: NOT SAVED", f"  HTTP 404 from {missing}"]
    assert update_ranges_command([*argv, "--source=bingbot"]) == 0
    assert update_ranges_command([*argv, "--source=nope"]) == 2
    assert "unknown range source nope (known: bingbot, google)" in capsys.readouterr().err
