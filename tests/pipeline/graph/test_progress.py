"""The progress line of a local batch run: what it says, how often it is drawn, and where not."""
from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.graph import progress
from pipeline.graph.progress import Progress, clock_span, progress_text, reporting, wanted
from helpers import REPO

MIB = 1 << 20


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeStream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_the_line_says_bytes_of_total_lines_rate_and_eta():
    assert progress_text(412 * MIB, 1236 * MIB, 1_234_567, 30.0) == (
        "read 412 MiB of 1.2 GiB (33%), 1,234,567 lines, 41,152 lines/s, ETA 1m00s"
    )
    assert progress_text(512, 3 * MIB, 10, 2.0) == "read 512 B of 3.0 MiB (0%), 10 lines, 5 lines/s, ETA 3h24m"
    assert progress_text(0, 5 * MIB, 0, 3.0).endswith("0 lines, 0 lines/s, ETA -")
    # Compressed files can grow while read; never more than 100%.
    assert progress_text(6 * MIB, 5 * MIB, 900, 3.0).startswith("read 6.0 MiB of 5.0 MiB (100%)")
    assert progress_text(6 * MIB, 5 * MIB, 900, 3.0).endswith("finishing")


@pytest.mark.parametrize("seconds, text", [(0.2, "0s"), (59.4, "59s"), (59.6, "1m00s"), (187, "3m07s"),
                                           (3720, "1h02m")])
def test_eta_reads_as_a_clock(seconds, text):
    assert clock_span(seconds) == text


