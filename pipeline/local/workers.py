"""Worker processes of a local batch run: when a run uses them, and how they end.

A large local run reads and audits its files in worker processes, one per core (the DirectRunner's
`multi_processing` mode), forked from a fork server that has imported them in advance
(`pipeline.local.fork_server`). When the run is over the runner closes its workers one after the other,
each waiting for the previous process to exit; a Python process that frees its heap object by
object before exiting took 0.6 s of that per worker after a 1M-line run. A worker of ours has
written and flushed everything by then (every sink closes its files at the end of its bundle), so
it leaves at once instead: 1.3 s of closing became 0.05 s.
"""
from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.portability import python_urns
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from pipeline.local import fork_server as worker_forks
from pipeline.graph.options import LOCAL_RUNNERS

# Input from which a local batch run reads its files in worker processes, one per core: below it,
# starting the workers costs more than they save.
PARALLEL_FROM_BYTES = 64 << 20
# Names the launching process to the worker processes, which inherit its environment.
LAUNCHER_VARIABLE = "CRAWL_AUDIT_LAUNCHER_PID"


def use_both_cores(options: PipelineOptions, argv: list[str], log_files: list) -> bool:
    """Read and audit large local input in worker processes, one per core (up to one per file),
    unless the command line chose how the local runner runs.

    Measured on a 1M-line log in 8 files on 2 cores: 35.4 s in one process, 27.1 s with two
    workers, the same tables. Below `PARALLEL_FROM_BYTES` one process is as fast.
    """
    runner = options.view_as(StandardOptions).runner
    chosen = any(arg.startswith(("--direct_num_workers", "--direct_running_mode")) for arg in argv)
    cores = min(os.cpu_count() or 1, len(log_files))
    size = sum(match.size_in_bytes for match in log_files)
    if runner in LOCAL_RUNNERS and not chosen and cores > 1 and size >= PARALLEL_FROM_BYTES:
        direct = options.view_as(DirectOptions)
        direct.direct_running_mode = "multi_processing"
        direct.direct_num_workers = cores
        return True
    return False


@contextmanager
def local_runner(in_workers: bool, preload: Sequence[str] = ()) -> Iterator[FnApiRunner | None]:
    """The runner of a local run that `use_both_cores` sent to worker processes: one whose workers
    are forked from a fork server started now, which imports the modules `preload` names (those
    of the run's steps) before it forks any. None (the runner the options name) for any other run,
    or where the server cannot be."""
    if not in_workers:
        yield None
        return
    with worker_forks.fork_server(preload) as command:
        yield None if command is None else ForkedWorkersRunner(command)


class ForkedWorkersRunner(FnApiRunner):
    """The local runner, its worker processes started by `command` rather than by a fresh
    interpreter running Beam's worker harness."""

    def __init__(self, command: str):
        super().__init__()
        self._worker_command = command

    def run_via_runner_api(self, pipeline_proto, options):
        for environment in pipeline_proto.components.environments.values():
            if environment.urn == python_urns.SUBPROCESS_SDK:
                environment.payload = self._worker_command.encode()
        return super().run_via_runner_api(pipeline_proto, options)


@contextmanager
def launching() -> Iterator[None]:
    """While a local run goes on, name this process to the worker processes it starts."""
    os.environ[LAUNCHER_VARIABLE] = str(os.getpid())
    try:
        yield
    finally:
        os.environ.pop(LAUNCHER_VARIABLE, None)


_leaving_quickly = False


def leave_quickly_when_done() -> None:
    """In a worker process of a local run (not in the launching process, where an in-memory run
    audits, and not on a remote runner): exit without tearing the heap down once the worker's
    main program has returned. Called from the set-up of the steps that run in every worker."""
    global _leaving_quickly
    launcher = os.environ.get(LAUNCHER_VARIABLE)
    if _leaving_quickly or not launcher or launcher == str(os.getpid()):
        return
    _leaving_quickly = True
    atexit.register(_exit_now)


def _exit_now() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    # An uncaught exception has been printed and left in sys.last_value: keep the failure's status.
    os._exit(1 if getattr(sys, "last_value", None) is not None else 0)
