"""The verdicts of the bundled sample as the columnar audit makes them, robots.txt fetches
followed, for the tests that read its tables."""
from __future__ import annotations

import gzip

import pyarrow as pa
import pytest

from helpers import REPO, run_settings
from matcher.line_auditor import robots_by_host
from matcher.robots_fetches import FetchHistory
from pipeline.columnar.verdicts import BlockAuditor
from pipeline.evidence.robots_table import read_robots_table
from pipeline.graph import build as graph

SAMPLES = REPO / "samples"


@pytest.fixture(scope="session")
def sample_verdicts() -> pa.Table:
    robots = str(SAMPLES / "robots" / "history.jsonl")
    argv = [f"--logs={SAMPLES}", "--log-format=host_combined", f"--robots={robots}", f"--ranges={SAMPLES / 'ranges'}", "--out=unused"]
    auditor, by_host = graph.line_auditor(run_settings(argv)[0]), robots_by_host(read_robots_table(robots))
    files = {}
    for path in sorted((SAMPLES / "logs").glob("*.log.gz")):
        with gzip.open(path, "rb") as handle:
            files[str(path)] = [raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace") for raw in handle]
    found: dict = {}
    for path, lines in files.items():
        for key, fetch in auditor.robots_fetches((path, 1, lines), None):
            found.setdefault(key, []).append(fetch)
    fetches = {key: FetchHistory(of_key) for key, of_key in found.items()}
    columnar = BlockAuditor(auditor)
    # blocks of a few hundred lines: a table of many chunks, as blocks are gathered into one
    blocks = [
        columnar.audit_block(path, 1 + start, lines[start:start + 700], by_host, None, fetches).verdicts
        for path, lines in files.items() for start in range(0, len(lines), 700)
    ]
    return pa.concat_tables(blocks)
