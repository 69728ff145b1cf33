"""The audit on Prism, Beam's local runner in Go: the bundled sample gives the local run's tables
and report. The binary is `go install github.com/apache/beam/sdks/v2/go/cmd/prism@v2.77.0`,
looked for at `CRAWL_AUDIT_PRISM`, then ~/go/bin/prism; without it these tests skip, in CI too
(building it costs about 3.4 CPU-minutes, more than CI's time allows for one runner)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import REPO, run_audit, run_settings
from portable import run_tables, sample_argv

SAMPLES = REPO / "samples"


@pytest.fixture(scope="module")
def prism() -> str:
    location = Path(os.environ.get("CRAWL_AUDIT_PRISM") or Path.home() / "go" / "bin" / "prism")
    if not location.is_file():
        message = (
            f"no prism binary at {location}: go install github.com/apache/beam/sdks/v2/go/cmd/prism@v2.77.0"
            " (or set CRAWL_AUDIT_PRISM)"
        )
        pytest.skip(message)
    return str(location)


def on_prism(location: str) -> list[str]:
    """The flags of a run on the Prism at `location`, started for that run alone. Beam keeps one
    Prism job service per process, and a pipeline on Beam's DirectRunner (any `TestPipeline`
    earlier in the session) creates it first, without a location, so it would be reused and
    fetched from GitHub."""
    return ["--runner=PrismRunner", f"--prism_location={location}", "--experiments=disable_prism_server_singleton"]


def test_the_sample_on_prism_equals_the_local_run(prism, tmp_path):
    sample_logs = str(SAMPLES / "logs" / "*.log.gz")
    assert run_audit([*sample_argv(sample_logs, tmp_path / "prism"), *on_prism(prism)]) == 0
    assert run_audit([*sample_argv(sample_logs, tmp_path / "local"), "--runner=FnApiRunner"]) == 0

    prism_tables, local = run_tables(tmp_path / "prism"), run_tables(tmp_path / "local")
    assert len(local["verdicts"]) > 1000 and local["crawl_delay_violations"] and local["dead_letters"]
    assert prism_tables.keys() == local.keys()
    for table in local:
        assert prism_tables[table] == local[table], table
    for name in ("counts.json", "report_counts.json", "report.html"):
        assert (tmp_path / "prism" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


def test_prism_runs_without_the_direct_runner_speedups(prism, tmp_path):
    settings, _ = run_settings([
        *sample_argv(str(SAMPLES / "logs" / "*.log.gz"), tmp_path / "out"), *on_prism(prism),
    ])
    assert settings.runner == "PrismRunner" and settings.runs_locally and not settings.local_speedups


def test_a_robots_refresh_on_prism_is_refused_at_launch(prism, tmp_path, capsys):
    """Prism rejects the refreshed side input when the job starts; said before any work instead."""
    argv = [
        "--streaming", *on_prism(prism), "--robots-refresh=5m",
        *sample_argv(str(tmp_path / "incoming" / "*.log.gz"), tmp_path / "out"),
    ]
    assert run_audit(argv) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "--robots-refresh" in said[0] and said[0].startswith("crawl-audit: "), said
