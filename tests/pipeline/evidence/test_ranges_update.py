"""`crawl-audit update-ranges` against an HTTPS server on 127.0.0.1 that the tests start."""
from __future__ import annotations

import functools
import json
import socket
import time
from datetime import date
from pathlib import Path

import pytest
import yaml

from config.registry import load_registry
from config.snapshots import load_ranges
from loopback import Server
from matcher.identity import verify
from pipeline.evidence import ranges_update
from helpers import crawl_audit

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
    "/digits.json": (200, b'{"creationTime": ' + b"9" * 5000 + b', "prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}'),
}


def _route(handler) -> None:
    if handler.path == "/to-http.json":
        handler.answer(302, headers={"Location": f"http://127.0.0.1:{handler.server.server_address[1]}/bingbot.json"})
    elif handler.path == "/huge.json":
        handler.answer(200, b" " * (ranges_update.MAX_BYTES + 1))
    elif handler.path == "/drip.json":
        handler.drip(BING_BODY, every=0.5)
    else:
        status, body = PAGES.get(handler.path, (404, b""))
        handler.answer(status, body, {"Location": "/googlebot.json"} if status == 301 else None)


@pytest.fixture
def server(tls):
    with Server(tls, _route) as running:
        yield running


@pytest.fixture
def update_ranges(tls):
    """update_ranges trusting the test CA, as `--ca-file` makes the command do."""
    return functools.partial(ranges_update.update_ranges, ca_file=str(tls.ca))


def _registry(tmp_path: Path, server, pages: dict[str, str], base: str | None = None) -> Path:
    """A registry whose range sources are `pages` (source name -> path) on the test server,
    each used by one crawler proved by it."""
    base = base or f"https://127.0.0.1:{server.port}"
    document = {
        "range_sources": {name: {"operator": "Example", "url": base + page} for name, page in pages.items()},
        "crawler_classes": {"search": {"description": "test crawlers"}},
        "crawlers": [
            {
                "name": f"{name}-crawler", "operator": "Example", "crawler_class": "search",
                "ua_tokens": [f"Bot{index}"], "robots_tokens": [f"bot{chr(97 + index)}"],
                "honours_robots": True, "honours_crawl_delay": False, "ranges": [name],
                "purposes": ["search-engine"],
            }
            for index, name in enumerate(pages)
        ],
    }
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_sources_are_saved_as_served_under_the_day(server, tmp_path, update_ranges):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json", "google": "/moved.json"}))
    downloads = update_ranges(registry, tmp_path / "ranges", DAY)
    assert [(d.source, d.prefixes) for d in downloads] == [("bingbot", 2), ("google", 2)]
    saved = tmp_path / "ranges" / "bingbot" / "2026-11-29.json"
    assert downloads[0].saved == saved and saved.read_bytes() == BING_BODY
    assert (tmp_path / "ranges" / "google" / "2026-11-29.json").read_bytes() == GOOGLE_BODY  # redirect followed
    assert downloads[0].problems == ()
    assert downloads[1].problems == ("google/2026-11-29.json: prefixes[2] {'ipv4Prefix': 'nonsense'} is not an IP prefix; ignored",)
    assert {agent for _, _, agent in server.seen} == {"crawl-audit-update-ranges/0.1"}

    index = load_ranges(tmp_path / "ranges", registry)
    assert verify(registry.get("bingbot-crawler"), "198.51.100.9", DAY, index).status == "verified"
    assert verify(registry.get("google-crawler"), "2001:db8:1::1", DAY, index).status == "verified"


@pytest.mark.parametrize(
    "page, problem",
    [
        ("/missing.json", "HTTP 404 from https://127.0.0.1:"),
        ("/html.json", "/html.json is not JSON: "),
        ("/empty.json", "bingbot/2026-11-29.json: no usable prefix; snapshot ignored"),
        ("/digits.json", "/digits.json is not JSON: an integer of 5,000 digits (at most 20)"),
    ],
)
def test_a_bad_download_keeps_the_previous_snapshot(server, tmp_path, page, problem, update_ranges):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": page}))
    earlier = tmp_path / "ranges" / "bingbot" / "2026-11-01.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_bytes(BING_BODY)
    (download,) = update_ranges(registry, tmp_path / "ranges", DAY)
    assert download.saved is None
    assert problem in download.problems[-1]
    assert sorted(p.name for p in earlier.parent.iterdir()) == ["2026-11-01.json"]


def test_an_unreachable_server_is_reported(tmp_path, server, update_ranges):
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json"}, f"https://127.0.0.1:{closed}"))
    (download,) = update_ranges(registry, tmp_path / "ranges", DAY, timeout=2)
    assert download.saved is None and download.problems[0].startswith(f"cannot fetch https://127.0.0.1:{closed}")


def test_a_second_download_on_the_same_day_replaces_the_first(server, tmp_path, update_ranges):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json"}))
    target = tmp_path / "ranges" / "bingbot" / "2026-11-29.json"
    target.parent.mkdir(parents=True)
    target.write_text("{}")
    update_ranges(registry, tmp_path / "ranges", DAY)
    assert target.read_bytes() == BING_BODY
    assert [p.name for p in target.parent.iterdir()] == ["2026-11-29.json"]  # no temporary file left


