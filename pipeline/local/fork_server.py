"""Worker processes of a local run forked from a process that has already imported them.

A worker process of the local runner is a fresh interpreter that imports Beam and the audit's
modules before it can take its first bundle, time the launching process spent waiting
(bench/README.md has the figures). A fork server is started
as the run begins and imports all of that while the launching process reads the robots table and
builds the graph. The runner's worker command becomes `pipeline/local/worker_stand_in.py`, which asks
the server for a worker: the server forks one that takes over the stand-in's environment, working
folder and standard streams and runs Beam's worker harness, and the stand-in exits with its status.
What the workers do, and what the run writes, is unchanged.

    python -m pipeline.local.fork_server ADDRESS [MODULE ...]   # listens on the Unix socket ADDRESS

The server imports nothing heavy before it listens, so the launching process waits for it only
as long as an interpreter takes to start.
"""
from __future__ import annotations

import functools
import gc
import importlib
import json
import logging
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from pipeline.local import heap
from pipeline.local.worker_stand_in import STANDARD_STREAMS

SERVER_MODULE = "pipeline.local.fork_server"
LISTENING = b"listening\n"
_STAND_IN = Path(__file__).with_name("worker_stand_in.py")
# A Unix socket's path, its final NUL included, fits in `sun_path`: 108 bytes on Linux, 104 on macOS.
_SOCKET_PATH_BYTES = 104
# How long an ended worker may wait to be collected while the server has nothing else to do.
_REAP_EVERY_SECONDS = 1.0