def test_nothing_is_drawn_in_the_first_seconds_then_at_most_every_half_second():
    clock, stream = FakeClock(), FakeStream(tty=True)
    reporter = Progress(10 * MIB, stream, clock, first_draw=2.5, redraw=0.5)
    for _ in range(20):
        clock.now += 0.1
        reporter.advance(MIB // 10, 2000)
    assert stream.getvalue() == ""  # two seconds in: a short run never shows a line
    clock.now += 0.5
    reporter.advance(MIB // 10, 2000)
    first = stream.getvalue()
    assert first == "\r" + progress_text(21 * MIB // 10, 10 * MIB, 42_000, 2.5)
    clock.now += 0.4
    reporter.advance(MIB // 10, 2000)
    assert stream.getvalue() == first  # too soon to redraw
    clock.now += 0.1
    reporter.advance(MIB // 10, 2000)
    drawn = stream.getvalue()[len(first):]
    assert drawn == "\r" + progress_text(23 * MIB // 10, 10 * MIB, 46_000, 3.0).ljust(len(first) - 1)
    assert "\n" not in stream.getvalue()


def test_a_shorter_line_covers_the_longer_one_and_finish_wipes_it():
    clock, stream = FakeClock(), FakeStream(tty=True)
    reporter = Progress(10 * MIB, stream, clock, first_draw=0, redraw=0)
    clock.now += 1
    reporter.advance(MIB, 123_456_789)
    longest = len(stream.getvalue()) - 1
    clock.now += 1000
    reporter.advance(0, 0)
    last = stream.getvalue().rsplit("\r", 1)[1]
    assert len(last) == longest and last.rstrip() != last
    reporter.finish()
    assert stream.getvalue().endswith("\r" + " " * longest + "\r")
    reporter.finish()  # nothing on screen: nothing more written
    assert stream.getvalue().endswith("\r" + " " * longest + "\r")


def test_finish_writes_nothing_when_no_line_was_drawn():
    stream = FakeStream(tty=True)
    reporter = Progress(MIB, stream, FakeClock())
    reporter.advance(MIB, 10)
    reporter.finish()
    assert stream.getvalue() == ""


def test_file_offsets_count_each_byte_once():
    clock, stream = FakeClock(), FakeStream(tty=True)
    reporter = Progress(300, stream, clock, first_draw=0, redraw=0)
    reporter.file_read("a.log.gz", 100, 2000)
    reporter.file_read("b.log.gz", 50, 2000)
    reporter.file_read("a.log.gz", 0, 0)  # a closed file's position: no step back
    reporter.file_read("a.log.gz", 200, 500)
    assert stream.getvalue().rsplit("\r", 1)[1].startswith("read 250 B of 300 B (83%), 4,500 lines")


@pytest.mark.parametrize("mode, tty, drawn", [("auto", True, True), ("auto", False, False),
                                              ("always", False, True), ("never", True, False)])
def test_auto_draws_only_on_a_terminal(mode, tty, drawn):
    assert wanted(mode, FakeStream(tty)) is drawn


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="auto, always, never"):
        wanted("sometimes", FakeStream(True))


def test_reports_reach_the_installed_reporter_only_while_a_run_lasts(monkeypatch):
    monkeypatch.setattr(progress, "FIRST_DRAW_SECONDS", 0.0)
    stream = FakeStream(tty=False)
    with reporting(1000, "auto", stream) as reporter:
        assert reporter is None
        progress.file_read("a.log", 500, 10)
    assert stream.getvalue() == ""
    with reporting(1000, "always", stream) as reporter:
        progress.file_read("a.log", 500, 10)
        assert stream.getvalue().startswith("\rread 500 B of 1000 B (50%), 10 lines")
    assert stream.getvalue().endswith("\r")
    progress.file_read("a.log", 1000, 10)  # the run is over: nowhere to report to
    assert stream.getvalue().endswith("\r")


# The sample reads in about a second, sooner than the first draw; the child starts the CLI with
# every report drawn at once, which is all that differs from `crawl-audit run`.
_RUN = ("import sys; from pipeline.graph import progress; "
        "progress.FIRST_DRAW_SECONDS = progress.REDRAW_SECONDS = 0.0; "
        "from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))")


def _sample_run(out: Path, *flags: str) -> list[str]:
    return [sys.executable, "-c", _RUN, "run", "--logs", str(REPO / "samples/logs/*.log.gz"),
            "--log-format", "host_combined", "--robots", str(REPO / "samples/robots/history.jsonl"),
            "--ranges", str(REPO / "samples/ranges"), "--out", str(out), "--overwrite",
            "--runner=FnApiRunner", *flags]


def _run_with_stderr_on_a_terminal(command: list[str]) -> tuple[int, str, str]:
    """Exit status, stdout (a pipe) and what the terminal on stderr showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=follower)
    os.close(follower)
    # Both read as they come, so that neither a full pipe nor a full terminal stalls the child.
    piped = process.stdout.fileno()
    received = {leader: bytearray(), piped: bytearray()}
    open_ends = set(received)
    while open_ends:
        ready, _, _ = select.select(list(open_ends), [], [], 300)
        if not ready:
            process.kill()
            raise AssertionError("no output for 300 s")
        for end in ready:
            try:
                chunk = os.read(end, 65536)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if chunk:
                received[end] += chunk
            else:
                open_ends.discard(end)
    os.close(leader)
    process.stdout.close()
    return process.wait(timeout=60), received[piped].decode(), received[leader].decode("utf-8", "replace")


@pytest.mark.slow
def test_a_run_on_a_terminal_shows_progress_on_stderr_and_the_same_report_on_stdout(tmp_path):
    out = tmp_path / "out"
    status, stdout, terminal = _run_with_stderr_on_a_terminal(_sample_run(out))
    assert status == 0, terminal
    sample_bytes = sum(path.stat().st_size for path in (REPO / "samples/logs").glob("*.log.gz"))
    total = progress.byte_size(sample_bytes)
    assert f"read {total} of {total} (100%), 20,529 lines" in terminal
    assert "lines/s" not in stdout and "\r" not in stdout
    # Wiped before the run ends: blanks over the last line drawn.
    assert re.search(r"\r {40,}\r", terminal[terminal.rindex("\rread "):])

    piped = subprocess.run(_sample_run(out), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == stdout
    assert re.search(r"lines read +20,529\n", stdout)


@pytest.mark.slow
def test_a_run_piped_with_progress_auto_prints_no_progress_line(tmp_path):
    result = subprocess.run(_sample_run(tmp_path / "out", "--progress", "auto"), cwd=REPO,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "read " not in result.stderr and "lines/s" not in result.stderr
    assert "\r" not in result.stderr


@pytest.mark.slow
def test_worker_processes_report_through_the_folder_their_environment_names(monkeypatch):
    monkeypatch.setattr(progress, "FIRST_DRAW_SECONDS", 0.0)
    stream = FakeStream(tty=True)
    worker = (
        "from pipeline.graph import progress\n"
        "progress.file_read('/logs/a.log', 3 << 20, 2000)\n"
        "progress.file_read('/logs/a.log', 5 << 20, 1500)\n"
        "progress.file_read('/logs/b.log', 1 << 20, 500)\n"
    )
    with reporting(10 * MIB, "auto", stream):
        subprocess.run([sys.executable, "-c", worker], check=True, cwd=REPO)
        deadline = time.monotonic() + 120  # an event to wait for; the deadline only ends a broken run
        while "4,000 lines" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        folder = Path(os.environ[progress.FOLDER_VARIABLE])
    assert "read 6.0 MiB of 10 MiB (60%), 4,000 lines" in stream.getvalue()
    assert progress.FOLDER_VARIABLE not in os.environ and not folder.exists()
