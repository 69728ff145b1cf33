"""Worker processes of a local run leave at once when done, with what they printed and their status."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pipeline.local import workers as local_workers

_WORKER = textwrap.dedent(
    """
    import atexit, os, sys
    from pipeline.local import workers as local_workers
    atexit.register(lambda: print("torn down"))  # registered first, so it would run last
    if sys.argv[2] == "launcher":  # as an in-memory run audits in the launching process
        os.environ[local_workers.LAUNCHER_VARIABLE] = str(os.getpid())
    local_workers.leave_quickly_when_done()
    print("done", end="")
    sys.stderr.write("logged")
    if sys.argv[1] == "fail":
        raise RuntimeError("the harness broke")
    """
)


def _run_worker(launcher_pid: str | None, outcome: str, role: str = "worker") -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != local_workers.LAUNCHER_VARIABLE}
    if launcher_pid is not None:
        env[local_workers.LAUNCHER_VARIABLE] = launcher_pid
    return subprocess.run(
        [sys.executable, "-c", _WORKER, outcome, role], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_worker_of_a_local_run_exits_without_tearing_down_and_keeps_its_output():
    finished = _run_worker(str(os.getpid()), "succeed")
    assert finished.returncode == 0
    assert finished.stdout == "done"  # flushed, and the teardown's atexit never ran
    assert finished.stderr.endswith("logged")  # after whatever Beam warns of on import


def test_a_worker_that_fails_still_exits_with_a_failure_status():
    finished = _run_worker(str(os.getpid()), "fail")
    assert finished.returncode == 1
    assert "the harness broke" in finished.stderr


@pytest.mark.parametrize(
    "launcher_pid, role", [(None, "worker"), (None, "launcher")], ids=["no local run", "the launching process"]
)
def test_other_processes_end_as_usual(launcher_pid, role):
    finished = _run_worker(launcher_pid, "succeed", role)
    assert finished.returncode == 0
    assert finished.stdout == "donetorn down\n"


def test_the_launcher_names_itself_only_while_the_run_goes_on():
    with local_workers.launching():
        assert os.environ[local_workers.LAUNCHER_VARIABLE] == str(os.getpid())
    assert local_workers.LAUNCHER_VARIABLE not in os.environ
