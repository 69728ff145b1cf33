"""The one place a batch run's local speed-ups are chosen (`pipeline.local.speedups`): worker
processes for large input on the local runner, the crawl-delay grouping on disk, and nothing of
either when switched off or on another runner."""
from __future__ import annotations

from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import DirectOptions

from helpers import run_settings
from pipeline import local
from pipeline.local import workers
from pipeline.tables.run_folder import LogFile

LARGE = workers.PARALLEL_FROM_BYTES


def _plan(tmp_path: Path, sizes: list[int], *flags: str, suffix: str = ".log"):
    settings, options = run_settings(
        [f"--logs={tmp_path}/*.log", f"--robots={tmp_path}/r.jsonl", f"--out={tmp_path}/out", "--local-speedups=on", *flags]
    )
    files = [LogFile(f"{tmp_path}/{n}{suffix}", size) for n, size in enumerate(sizes)]
    return settings, options, files


@pytest.mark.slow
def test_large_local_input_is_read_in_forked_worker_processes_one_per_core(tmp_path, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    settings, options, files = _plan(tmp_path, [LARGE, LARGE, LARGE], "--runner=FnApiRunner")
    with local.speedups(settings, options, files) as plan:
        assert isinstance(plan.runner, workers.ForkedWorkersRunner)
        assert plan.worker_processes == 2
        assert options.view_as(DirectOptions).direct_running_mode == "multi_processing"
        spill = Path(plan.grouping.folder)
        assert spill.is_dir()
    assert not spill.exists()


@pytest.mark.slow
def test_one_large_plain_file_is_read_in_worker_processes_too(tmp_path, monkeypatch):
    """It is read in pieces, as many files are."""
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    settings, options, files = _plan(tmp_path, [LARGE * 2], "--runner=FnApiRunner")
    with local.speedups(settings, options, files) as plan:
        assert isinstance(plan.runner, workers.ForkedWorkersRunner) and plan.worker_processes == 2


@pytest.mark.parametrize(
    "sizes, cores, suffix",
    [([LARGE // 4, LARGE // 4], 2, ".log"), ([LARGE * 2], 2, ".log.gz"), ([LARGE, LARGE], 1, ".log")],
    ids=["small input", "one compressed file", "one core"],
)
def test_other_local_input_stays_in_one_process(tmp_path, monkeypatch, sizes, cores, suffix):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: cores)
    settings, options, files = _plan(tmp_path, sizes, suffix=suffix)
    with local.speedups(settings, options, files) as plan:
        assert plan.runner is None and plan.worker_processes == 1
        assert plan.grouping is not None


def test_a_command_line_that_chose_the_local_runners_mode_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    settings, options, files = _plan(tmp_path, [LARGE, LARGE], "--direct_num_workers=1")
    with local.speedups(settings, options, files) as plan:
        assert plan.runner is None and plan.worker_processes == 1


def test_switched_off_the_local_runner_runs_as_it_comes(tmp_path, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    settings, options, files = _plan(
        tmp_path, [LARGE, LARGE], "--local-speedups=off", "--direct_running_mode=multi_processing",
        "--direct_num_workers=2",
    )
    with local.speedups(settings, options, files) as plan:
        assert (plan.runner, plan.grouping, plan.worker_processes) == (None, None, 2)


def test_another_runner_gets_none_of_them(tmp_path):
    settings, options, files = _plan(tmp_path, [LARGE, LARGE], "--runner=FlinkRunner")
    with local.speedups(settings, options, files) as plan:
        assert (plan.runner, plan.grouping, plan.worker_processes) == (None, None, None)