@contextmanager
def fork_server(preload: Sequence[str] = ()) -> Iterator[str | None]:
    """A fork server for the run's workers, which imports Beam's worker harness and the modules
    `preload` names, stopped on leaving. Yields the command that starts a worker through it, or
    None where that cannot be (no `fork`, or the server did not start)."""
    if not hasattr(os, "fork"):
        yield None
        return
    folder = _socket_folder()
    if folder is None:
        yield None
        return
    address = os.path.join(folder, "socket")
    # `-m` on a module its own package imports makes runpy warn that it was imported twice: harmless.
    # `-P`: the folder the run was started from may hold a `pipeline` or `matcher` of its own,
    # which `-m` would put first on the workers' import path.
    server = subprocess.Popen(
        [sys.executable, "-P", "-W", "ignore::RuntimeWarning:runpy", "-m", SERVER_MODULE, address, *preload],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    try:
        listening = server.stdout.readline() == LISTENING
        yield " ".join(map(shlex.quote, (sys.executable, "-I", "-S", str(_STAND_IN), address))) if listening else None
    except BaseException:
        # The run stopped (a signal, an error) with workers maybe still busy: the server stops them.
        server.terminate()
        raise
    finally:
        server.stdin.close()  # the server leaves when its input ends
        server.stdout.close()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _socket_folder() -> str | None:
    """A new private folder for the server's socket, whose path a Unix socket can be bound to:
    under the temporary folder (TMPDIR), or under /tmp when that one's path is too long; None
    when neither can be."""
    for parent in (None, "/tmp"):
        folder = tempfile.mkdtemp(prefix="crawl-audit-workers-", dir=parent)
        if len(os.fsencode(os.path.join(folder, "socket"))) < _SOCKET_PATH_BYTES:
            return folder
        os.rmdir(folder)
    return None


def serve(address: str, prepare: Callable[[], Callable[[], object]]) -> None:
    """Listen on `address`; once `prepare` has made the work, fork a process for each stand-in that
    connects, which does the work as that stand-in. Returns when standard input ends."""
    # Ctrl-C is for the launching process to act on; the server leaves when that process closes its
    # input, or stops its workers and leaves at once on SIGTERM, which the launching process sends
    # when the run was stopped.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    workers: set[int] = set()
    signal.signal(signal.SIGTERM, functools.partial(_stop_workers, workers))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(address)
        listener.listen(16)
        # Stand-ins that connect from now on wait in the backlog while the work is prepared.
        sys.stdout.buffer.write(LISTENING)
        sys.stdout.flush()
        work = prepare()
        while True:
            readable, _, _ = select.select([listener, sys.stdin], [], [], _REAP_EVERY_SECONDS)
            workers.difference_update(_reap(os.WNOHANG))
            if sys.stdin in readable:
                break
            if listener in readable:
                connection, _ = listener.accept()
                worker = os.fork()
                if worker == 0:
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    listener.close()
                    _work_for(connection, work)
                workers.add(worker)
                connection.close()
    # Waited for, so that their CPU time counts in the launching process's, as a worker's it starts itself.
    _reap(0)


def _stop_workers(workers: set[int], signum, frame) -> NoReturn:
    for worker in workers:
        try:
            os.kill(worker, signal.SIGTERM)
        except ProcessLookupError:  # ended already
            pass
    _reap(0)
    os._exit(0)


def _reap(options: int) -> list[int]:
    """Collect the workers that have ended (with `os.WNOHANG`), or all of them (with 0); their ids."""
    ended = []
    try:
        while worker := os.waitpid(-1, options)[0]:
            ended.append(worker)
    except ChildProcessError:  # none left
        pass
    return ended


def _work_for(connection: socket.socket, work: Callable[[], object]) -> NoReturn:
    status = 1
    try:
        request, streams = _receive(connection)
        _take_over(request, streams)
        status = _status_of(work)
    except BaseException:
        traceback.print_exc()
    finally:
        # A worker's output is flushed, and it leaves without tearing its heap down (see
        # `pipeline.local.workers`), whatever happened.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            connection.sendall(str(status).encode())
        except OSError:
            pass
        os._exit(status)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    first, streams, _, _ = socket.recv_fds(connection, 1 << 16, len(STANDARD_STREAMS))
    if len(streams) != len(STANDARD_STREAMS):
        raise ValueError(f"a worker stand-in sent {len(streams)} streams, not {len(STANDARD_STREAMS)}")
    rest = b"".join(iter(lambda: connection.recv(1 << 16), b""))
    return json.loads(first + rest), streams


def _take_over(request: dict, streams: list[int]) -> None:
    """Become the stand-in's process as far as the work can tell: its streams, folder and environment."""
    sys.stdout.flush()
    sys.stderr.flush()
    for target, stream in zip(STANDARD_STREAMS, streams):
        os.dup2(stream, target)
        os.close(stream)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["environ"])
    # Ctrl-C reaches every process of the terminal's group: the launching process stops the
    # workers itself, which then end without a traceback each.


def _status_of(work: Callable[[], object]) -> int:
    try:
        work()
    except SystemExit as leaving:
        code = leaving.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _beam_worker(preload: Sequence[str]) -> Callable[[], object]:
    # Beam's import-time notes about optional cloud clients, as in the launching process.
    logging.getLogger().setLevel(logging.ERROR)
    from apache_beam.runners.worker import sdk_worker_main

    for module in preload:
        importlib.import_module(module)
    # What is imported now lives as long as a worker does. Frozen, it is left out of the workers'
    # garbage collections, which would otherwise write to every object and so copy each page a
    # worker shares with the server.
    gc.freeze()
    return _quiet(sdk_worker_main.main)


def _quiet(harness: Callable[[list[str]], object]) -> Callable[[], object]:
    def work() -> object:
        # A worker's notes on how it starts, connects and ends would bury the run's report on the
        # terminal they share; its errors still show.
        logging.disable(logging.WARNING)
        return harness(sys.argv)

    return work


if __name__ == "__main__":
    # before the first thread, so that the workers forked from here inherit it
    heap.limit_arenas()
    serve(sys.argv[1], functools.partial(_beam_worker, sys.argv[2:]))
    # Beam's modules are not torn down one by one: the launching process waits for that.
    sys.stdout.flush()
    os._exit(0)
