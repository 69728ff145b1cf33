"""What makes a batch run on the local DirectRunner faster, chosen in one place (`speedups`) and
switched off by `--local-speedups off`. The graph is the same either way: these change which
processes run it and where its groupings keep their data, never its steps.

- Worker processes (`workers`): a large local run reads and audits in one process per core,
  forked from a fork server that imported Beam and the audit while the graph was built
  (`fork_server`, `worker_stand_in`); a forked worker leaves without tearing its heap down, and
  its garbage collections leave out what the server imported, so that they neither scan it nor
  copy the pages it shares with the server.
- The grouping on disk (`spill`): a local runner holds a grouped collection whole in memory, so
  the crawl-delay requests and the report's disallowed paths are grouped through files instead, a
  shard of the keys at a time.
- Fewer malloc arenas (`heap`): the launching process, the fork server and its workers keep two
  heaps each, not one per busy thread, so less of a long run's memory sits freed in heaps that only
  one thread reuses.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions

from pipeline.graph.read_logs import pieces_expected
from pipeline.graph.settings import LOCAL_RUNNERS, RunSettings
from pipeline.local import heap, spill, workers

# The modules of the run's steps, which the fork server imports before it forks a worker.
_GRAPH_MODULES = ("pipeline.graph.build", "pipeline.local.spill")


@dataclass(frozen=True)
class LocalPlan:
    """How a batch run runs: the runner to hand Beam (None: the one the options name), the
    grouping to hand the graph (None: the runner's), and for the manifest the
    processes a local runner reads and audits in (None on other runners)."""

    runner: object | None
    grouping: object | None
    worker_processes: int | None


@contextmanager
def speedups(settings: RunSettings, options: PipelineOptions, log_files: Sequence) -> Iterator[LocalPlan]:
    """The plan of a batch run, with whatever it started (a fork server, a spill folder) stopped
    and removed on leaving."""
    if settings.runner not in LOCAL_RUNNERS:
        yield LocalPlan(None, None, None)
        return
    if not settings.local_speedups:
        yield LocalPlan(None, None, _processes(options))
        return
    heap.limit_arenas()
    with ExitStack() as started:
        runner = None
        count = None if settings.local_mode_chosen else workers.worker_processes(
            sum(f.size_in_bytes for f in log_files), pieces_expected(log_files)
        )
        if count is not None:
            workers.in_worker_processes(options, count)
            runner = started.enter_context(workers.forked_workers(_GRAPH_MODULES))
        grouping = started.enter_context(spill.grouping_on_disk())
        yield LocalPlan(runner, grouping, _processes(options))


def _processes(options: PipelineOptions) -> int:
    direct = options.view_as(DirectOptions)
    return direct.direct_num_workers if direct.direct_running_mode == "multi_processing" else 1
