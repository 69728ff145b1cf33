"""`history capture` records only the site's state: when the capturing machine's own resolver
does not answer, nothing is recorded and the command exits 1 saying why; a site that does not
answer is still recorded as unreachable. Real DNS: a silent loopback port, and dnsmasq
(tests/localdns.py) giving the site a loopback address where nothing listens."""
from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from localdns import dnsmasq_binary, running_dnsmasq
from pipeline.cli import main as cli


@pytest.fixture
def silent_resolver():
    """A resolver that takes queries and never answers: this machine's DNS is down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sink:
        sink.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sink.getsockname()[1]}"


@contextmanager
def _dnsmasq(folder: Path, records: list[str]) -> Iterator[str]:
    """HOST:PORT of a dnsmasq serving `records`, site.example among them."""
    binary = dnsmasq_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("dnsmasq not found; CI=true requires it")
        pytest.skip("dnsmasq not found (Debian package dnsmasq-base)")
    folder.mkdir()
    with running_dnsmasq(binary, folder, records, probe="site.example") as server:
        yield f"127.0.0.1:{server.port}"


@pytest.fixture
def site_resolver(tmp_path):
    """dnsmasq answering site.example with 127.0.0.1, on whose closed port no server listens."""
    with _dnsmasq(tmp_path / "dns", ["--host-record=site.example,127.0.0.1"]) as address:
        yield address


@pytest.mark.slow
def test_a_resolver_that_does_not_answer_records_nothing(tmp_path, capsys, silent_resolver):
    into = tmp_path / "captures"
    status = cli.main(["history", "capture", "site.example", "--into", str(into), "--dns-server", silent_resolver, "--timeout", "1"])
    said = capsys.readouterr().out
    assert status == 1, said
    assert "site.example: NOT RECORDED" in said
    assert f"the resolver {silent_resolver} did not answer" in said
    assert "says nothing about the site" in said
    assert not into.exists() or not [path for path in into.rglob("*") if path.is_file()]


@pytest.mark.slow
def test_a_site_that_does_not_answer_is_recorded_as_unreachable(tmp_path, capsys, site_resolver):
    """The resolver answers; 127.0.0.1:443, where nothing listens, refuses: the site's state."""
    into = tmp_path / "captures"
    status = cli.main(["history", "capture", "site.example", "--into", str(into), "--dns-server", site_resolver, "--timeout", "2"])
    said = capsys.readouterr().out
    assert status == 0, said
    assert "changed" in said and "Connection refused" in said
    assert [path.suffix for path in (into / "site.example").glob("*Z.*")] == [".unreachable"]


@pytest.fixture
def nxdomain_resolver(tmp_path):
    """dnsmasq answering NXDOMAIN for every name but site.example (127.0.0.1, where nothing listens)."""
    with _dnsmasq(tmp_path / "dns", ["--address=/#/", "--host-record=site.example,127.0.0.1"]) as address:
        yield address


@pytest.mark.slow
def test_a_name_the_resolver_says_does_not_exist_records_nothing_and_the_others_are_captured(
    tmp_path, capsys, nxdomain_resolver
):
    into = tmp_path / "captures"
    argv = ["history", "capture", "gone.example", "site.example", "--into", str(into),
            "--dns-server", nxdomain_resolver, "--timeout", "2"]
    status = cli.main(argv)
    said = capsys.readouterr().out.splitlines()
    assert status == 1, said
    assert said[0].startswith(f"gone.example: NOT RECORDED: cannot resolve gone.example: the resolver {nxdomain_resolver}"
                              " answered NXDOMAIN; that says nothing about the site")
    assert said[1].startswith("site.example: changed -> ")
    assert not (into / "gone.example").exists()
    assert [path.suffix for path in (into / "site.example").glob("*Z.*")] == [".unreachable"]
