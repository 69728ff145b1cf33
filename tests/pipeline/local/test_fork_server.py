"""Workers forked from the fork server behave as the processes they stand in for: same environment,
folder, streams and exit status; a local run's workers really are forked from it, import the
audit's own packages whatever folder the run starts in, and leave what the server imported out
of their collections."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to

from matcher.printable import printable
from pipeline.local import workers
from pipeline.local import fork_server as worker_forks

# A fork server whose work is chosen by the environment each stand-in hands over.
_SERVER = textwrap.dedent(
    """
    import atexit, os, sys, time
    from pipeline.local import fork_server as worker_forks

    def work():
        # A forked worker leaves without tearing its heap down: this never prints.
        atexit.register(lambda: print("torn down"))
        outcome = os.environ["WORK_OUTCOME"]
        print(f"cwd={os.getcwd()} token={os.environ['WORK_TOKEN']}", flush=True)
        sys.stderr.write("to stderr\\n")
        if outcome == "raise":
            raise RuntimeError("the harness broke")
        if outcome == "killed":
            os.kill(os.getpid(), 9)
        if outcome == "exit":
            sys.exit(3)

    def prepare():
        time.sleep(0.3)  # stand-ins that connect meanwhile wait in the backlog
        return work

    worker_forks.serve(sys.argv[1], prepare)
    print("server done", file=sys.stderr)
    """
)
_STAND_IN = Path(worker_forks.__file__).with_name("worker_stand_in.py")


@pytest.fixture
def server(tmp_path):
    address = str(tmp_path / "socket")
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, address], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout.readline() == worker_forks.LISTENING
    yield address
    _, errors = process.communicate(timeout=30)  # closes its input: it must leave
    assert process.returncode == 0
    assert b"server done" in errors


def _stand_in(address: str, outcome: str, folder: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "WORK_OUTCOME": outcome, "WORK_TOKEN": f"token-{outcome}"}
    command = [sys.executable, "-I", "-S", str(_STAND_IN), address]
    return subprocess.run(command, env=environment, cwd=folder, capture_output=True, text=True, timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize(
    "outcome, status", [("return", 0), ("exit", 3), ("raise", 1), ("killed", 1)], ids=str
)
def test_a_forked_worker_is_its_stand_in_as_far_as_anyone_can_tell(server, tmp_path, outcome, status):
    finished = _stand_in(server, outcome, tmp_path)
    assert finished.returncode == status
    assert finished.stdout == f"cwd={tmp_path} token=token-{outcome}\n"
    assert finished.stderr.startswith("to stderr\n")
    if outcome == "raise":
        assert "RuntimeError: the harness broke" in finished.stderr


@pytest.mark.slow
def test_stand_ins_are_served_side_by_side(server, tmp_path):
    environment = {**os.environ, "WORK_OUTCOME": "return"}
    command = [sys.executable, "-I", "-S", str(_STAND_IN), server]
    running = [
        subprocess.Popen(command, env={**environment, "WORK_TOKEN": str(n)}, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        for n in range(3)
    ]
    outputs = [process.communicate(timeout=60)[0] for process in running]
    assert outputs == [f"cwd={tmp_path} token={n}\n" for n in range(3)]
    assert all(process.returncode == 0 for process in running)


def test_a_stand_in_without_a_server_fails(tmp_path):
    finished = subprocess.run(
        [sys.executable, "-I", "-S", str(_STAND_IN), str(tmp_path / "nobody")], capture_output=True, timeout=60
    )
    assert finished.returncode != 0
    assert b"FileNotFoundError" in finished.stderr


@pytest.mark.slow
def test_the_fork_server_of_a_run_is_stopped_and_leaves_nothing_behind():
    with worker_forks.fork_server() as command:
        assert command is not None and "worker_stand_in.py" in command
        address = command.split()[-1]
        assert Path(address).exists()
    assert not Path(address).parent.exists()


@pytest.mark.slow
def test_a_local_run_in_worker_processes_forks_them_from_the_server(tmp_path):
    options = PipelineOptions(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    with workers.forked_workers(preload=()) as runner:
        assert isinstance(runner, workers.ForkedWorkersRunner)
        with beam.Pipeline(runner=runner, options=options) as pipeline:
            parents = (
                pipeline
                | beam.Create(range(20))
                | beam.Reshuffle()
                # A lambda travels by value: the workers cannot import this test module.
                | beam.Map(lambda _: Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0"))
                | beam.Map(lambda command: worker_forks.SERVER_MODULE.encode() in command)
                | beam.Distinct()
            )
            assert_that(parents, equal_to([True]))


@pytest.mark.slow
def test_workers_import_the_audit_s_own_packages_from_a_folder_that_has_its_own(tmp_path, monkeypatch):
    # A user's project folder may well hold a `pipeline` or `matcher` package of its own.
    for name in ("pipeline", "matcher"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the folder\\'s own {name}')\n")
    monkeypatch.chdir(tmp_path)
    options = PipelineOptions(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    with workers.forked_workers(preload=("pipeline.graph.build",)) as runner:
        assert isinstance(runner, workers.ForkedWorkersRunner)
        with beam.Pipeline(runner=runner, options=options) as pipeline:
            # `printable` travels by reference: each worker imports `matcher.printable`.
            shown = pipeline | beam.Create(["a\x1bb"]) | beam.Reshuffle() | beam.Map(printable)
            assert_that(shown, equal_to([printable("a\x1bb")]))


@pytest.mark.slow
def test_a_worker_leaves_what_the_server_imported_out_of_its_collections():
    options = PipelineOptions(["--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    with workers.forked_workers(preload=("pipeline.graph.build",)) as runner:
        with beam.Pipeline(runner=runner, options=options) as pipeline:
            frozen = (
                pipeline
                | beam.Create(range(4))
                | beam.Reshuffle()
                | beam.Map(lambda _: __import__("gc").get_freeze_count() > 10_000)
                | beam.Distinct()
            )
            assert_that(frozen, equal_to([True]))


@pytest.mark.slow
def test_a_temporary_folder_too_deep_for_a_socket_path_still_gets_a_fork_server(tmp_path, monkeypatch):
    """A Unix socket's path is at most about a hundred bytes; a deep TMPDIR (a CI runner's, a test
    runner's per-process folder) must not cost the run its workers, nor print a traceback."""
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with worker_forks.fork_server() as command:
        assert command is not None
        address = shlex.split(command)[-1]
        assert len(os.fsencode(address)) < 104
        assert os.stat(os.path.dirname(address)).st_mode & 0o777 == 0o700
    assert not os.path.exists(os.path.dirname(address))
