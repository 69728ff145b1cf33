"""Shared test fixtures and the hypothesis profile."""
from __future__ import annotations

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
