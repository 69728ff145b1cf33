"""The audit on Beam's PortableRunner as a deployment submits it: `crawl-audit run` talks to a
job service in another process, whose two SDK workers are processes started by an external
worker pool, all in a network namespace with only loopback. The tables and the report are the
local run's, batch and streaming."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import REPO, run_audit, sample_slice
from portable import Namespace, run_tables, sample_argv, start_services, started_workers

SAMPLES = REPO / "samples"
CRAWL_AUDIT = [str(Path(sys.executable).parent / "crawl-audit")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The job service and worker pool, running; the flags that send a run to them."""
    logs = tmp_path_factory.mktemp("portable-logs")
    namespace = Namespace.open()
    try:
        flags = start_services(namespace, logs, sdk_workers=2)
        yield namespace, flags, logs
    finally:
        namespace.close()


def _crawl_audit_in(namespace: Namespace, argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    done = namespace.run([*CRAWL_AUDIT, "run", *argv], timeout=timeout, cwd=REPO)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


@pytest.mark.slow
def test_the_sample_on_a_job_service_with_two_external_workers_equals_the_local_run(cluster, tmp_path):
    namespace, flags, logs = cluster
    sample_logs = str(SAMPLES / "logs" / "*.log.gz")
    _crawl_audit_in(namespace, [*sample_argv(sample_logs, tmp_path / "portable"), *flags])
    assert started_workers(logs) >= 2, (logs / "worker_pool.log").read_text()[-3000:]
    assert run_audit([*sample_argv(sample_logs, tmp_path / "local"), "--runner=FnApiRunner"]) == 0

    portable, local = run_tables(tmp_path / "portable"), run_tables(tmp_path / "local")
    assert len(local["verdicts"]) > 1000 and local["crawl_delay_violations"] and local["dead_letters"]
    assert portable.keys() == local.keys()
    for table in local:
        assert portable[table] == local[table], table
    for name in ("counts.json", "report_counts.json", "report.html"):
        assert (tmp_path / "portable" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    manifest = json.loads((tmp_path / "portable" / "manifest.json").read_text())
    assert manifest["options"]["runner"] == "PortableRunner"


@pytest.mark.slow
def test_the_folder_stream_on_the_job_service_equals_a_local_stream(cluster, tmp_path):
    """The folder source, stopped by --watch-for, with the files landing while it runs (the first
    quarter of each of the sample's files: a stream on the job service takes long over each line)."""
    namespace, flags, _ = cluster
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    logs = str(incoming / "*.log.gz")
    # This job service runs Beam's local runner, which cannot time early panes.
    stream = ["--streaming", "--poll-interval=0.5s", "--watch-for=20s", "--robots-refresh=0", "--changes-every=0"]
    sliced = sample_slice(tmp_path / "sample")
    for sample in sorted(sliced.glob("*.2026-11-02.log.gz")):
        shutil.copy(sample, incoming / sample.name)
    log = tmp_path / "portable-stream.log"
    running = namespace.start([*CRAWL_AUDIT, "run", *stream, *sample_argv(logs, tmp_path / "portable"), *flags], log, cwd=REPO)
    time.sleep(3)
    for day in ("2026-11-03", "2026-11-04"):
        for sample in sorted(sliced.glob(f"*.{day}.log.gz")):
            staged = tmp_path / sample.name
            shutil.copy(sample, staged)
            staged.rename(incoming / sample.name)  # appears complete
        time.sleep(1)
    running.wait(timeout=600)
    assert running.returncode == 0, log.read_text(errors="replace")[-4000:]

    local_stream = [
        *stream, "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK",
        *sample_argv(logs, tmp_path / "local"),
    ]
    assert run_audit(local_stream) == 0
    portable, local = run_tables(tmp_path / "portable"), run_tables(tmp_path / "local")
    assert len(local["verdicts"]) > 1000 and local["crawl_delay_violations"]
    assert portable.keys() == local.keys()
    for table in local:
        assert portable[table] == local[table], table


@pytest.mark.slow
def test_an_unreachable_job_endpoint_is_one_line(tmp_path, capsys):
    """Nothing listens on the port: said at once, not after Beam's five-minute job-service timeout."""
    argv = [
        *sample_argv(str(SAMPLES / "logs" / "*.log.gz"), tmp_path / "out"),
        "--runner=PortableRunner", "--job_endpoint=localhost:1", "--environment_type=LOOPBACK",
    ]
    assert run_audit(argv) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("crawl-audit: ") and "localhost:1" in said[0], said
    assert not (tmp_path / "out").exists()
