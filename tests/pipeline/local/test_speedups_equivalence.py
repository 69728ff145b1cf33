"""The local speed-ups change which processes run a batch audit and where its groupings keep their
data, never what it writes: each input below is audited with them on and off, and every table
holds the same rows and `report.html` the same bytes. The inputs: the bundled sample, a drawn log
of robots.txt changes, fetches, grace and Crawl-delay, and a log that starts worker processes."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import BINGBOT, BINGBOT_IP, GOOGLEBOT, REPO, log_line, read_jsonl, run_audit, write_jsonl
from pipeline.local import workers
from pipeline.tables.run_folder import MANIFEST

pytestmark = pytest.mark.slow

T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
CLIENTS = [
    (BINGBOT, BINGBOT_IP),
    (GOOGLEBOT, "66.249.66.1"),
    (GOOGLEBOT, "203.0.113.9"),  # in no range: spoofed
    (CLAUDEBOT, "216.73.216.10"),
]
PATHS = ["/", "/a", "/new/page", "/private/x", "/robots.txt"]


def _audit_twice(folder: Path, argv: list[str]) -> tuple[Path, Path]:
    """FOLDER/on and FOLDER/off: the run of ARGV with the speed-ups on and off."""
    for switch in ("on", "off"):
        assert run_audit([*argv, f"--out={folder / switch}", f"--local-speedups={switch}", "--runner=FnApiRunner"]) == 0
    return folder / "on", folder / "off"


def _tables(out: Path) -> dict[str, list[str]]:
    """Every table the manifest lists, each as its rows in a canonical order."""
    manifest = json.loads((out / MANIFEST).read_text())
    tables = {}
    for name, table in manifest["tables"].items():
        rows = []
        for file in table["files"]:
            text = (out / file).read_text(encoding="utf-8")
            documents = [json.loads(line) for line in text.splitlines()] if file.endswith(".jsonl") else [json.loads(text)]
            rows += [json.dumps(row, sort_keys=True) for row in documents]
        tables[name] = sorted(rows)
    return tables


def _assert_same_audit(on: Path, off: Path) -> None:
    on_tables, off_tables = _tables(on), _tables(off)
    assert on_tables.keys() == off_tables.keys()
    for name in on_tables:
        assert on_tables[name] == off_tables[name], name
    assert on_tables["verdicts"], "the input must yield verdicts for the comparison to mean anything"
    assert (on / "report.html").read_bytes() == (off / "report.html").read_bytes()


def _worker_processes(out: Path) -> int:
    return json.loads((out / MANIFEST).read_text())["options"]["worker_processes"]


def test_the_sample_audits_the_same_with_and_without_them(tmp_path):
    on, off = _audit_twice(tmp_path, [
        f"--logs={REPO / 'samples/logs/*.log.gz'}", "--log-format=host_combined",
        f"--robots={REPO / 'samples/robots/history.jsonl'}", f"--ranges={REPO / 'samples/ranges'}",
    ])
    _assert_same_audit(on, off)


request_strategy = st.tuples(
    st.sampled_from(CLIENTS), st.integers(0, 30 * 3600), st.sampled_from(PATHS), st.sampled_from(["a.log", "b.log"]),
)
site_strategy = st.tuples(
    st.sampled_from([None, 1, 5, 60]),  # Crawl-delay
    st.integers(1, 20),  # the hour robots.txt closes /new
    st.lists(request_strategy, min_size=1, max_size=40),
)


def _write_sites(folder: Path, sites: list) -> list[str]:
    """One host per drawn site, its robots.txt closing /new at the drawn hour; the requests spread
    over two files, so fetches may be read after the requests they decide."""
    robots, logs = [], {"a.log": [], "b.log": []}
    for number, (delay, change_hour, requests) in enumerate(sites):
        host = f"site{number}.example.com"
        head = "User-agent: *\n" + (f"Crawl-delay: {delay}\n" if delay else "") + "Disallow: /private\n"
        robots += [
            {"host": host, "effective_from": T0.isoformat(), "status": 200, "body": head},
            {"host": host, "effective_from": (T0 + timedelta(hours=change_hour)).isoformat(), "status": 200,
             "body": head + "Disallow: /new\n"},
        ]
        for (agent, ip), seconds, path, file in requests:
            logs[file].append(log_line(host, T0 + timedelta(seconds=seconds), path, agent, ip=ip))
    write_jsonl(folder / "robots.jsonl", robots)
    (folder / "logs").mkdir()
    for name, lines in logs.items():
        (folder / "logs" / name).write_text("".join(line + "\n" for line in lines))
    return [f"--logs={folder / 'logs' / '*.log'}", "--log-format=host_combined",
            f"--robots={folder / 'robots.jsonl'}", f"--ranges={REPO / 'samples/ranges'}"]


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(site_strategy, min_size=1, max_size=4))
def test_drawn_changes_fetches_grace_and_crawl_delays_audit_the_same(tmp_path_factory, sites):
    folder = tmp_path_factory.mktemp("drawn")
    on, off = _audit_twice(folder, _write_sites(folder, sites))
    _assert_same_audit(on, off)


def test_a_log_read_in_worker_processes_audits_the_same(tmp_path, monkeypatch):
    """Worker processes start from 64 MiB of logs; the bound is lowered so that this log, a few
    thousand lines in two files, starts them as a large one does."""
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(workers, "PARALLEL_FROM_BYTES", 1)
    sites = [(5, 6, [(CLIENTS[n % 4], (n * 37) % (30 * 3600), PATHS[n % 5], "ab"[n % 2] + ".log")
                     for n in range(1500)]) for _ in range(3)]
    on, off = _audit_twice(tmp_path, _write_sites(tmp_path, sites))
    assert _worker_processes(on) == 2 and _worker_processes(off) == 1
    assert len(read_jsonl(on / "verdicts")) == 4500
    _assert_same_audit(on, off)
