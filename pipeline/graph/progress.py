"""The progress line of a local batch run: log bytes read of the total, lines/s and ETA, on stderr.

`crawl-audit run` installs one reporter for the whole process at launch (`reporting`), and the
step that reads the log files tells it how far each file got (`file_read`). When the local runner
reads in the launching process the reporter hears directly; when it reads in worker processes
(`--direct_running_mode=multi_processing`, which a large local run chooses itself) the workers
note how far each file got in a folder the reporter polls, named to them in the environment they
inherit. On Dataflow nothing is printed. The line is redrawn in place with a carriage return, at most every half
second and only once a run has gone on for a few seconds, and wiped before the closing report;
with `--progress auto` it is drawn only when stderr is a terminal, so piped output stays clean.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

MODES = ("auto", "always", "never")
# Names the folder where worker processes of a local run note how far each file got.
FOLDER_VARIABLE = "CRAWL_AUDIT_PROGRESS_DIR"
FIRST_DRAW_SECONDS = 2.5
REDRAW_SECONDS = 0.5


class Progress:
    """Counts bytes and lines read and redraws one line on `stream`; safe to call from any thread."""

    def __init__(self, total_bytes: int, stream: TextIO, clock: Callable[[], float] = time.monotonic,
                 first_draw: float = FIRST_DRAW_SECONDS, redraw: float = REDRAW_SECONDS):
        self._total = total_bytes
        self._stream = stream
        self._clock = clock
        self._redraw = redraw
        self._lock = threading.Lock()
        self._started = clock()
        self._next_draw = self._started + first_draw
        self._bytes = 0
        self._lines = 0
        self._offsets: dict[str, int] = {}
        self._width = 0  # of the line on screen; 0 when none is

    def advance(self, nbytes: int, nlines: int) -> None:
        """`nbytes` more of the input read (compressed bytes of a compressed file), `nlines` more lines."""
        with self._lock:
            self._bytes += nbytes
            self._lines += nlines
            now = self._clock()
            if now < self._next_draw:
                return
            self._next_draw = now + self._redraw
            self._draw(progress_text(self._bytes, self._total, self._lines, now - self._started))

    def file_read(self, path: str, offset: int, nlines: int) -> None:
        """`path` has been read up to byte `offset` of the file, `nlines` more lines of it.

        An offset below one already seen (a bundle read again) adds no bytes."""
        with self._lock:
            seen = self._offsets.get(path, 0)
            self._offsets[path] = max(seen, offset)
        self.advance(max(0, offset - seen), nlines)

    def finish(self) -> None:
        """Wipe the line, so whatever is printed next starts on a clean line."""
        with self._lock:
            if self._width:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
                self._width = 0

    def _draw(self, text: str) -> None:
        # Padded to the last line's width: a shorter line must cover all of a longer one.
        self._stream.write("\r" + text.ljust(self._width))
        self._stream.flush()
        self._width = max(self._width, len(text))


def progress_text(done: int, total: int, lines: int, seconds: float) -> str:
    """e.g. `read 412 MiB of 1.2 GiB (34%), 1,234,567 lines, 45,678 lines/s, ETA 1m23s`."""
    fraction = min(done / total, 1.0) if total > 0 else 1.0
    rate = lines / seconds if seconds > 0 else 0.0
    if 0 < done < total and seconds > 0:
        eta = f"ETA {clock_span((total - done) * seconds / done)}"
    else:
        eta = "ETA -" if done < total else "finishing"
    return (f"read {byte_size(done)} of {byte_size(total)} ({fraction:.0%}), "
            f"{lines:,} lines, {rate:,.0f} lines/s, {eta}")


def byte_size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{count} B"


def clock_span(seconds: float) -> str:
    """e.g. `45s`, `3m07s`, `1h02m`."""
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def wanted(mode: str, stream: TextIO) -> bool:
    """Whether to draw on `stream`: `always`, `never`, or (`auto`) when it is a terminal."""
    if mode not in MODES:
        raise ValueError(f"progress mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode != "auto":
        return mode == "always"
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or already closed
        return False


_active: Progress | None = None


@contextmanager
def reporting(total_bytes: int, mode: str, stream: TextIO | None = None) -> Iterator[Progress | None]:
    """Install the process-wide reporter for a run reading `total_bytes` of logs (none when not
    `wanted`), and wipe its line when the run ends, however it ends."""
    global _active
    stream = sys.stderr if stream is None else stream
    if not wanted(mode, stream):
        yield None
        return
    reporter = _active = Progress(total_bytes, stream, first_draw=FIRST_DRAW_SECONDS, redraw=REDRAW_SECONDS)
    folder = Path(tempfile.mkdtemp(prefix="crawl-audit-progress-"))
    os.environ[FOLDER_VARIABLE] = str(folder)
    stop = threading.Event()
    poller = threading.Thread(target=_poll, args=(folder, reporter, stop), daemon=True)
    poller.start()
    try:
        yield reporter
    finally:
        _active = None
        os.environ.pop(FOLDER_VARIABLE, None)
        stop.set()
        poller.join()
        shutil.rmtree(folder, ignore_errors=True)
        reporter.finish()


def file_read(path: str, offset: int, nlines: int) -> None:
    """Tell the reporter how far `path` has been read: directly in the launching process, through
    the folder of `FOLDER_VARIABLE` in a worker process of a local run; else nothing."""
    reporter = _active
    if reporter is not None:
        reporter.file_read(path, offset, nlines)
        return
    folder = os.environ.get(FOLDER_VARIABLE)
    if folder:
        _note(Path(folder), path, offset, nlines)


_lines_noted: dict[str, int] = {}  # in a worker: lines of each file read so far


def _note(folder: Path, path: str, offset: int, nlines: int) -> None:
    """One small file per log file and worker: the offset reached and the lines read, replaced
    whole so the reporter never reads half a note."""
    lines = _lines_noted[path] = _lines_noted.get(path, 0) + nlines
    name = f"{hashlib.sha1(path.encode()).hexdigest()}.{os.getpid()}"
    try:
        temporary = folder / f".{name}"
        temporary.write_text(f"{offset} {lines}")
        os.replace(temporary, folder / name)
    except OSError:
        pass  # the run has ended and the folder is gone: nothing left to show


def _poll(folder: Path, reporter: Progress, stop: threading.Event) -> None:
    lines_seen: dict[str, int] = {}
    while not stop.wait(REDRAW_SECONDS / 2):
        for note in folder.glob("[!.]*"):
            try:
                offset, lines = map(int, note.read_text().split())
            except (OSError, ValueError):
                continue
            reporter.file_read(note.name, offset, lines - lines_seen.get(note.name, 0))
            lines_seen[note.name] = lines
