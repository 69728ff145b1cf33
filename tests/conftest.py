"""Shared test fixtures and the hypothesis profile."""
from __future__ import annotations

import contextlib
import io
import os
import tempfile

import pytest
from hypothesis import settings

# CI replays the same examples every run, so a red build always points at a change;
# locally each run explores new ones.
# The range snapshots a user keeps in their data folder never change a test's verdicts: every
# test, and every command it starts, sees an empty data folder of its own.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="crawl-audit-test-data-")

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    """A test CA and a server certificate for the loopback HTTPS servers (tests/loopback.py)."""
    from loopback import make_tls

    return make_tls(tmp_path_factory.mktemp("tls"))


def _sample_run(out, *extra: str):
    """The sample's run folder OUT; what the run printed is kept beside it (`helpers.printed_by`)."""
    from helpers import REPO, run_audit

    argv = [
        f"--logs={REPO / 'samples/logs/*.log.gz'}", "--log-format=host_combined",
        f"--robots={REPO / 'samples/robots/history.jsonl'}", f"--ranges={REPO / 'samples/ranges'}",
        f"--out={out}", "--runner=FnApiRunner", *extra,
    ]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert run_audit(argv) == 0
    out.with_name(out.name + ".stdout").write_text(printed.getvalue(), encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory):
    """The bundled sample audited once per test process, as README's first command does, in
    JSON Lines. Read it; a test that changes a run folder copies it first."""
    return _sample_run(tmp_path_factory.mktemp("sample") / "out")


@pytest.fixture(scope="session")
def sample_run_parquet(tmp_path_factory):
    """The bundled sample audited once per test process into Parquet; read it, never change it."""
    return _sample_run(tmp_path_factory.mktemp("sample-parquet") / "out", "--format=parquet")


# Fixtures that run an audit, or start a browser, a DNS server, a job service or a namespace: a
# test that takes one is slow whatever it does itself, so the fast lane (-m "not slow") never
# waits for one of them.
SLOW_FIXTURES = frozenset({
    "sample_run", "sample_run_parquet", "chromium", "dns_server", "cluster", "prism", "offline",
    "audited", "audited_site", "run", "runs", "hostile_report", "burst_report", "finished",
})


def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
