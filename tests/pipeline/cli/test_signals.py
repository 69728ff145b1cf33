"""A real run stopped by a real signal, as systemd, docker or `timeout` (SIGTERM) and Ctrl-C
(SIGINT to the terminal's whole process group) stop it: one line, exit 128 + the signal, no
traceback, no `OUT` and no `OUT.partial-*`, no temporary folder left, no process of the run left."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, REPO, log_line, write_jsonl
from pipeline.local.workers import PARALLEL_FROM_BYTES


def _logs(folder: Path, total_bytes: int, files: int) -> str:
    """`files` logs of `total_bytes` together, of crawler requests to distinct paths."""
    block = "".join(
        log_line("example.com", f"02/Nov/2026:10:{n // 60 % 60:02d}:{n % 60:02d} +0000", f"/p/{n}", GOOGLEBOT,
                 ip="66.249.66.1") + "\n"
        for n in range(5_000)
    ).encode()
    for index in range(files):
        with open(folder / f"access{index}.log", "wb") as log:
            for _ in range(total_bytes // files // len(block) + 1):
                log.write(block)
    return str(folder / "access*.log")


def _wait_for(condition, seconds: float, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, "the run ended before it could be stopped"
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.1)


def _gone(group: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "to_group", "speedups"),
    [
        (signal.SIGTERM, False, "on"),  # `kill PID`, worker processes forked from the fork server
        (signal.SIGINT, True, "on"),  # Ctrl-C: every process of the group gets it
        (signal.SIGTERM, False, "off"),  # one process, Beam's own runner
    ],
)
def test_a_stopped_run_says_so_in_one_line_and_leaves_nothing(tmp_path, signum, to_group, speedups):
    logs = _logs(tmp_path, PARALLEL_FROM_BYTES + (8 << 20), files=2)
    robots = write_jsonl(tmp_path / "robots.jsonl", [{
        "host": "example.com", "effective_from": "2000-01-01T00:00:00Z", "status": 200,
        "body": "User-agent: *\nCrawl-delay: 1\nDisallow: /p/1\n",
    }])
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "run", f"--logs={logs}", "--log-format=host_combined", f"--robots={robots}", f"--out={tmp_path / 'out'}",
         "--progress=never", f"--local-speedups={speedups}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, start_new_session=True,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    try:
        # Stopped in the middle: Beam's temporary folder is there, so the pipeline is under way.
        _wait_for(lambda: any(temporary.glob("crawl-audit-run-*/beam-pipeline-temp*")), 240, process)
        time.sleep(4)
        assert process.poll() is None, "the run ended before it could be stopped"
        if to_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    said = [line for line in stderr.splitlines() if line.startswith("crawl-audit:")]
    assert said == [f"crawl-audit: stopped by {signal.Signals(signum).name}; nothing was left half written"], stderr
    assert "report:" not in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["access0.log", "access1.log", "robots.jsonl", "tmp"]
    assert list(temporary.iterdir()) == []  # spill, worker sockets, Beam's temporary folder: all removed
    assert _gone(process.pid, 30), "a worker or the fork server outlived the run"
