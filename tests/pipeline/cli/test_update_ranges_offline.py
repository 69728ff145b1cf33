"""`crawl-audit update-ranges` on a machine with no network (a network namespace with only
loopback): every source fails, and the last line says nothing was saved and what to do instead."""
from __future__ import annotations

import sys

import pytest

from portable import Namespace


@pytest.fixture(scope="module")
def offline():
    namespace = Namespace.open()
    yield namespace
    namespace.close()


@pytest.mark.slow
def test_offline_update_ranges_ends_with_what_was_saved_and_the_way_on(offline, tmp_path):
    ranges = tmp_path / "ranges"
    argv = [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))",
            "update-ranges", "--ranges", str(ranges), "--timeout", "30"]
    done = offline.run(argv, timeout=300)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(line.endswith(": NOT SAVED") for line in lines)
    assert lines[-1] == (
        f"nothing saved under {ranges}; without a download: `run --ranges DIR` (and `verify --ranges DIR`)"
        " reads snapshots you already have, and `update-ranges import-git REPO PATH --source NAME` brings in"
        " a mirror's history"
    )
    assert not ranges.exists() or not any(ranges.rglob("*.json"))