def test_the_command_reports_each_source_and_exits_1_on_a_failure(server, tmp_path, capsys, tls):
    registry = _registry(tmp_path, server, {"bingbot": "/bingbot.json", "google": "/missing.json"})
    argv = [f"--registry={registry}", f"--ranges={tmp_path / 'ranges'}", f"--ca-file={tls.ca}"]
    assert crawl_audit(["update-ranges", *argv]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("bingbot: 2 prefixes -> ") and lines[0].endswith(".json")
    missing = f"https://127.0.0.1:{server.port}/missing.json"
    assert lines[1:3] == ["google: NOT SAVED", f"  HTTP 404 from {missing}"]
    assert lines[3].startswith(f"saved 1 of 2 under {tmp_path / 'ranges'}; without a download: `run --ranges DIR`")
    assert crawl_audit(["update-ranges", *argv, "--source=bingbot"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"saved all 1 under {tmp_path / 'ranges'}"
    assert crawl_audit(["update-ranges", *argv, "--source=nope"]) == 2
    assert "unknown range source nope (known: bingbot, google)" in capsys.readouterr().err


def _not_saved(tmp_path, server, update_ranges, page, base=None, **options):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": page}, base))
    (download,) = update_ranges(registry, tmp_path / "ranges", DAY, **options)
    assert download.saved is None and not (tmp_path / "ranges" / "bingbot").exists()
    return download.problems[-1]


def test_plain_http_sources_are_refused_without_a_request(tmp_path, server, update_ranges):
    problem = _not_saved(tmp_path, server, update_ranges, "/bingbot.json", base=f"http://127.0.0.1:{server.port}")
    assert problem == f"refused http://127.0.0.1:{server.port}/bingbot.json: only https:// URLs are fetched"
    assert server.seen == []


def test_a_redirect_to_another_scheme_is_not_followed(tmp_path, server, update_ranges):
    problem = _not_saved(tmp_path, server, update_ranges, "/to-http.json")
    assert problem.startswith(f"HTTP 302 from https://127.0.0.1:{server.port}/to-http.json: redirect to http://")
    assert problem.endswith("refused: HTTPS only")
    assert [path for _, path, _ in server.seen] == ["/to-http.json"]


@pytest.mark.slow
def test_a_dripping_server_is_cut_off_at_the_overall_deadline(tmp_path, server, update_ranges):
    # One byte every 0.5 s: each socket read succeeds, so only an overall deadline stops it.
    started = time.monotonic()
    problem = _not_saved(tmp_path, server, update_ranges, "/drip.json", timeout=2)
    elapsed = time.monotonic() - started
    assert problem == f"no complete answer from https://127.0.0.1:{server.port}/drip.json within 2s"
    assert 1.9 < elapsed < 3.0


def test_a_body_over_the_size_cap_is_not_saved(tmp_path, server, update_ranges):
    problem = _not_saved(tmp_path, server, update_ranges, "/huge.json")
    assert problem == f"https://127.0.0.1:{server.port}/huge.json is larger than {ranges_update.MAX_BYTES} bytes"


def test_an_untrusted_certificate_is_refused(tmp_path, server):
    registry = load_registry(_registry(tmp_path, server, {"bingbot": "/bingbot.json"}))
    (download,) = ranges_update.update_ranges(registry, tmp_path / "ranges", DAY)  # system CAs only
    assert download.saved is None
    assert "certificate not trusted" in download.problems[-1]


def test_update_ranges_saves_into_the_user_data_folder_which_run_and_verify_read(server, tmp_path, tls, monkeypatch, capsys):
    """Without --ranges the snapshots go to the user's data folder, never into the installed
    package, and `verify` reads them from there."""
    import config

    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    package = Path(config.__file__).parent
    before = sorted(path.relative_to(package) for path in package.rglob("*") if "__pycache__" not in path.parts)
    registry = _registry(tmp_path, server, {"bingbot": "/bingbot.json"})
    assert crawl_audit(["update-ranges", "--registry", str(registry), "--ca-file", str(tls.ca)]) == 0
    (saved,) = (data / "crawl-audit" / "ranges" / "bingbot").glob("*.json")
    assert saved.read_bytes() == BING_BODY
    assert f"-> {saved}" in capsys.readouterr().out
    assert sorted(path.relative_to(package) for path in package.rglob("*") if "__pycache__" not in path.parts) == before
    assert crawl_audit(["verify", "192.0.2.1", "Bot0/1.0", "--registry", str(registry)]) == 0
    assert "verified" in capsys.readouterr().out


def test_without_snapshots_in_the_data_folder_verify_says_unverified_not_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "never-made"))
    assert crawl_audit(["verify", "66.249.66.1", "Googlebot/2.1"]) == 1
    out = capsys.readouterr().out
    assert "unverified" in out and "no range snapshot" in out
    assert not (tmp_path / "never-made").exists()  # reading makes nothing
