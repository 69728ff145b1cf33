"""Beam's portable runner as a deployment runs it, on this machine: a job service and an SDK
worker pool as processes of their own, in a network namespace that has only loopback (Beam's
gRPC servers bind every address), so nothing they open is reachable from outside.

`Namespace` holds the namespace with a sleeping process that ends by itself; every process is
started inside it with `run`/`start`, and `close` stops them all, the holder last.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from helpers import REPO

SAMPLES = REPO / "samples"
JOB_PORT = 8099
WORKER_POOL_PORT = 50000
# The holder's lifetime: a test that is killed outright still leaves nothing behind for long.
HOLD_SECONDS = 1800


def _as_root() -> bool:
    return os.geteuid() == 0


class Namespace:
    """A network namespace with only loopback, up, and the processes started in it."""

    def __init__(self, holder: subprocess.Popen):
        self._holder = holder
        self._processes: list[subprocess.Popen] = []

    @classmethod
    def open(cls) -> "Namespace":
        """A fresh namespace; skips (fails under CI=true) when this machine allows none."""
        unshare = ["unshare", "-n"] if _as_root() else ["unshare", "-r", "-n"]
        if not shutil.which("unshare") or not shutil.which("nsenter"):
            _unavailable("unshare/nsenter not found (util-linux)")
        holder = subprocess.Popen(
            [*unshare, "--", "sh", "-c", f"ip link set lo up && echo up && exec sleep {HOLD_SECONDS}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        if holder.stdout.readline().strip() != "up":
            holder.kill()
            _, said = holder.communicate()
            _unavailable(f"no network namespace could be made here: {said.strip() or 'ip link set lo up failed'}")
        return cls(holder)

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` as run inside the namespace."""
        pid = str(self._holder.pid)
        enter = ["nsenter", f"--net=/proc/{pid}/ns/net"] if _as_root() else [
            "nsenter", "-t", pid, "-U", "-n", "--preserve-credentials"
        ]
        return [*enter, "--", *argv]

    def start(self, argv: Sequence[str], log: Path, **kwargs) -> subprocess.Popen:
        """A long-running process in the namespace, its output in `log`; stopped by `close`."""
        with open(log, "wb") as out:
            process = subprocess.Popen(
                self.command(argv), stdout=out, stderr=subprocess.STDOUT, env=_venv_env(),
                start_new_session=True, **kwargs,
            )
        self._processes.append(process)
        return process

    def run(self, argv: Sequence[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
        """A command run to its end in the namespace."""
        return subprocess.run(
            self.command(argv), env=_venv_env(), capture_output=True, text=True, timeout=timeout, **kwargs
        )

    def wait_for_port(self, port: int, process: subprocess.Popen, log: Path, seconds: float = 120) -> None:
        """Until something in the namespace accepts connections on `port`; fails with the log of
        `process` when it ends first or the time is up."""
        probe = (
            f"for i in $(seq {int(seconds * 10)}); do"
            f" (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && exit 0;"
            f" kill -0 {process.pid} 2>/dev/null || exit 1; sleep 0.1; done; exit 1"
        )
        if self.run(["bash", "-c", probe], timeout=seconds + 30).returncode != 0:
            pytest.fail(f"nothing listens on port {port}:\n{log.read_text(errors='replace')[-3000:]}")

    def close(self) -> None:
        """Stops every process started here (their whole process groups), then the holder."""
        for process in reversed(self._processes):
            _stop(process)
        self._holder.kill()
        self._holder.wait()


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        process.wait()


def _venv_env() -> dict[str, str]:
    # The worker pool starts each SDK worker as a bare `python` from PATH: it must be this one.
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO)}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the portable runner tests must run)")
    pytest.skip(f"{reason}: the portable runner tests need unshare -n (root) or user namespaces")


def start_services(namespace: Namespace, logs: Path, sdk_workers: int = 2) -> list[str]:
    """Beam's Python job service (with `sdk_workers` workers per job) and an external SDK worker
    pool, started in `namespace` and answering; the flags that send a run to them."""
    pool_log, job_log = logs / "worker_pool.log", logs / "job_service.log"
    pool = namespace.start(
        [sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", f"--service_port={WORKER_POOL_PORT}"],
        pool_log,
    )
    job = namespace.start(
        [sys.executable, str(REPO / "tests" / "job_service.py"), f"--port={JOB_PORT}", f"--sdk-workers={sdk_workers}"],
        job_log,
    )
    namespace.wait_for_port(WORKER_POOL_PORT, pool, pool_log)
    namespace.wait_for_port(JOB_PORT, job, job_log)
    return [
        "--runner=PortableRunner", f"--job_endpoint=localhost:{JOB_PORT}",
        "--environment_type=EXTERNAL", f"--environment_config=localhost:{WORKER_POOL_PORT}",
    ]


def started_workers(logs: Path) -> int:
    """How many SDK worker processes the pool started, from its log."""
    return (logs / "worker_pool.log").read_text(errors="replace").count("Starting worker with command")


def sample_argv(logs: str, out: Path) -> list[str]:
    """A run of the bundled sample's tables over `logs` into `out`."""
    return [
        f"--logs={logs}", "--log-format=host_combined", f"--robots={SAMPLES / 'robots' / 'history.jsonl'}",
        f"--ranges={SAMPLES / 'ranges'}", f"--out={out}", "--window=1h", "--allowed-lateness=15m",
    ]


def run_tables(out: Path) -> dict[str, list[str]]:
    """Every table of a run folder as its rows, each canonical JSON, sorted."""
    return {
        folder.name: sorted(
            json.dumps(json.loads(line), sort_keys=True)
            for part in folder.glob("*.jsonl") for line in part.read_text().splitlines()
        )
        for folder in sorted(out.iterdir()) if folder.is_dir() and not folder.name.startswith(".")
    }
