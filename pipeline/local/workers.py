"""Worker processes of a local batch run: when a run reads and audits in them, and the runner that
starts them through the fork server (`pipeline.local.fork_server`).

A large local run reads and audits its files in worker processes, one per core (the DirectRunner's
`multi_processing` mode). Below `PARALLEL_FROM_BYTES` starting them costs more than they save
(`bench/README.md` has the figures).
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions
from apache_beam.portability import python_urns
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from pipeline.local import fork_server

# Input from which a local batch run reads its files in worker processes, one per core.
PARALLEL_FROM_BYTES = 64 << 20


def worker_processes(log_bytes: int, log_pieces: int) -> int | None:
    """How many worker processes a local run's input is worth (one per core, up to one per piece
    its files are read in), or None to keep one process."""
    cores = min(os.cpu_count() or 1, log_pieces)
    if cores < 2 or log_bytes < PARALLEL_FROM_BYTES:
        return None
    return cores


def in_worker_processes(options: PipelineOptions, count: int) -> None:
    direct = options.view_as(DirectOptions)
    direct.direct_running_mode = "multi_processing"
    direct.direct_num_workers = count


@contextmanager
def forked_workers(preload: Sequence[str]) -> Iterator[FnApiRunner | None]:
    """A local runner whose worker processes are forked from a fork server started now, which
    imports the modules `preload` names (those of the run's steps) before it forks any; None
    (the runner the options name) where the server cannot be."""
    with fork_server.fork_server(preload) as command:
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
