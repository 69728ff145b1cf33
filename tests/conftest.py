"""Shared test fixtures: where the shared conformance data and corpus live."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI replays the same examples every run, so a red build always points at a change;
# locally each run explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parent.parent


def shared_path(*parts: str) -> Path:
    """Path under the shared folder; skip when absent, fail when CI promised it.

    `CRAWL_AUDIT_SHARED` names the folder; without it `../shared` beside the
    checkout is tried, and a missing file only skips (a user's machine).
    """
    configured = os.environ.get("CRAWL_AUDIT_SHARED")
    root = Path(configured) if configured else REPO.parent / "shared"
    if not root.is_absolute():
        root = (REPO / root).resolve()
    path = root.joinpath(*parts)
    if not path.exists():
        message = f"shared data not found: {path}"
        if configured:
            pytest.fail(message + " (CRAWL_AUDIT_SHARED is set, so it must exist)")
        pytest.skip(message + " (set CRAWL_AUDIT_SHARED to run these tests)")
    return path


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    """A test CA and a server certificate for the loopback HTTPS servers (tests/loopback.py)."""
    from loopback import make_tls

    return make_tls(tmp_path_factory.mktemp("tls"))
