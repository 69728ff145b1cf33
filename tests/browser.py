"""Headless Chromium for the report tests: the `chromium` fixture and one action on a page.

Skipped with a message when Chromium is absent, except under CI=true, where `.ci/run` installs
it and its absence is a failure.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
)
# Chromium logs every console message, CSP violations included, as `INFO:CONSOLE...] "text"`.
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium not found (Debian: apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI must have it")
        pytest.skip(message)
    return found


def browse(chromium: str, page: Path, profile: Path, *action: str) -> tuple[str, list[str]]:
    """Run one headless action on a page from disk: its stdout and the console messages logged."""
    result = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", *action, page.as_uri()],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, [m.group(1) for m in CONSOLE.finditer(result.stderr)]
