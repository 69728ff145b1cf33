"""A whole round trip: capture a site's robots.txt three times with a change in between,
audit a log against the captures folder with `crawl-audit run`, and find the decision the
capture history cannot settle where it belongs."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from helpers import log_line, read_jsonl
from loopback import Server
from pipeline.cli import main as cli
from pipeline.report import text as report
from pipeline.evidence.history_capture import capture, robots_client

BLOCKING = b"User-agent: *\nDisallow: /private\n"
OPEN = b"User-agent: *\nAllow: /private\nDisallow: /search\n"
T = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
FOOBOT = "FooBot/1.0 (+https://foo.example/bot)"


def _line(when: datetime, path: str) -> str:
    return log_line("site.example", when, path, FOOBOT, ip="198.51.100.7")


# (request time, path, decision, reason)
REQUESTS = [
    (T + timedelta(minutes=30), "/private/a", "disallowed", "rule"),  # BLOCKING seen again at 11:00
    (T + timedelta(hours=1, minutes=30), "/private/b", "disallowed-between-captures", "change-time-unknown"),
    (T + timedelta(hours=1, minutes=40), "/search?q=1", "allowed", "no-match"),  # the earlier one allows it
    (T + timedelta(hours=2, minutes=30), "/private/c", "allowed", "rule"),  # OPEN seen at 12:00
    (T + timedelta(hours=2, minutes=40), "/search?q=2", "disallowed-within-grace", "rule"),
]


@pytest.fixture
def captures(tls, tmp_path):
    bodies = iter([BLOCKING, BLOCKING, OPEN])
    with Server(tls, lambda handler: handler.answer(200, next(bodies))) as server:
        client = robots_client(timeout=5, ca_file=str(tls.ca), connect_to={"site.example": ("127.0.0.1", server.port)})
        for hour in range(3):
            capture(["site.example"], tmp_path / "captures", client, now=lambda hour=hour: T + timedelta(hours=hour))
    return tmp_path / "captures"


@pytest.mark.slow
def test_a_request_between_two_captures_is_judged_by_both_candidates(captures, tmp_path, capsys):
    assert sorted(p.name for p in (captures / "site.example").iterdir()) == [
        "20261102T100000Z.txt", "20261102T120000Z.txt", "observations.log"
    ]
    logs = tmp_path / "access.log"
    logs.write_text("".join(_line(when, path) + "\n" for when, path, _, _ in REQUESTS))
    out = tmp_path / "out"
    argv = ["run", f"--logs={logs}", "--log-format=host_combined", f"--robots={captures}", f"--out={out}",
            "--dns=off", "--runner=FnApiRunner"]
    assert cli.main(argv) == 0

    verdicts = sorted(read_jsonl(out / "verdicts"), key=lambda verdict: verdict["ts"])
    assert [(v["path"], v["decision"], v["reason"]) for v in verdicts] == [
        (path, decision, reason) for _, path, decision, reason in REQUESTS
    ]
    between = verdicts[1]
    # Both candidates are named: the version in effect by its effective_from, whose rule
    # disallowed, and the later one, which allowed and may already have been served.
    assert between["robots_version"]["effective_from"] == "2026-11-02T10:00:00Z"
    assert between["rule_pattern"] == "/private"
    assert between["later_version"] == {
        "effective_from": "2026-11-02T12:00:00Z", "status": "200",
        "sha256": hashlib.sha256(OPEN).hexdigest(), "observed_before": "2026-11-02T11:00:00Z",
    }
    assert all(v["later_version"] is None for v in verdicts if v is not between)

    (row,) = report.load(str(out)).rows
    assert (row["requests"], row["allowed"], row["disallowed"], row["within_grace"], row["between_captures"]) == (
        5, 2, 1, 1, 1
    )
    printed = capsys.readouterr().out.splitlines()
    header = next(line for line in printed if line.startswith("crawler"))
    assert header.split() == ["crawler", "identity", "requests", "bytes", "allowed", "disallowed", "within_grace",
                              "before_refetch", "between_captures", "unknown"]
    # The report names the change and both candidates.
    section = printed.index(next(line for line in printed if line.startswith("disallowed between captures")))
    assert printed[section + 1].split() == ["host", "crawler", "in", "effect", "from", "changed", "within", "requests"]
    assert printed[section + 2].split() == [
        "site.example", "foobot", "2026-11-02T10:00:00Z", "2026-11-02T11:00:00Z", "..", "2026-11-02T12:00:00Z", "1"
    ]
