"""dnsmasq on a loopback port: the real DNS server the DNS tests and the DNS benchmark
(`bench/dns_bench.py`, which imports this module) ask.

It answers only from the records it is given, logs every query, and runs in the foreground of a
child process that the context manager stops.
"""
from __future__ import annotations

import getpass
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dns.exception
import dns.message
import dns.query

_USUAL_PLACE = "/usr/sbin/dnsmasq"  # Debian's dnsmasq-base; often not on a user's PATH
_QUERY = re.compile(r"query\[(\w+)\] (\S+) from")


class DnsmasqError(RuntimeError):
    """dnsmasq could not be started or stopped answering."""


def dnsmasq_binary() -> str | None:
    return shutil.which("dnsmasq") or (_USUAL_PLACE if os.access(_USUAL_PLACE, os.X_OK) else None)


def free_port() -> int:
    """A loopback port free for both UDP and TCP (dnsmasq binds both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = udp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise DnsmasqError("no free loopback port")


@dataclass(frozen=True)
class Dnsmasq:
    port: int
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def mark(self, settle: float = 0.3) -> int:
        """The query log's size once dnsmasq has stopped writing to it (for at most 5 s)."""
        size, deadline = -1, time.monotonic() + 5
        while time.monotonic() < deadline and self.log.stat().st_size != size:
            size = self.log.stat().st_size
            time.sleep(settle)
        return size

    def queries_since(self, mark: int) -> list[tuple[str, str]]:
        """(type, name) of each query logged after `mark`."""
        self.mark()
        with self.log.open("rb") as handle:
            handle.seek(mark)
            return _QUERY.findall(handle.read().decode("utf-8", "replace"))


@contextmanager
def running_dnsmasq(binary: str, folder: Path, records: Sequence[str], probe: str) -> Iterator[Dnsmasq]:
    """dnsmasq answering from `records` (its command-line options) until the block ends.

    It is ready once it answers a TXT question for `probe`; a TXT question is never counted
    among the PTR and address queries a test or benchmark looks for.
    """
    server = Dnsmasq(free_port(), folder / "queries.log")
    command = [
        binary, "--no-daemon", f"--port={server.port}", "--listen-address=127.0.0.1", "--bind-interfaces",
        "--no-resolv", "--no-hosts", "--conf-file=/dev/null", "--pid-file=", f"--user={getpass.getuser()}",
        "--log-queries", f"--log-facility={server.log}", *records,
    ]
    # In the foreground dnsmasq also logs every query to stderr: an unread pipe would fill and stall it.
    output = folder / "dnsmasq.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_until_answering(process, server.port, probe, output)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_until_answering(process: subprocess.Popen, port: int, probe: str, output: Path) -> None:
    question = dns.message.make_query(probe, "TXT")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DnsmasqError(f"dnsmasq exited: {output.read_text('utf-8', 'replace')[-2000:]}")
        try:
            dns.query.udp(question, "127.0.0.1", timeout=0.5, port=port)
            return
        except (dns.exception.Timeout, OSError):
            time.sleep(0.1)
    raise DnsmasqError("dnsmasq did not answer within 10 s")
