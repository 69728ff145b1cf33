"""A resolver that answers NXDOMAIN for addresses the published ranges prove is not trusted to
prove a claim spoofed: against real dnsmasq, a run with `--dns live` leaves those claims
`unverified` with the reason, and run health says so; a resolver that knows the crawler's PTR
records still proves the fakes."""
from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, REPO, log_line, read_jsonl, run_audit, write_jsonl
from localdns import dnsmasq_binary, running_dnsmasq

REAL = "66.249.66.1"  # in the sample's google-common-crawlers snapshot
OUTSIDE = "203.0.113.9"  # in no published range: DNS decides
DENY_ALL = ["--address=/in-addr.arpa/"]  # NXDOMAIN for every PTR question
KNOWS = [f"--ptr-record=1.66.249.66.in-addr.arpa,crawl-66-249-66-1.googlebot.com", "--address=/113.0.203.in-addr.arpa/"]


def _binary() -> str:
    binary = dnsmasq_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("dnsmasq not found; CI=true requires it")
        pytest.skip("dnsmasq not found (Debian package dnsmasq-base)")
    return binary


def audit_with(records: list[str], tmp_path: Path, capsys) -> tuple[dict[str, dict], str]:
    (tmp_path / "dns").mkdir()
    write_jsonl(tmp_path / "robots.jsonl", [
        {"host": "mysite.test", "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": "User-agent: *\nDisallow: /private/\n"},
    ])
    start = datetime(2026, 11, 2, 8, tzinfo=timezone.utc)
    lines = [log_line("mysite.test", start + timedelta(minutes=i), "/private/x", GOOGLEBOT, ip=ip)
             for i, ip in enumerate([REAL, OUTSIDE] * 3)]
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    with running_dnsmasq(_binary(), tmp_path / "dns", records, probe="probe.test") as server:
        capsys.readouterr()
        assert run_audit([
            f"--logs={tmp_path / 'access.log'}", "--log-format=host_combined", f"--robots={tmp_path / 'robots.jsonl'}",
            f"--ranges={REPO / 'samples/ranges'}", f"--out={tmp_path / 'out'}", "--runner=FnApiRunner",
            "--dns=live", f"--dns-server=127.0.0.1:{server.port}", "--dns-timeout=1", "--dns-retries=0",
        ]) == 0
        said = capsys.readouterr().out
    verdicts = {v["client_ip"]: v for v in read_jsonl(tmp_path / "out" / "verdicts")}
    return verdicts, said


@pytest.mark.slow
def test_a_resolver_denying_range_proven_addresses_proves_nothing_spoofed(tmp_path, capsys):
    verdicts, said = audit_with(DENY_ALL, tmp_path, capsys)
    assert verdicts[REAL]["identity"] == "verified"
    outside = verdicts[OUTSIDE]
    assert outside["identity"] == "unverified"
    assert f"the resolver answered nxdomain for {REAL}, which the published ranges prove" in outside["identity_evidence"]
    assert "[resolver] the resolver answered NXDOMAIN for addresses the published ranges prove" in said
    assert "3 requests it would have made spoofed stay unverified" in said
    assert "fix: --dns-server HOST:PORT" in said


@pytest.mark.slow
def test_a_resolver_that_knows_the_crawler_still_proves_the_fakes(tmp_path, capsys):
    verdicts, said = audit_with(KNOWS, tmp_path, capsys)
    assert verdicts[REAL]["identity"] == "verified"
    assert verdicts[OUTSIDE]["identity"] == "spoofed"
    assert "PTR of 203.0.113.9: nxdomain" in verdicts[OUTSIDE]["identity_evidence"]
    assert "[resolver]" not in said
