"""Shared test fixtures and the hypothesis profile."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI replays the same examples every run, so a red build always points at a change;
# locally each run explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    """A test CA and a server certificate for the loopback HTTPS servers (tests/loopback.py)."""
    from loopback import make_tls

    return make_tls(tmp_path_factory.mktemp("tls"))
