"""`crawl-audit history capture` against an HTTPS robots.txt server on 127.0.0.1 whose answer
changes between calls, and the captures folder read back as a robots table."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from loopback import Server
from matcher import robots
from pipeline.cli import main as cli
from pipeline.evidence.captures import checked_host
from pipeline.evidence.history_capture import capture, robots_client
from pipeline.evidence.robots_table import read_robots_table

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
BODY_A = b"User-agent: *\nDisallow: /private\n"
BODY_B = b"User-agent: *\nDisallow:\n"


class Script:
    """The answer the server gives now, changed by the test between captures."""

    def __init__(self) -> None:
        self.answer = lambda handler: handler.answer(200, BODY_A)

    def __call__(self, handler) -> None:
        if handler.path.startswith("/hop/"):  # /hop/N redirects N - 1 more times, then to /final
            left = int(handler.path.rsplit("/", 1)[1])
            handler.answer(301, headers={"Location": f"/hop/{left - 1}" if left > 1 else "/final"})
        elif handler.path == "/final":
            handler.answer(200, BODY_A)
        else:
            self.answer(handler)


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def server(tls, script):
    with Server(tls, script) as running:
        yield running


def _client(tls, server, timeout=2.0):
    return robots_client(timeout=timeout, ca_file=str(tls.ca), connect_to={"site.example": ("127.0.0.1", server.port)})


def _redirects(count: int):
    return lambda handler: handler.answer(301, headers={"Location": f"/hop/{count - 1}" if count > 1 else "/final"})


def _slow(handler) -> None:
    time.sleep(2.5)
    handler.answer(200, BODY_B)


# (what the server answers, the outcome recorded: a new capture's extension, or None for "same")
STEPS = [
    (lambda h: h.answer(200, BODY_A), "txt"),
    (lambda h: h.answer(200, BODY_A), None),
    (_redirects(5), None),  # five redirects are followed to the same body
    (_redirects(6), "301"),  # the sixth is not: robots.txt unavailable
    (lambda h: h.answer(404, b"<html>gone</html>"), "404"),
    (lambda h: h.answer(410), None),  # same status class
    (lambda h: h.answer(503, b"busy"), "503"),
    (_slow, "unreachable"),  # no answer within the deadline
    (lambda h: h.answer(302, headers={"Location": "http://site.example/robots.txt"}), "302"),  # HTTPS only
    (lambda h: h.answer(200, BODY_B + b"#" * robots.MAX_BYTES), "txt"),  # over the cap: what is parsed is kept
    (lambda h: h.answer(200, BODY_A), "txt"),
]


@pytest.mark.slow
def test_each_change_of_outcome_is_one_capture_and_every_fetch_is_logged(tls, server, script, tmp_path):
    client = _client(tls, server, timeout=1.0)
    results = []
    for step, (answer, _) in enumerate(STEPS):
        script.answer = answer
        (done,) = capture(["site.example"], tmp_path, client, now=lambda step=step: T0 + timedelta(hours=step))
        results.append(done)
    expected = [extension for _, extension in STEPS]
    assert [None if r.written is None else r.written.suffix[1:] for r in results] == expected
    assert "after 5 redirect(s)" in results[2].note
    assert results[3].note.endswith("more than 5 redirects")
    assert results[7].note == "no complete answer from https://site.example/robots.txt within 1s"
    assert results[8].note.endswith("refused: HTTPS only")
    assert results[9].note.endswith(f"only the first {robots.MAX_BYTES} bytes kept")
    assert results[9].written.read_bytes() == (BODY_B + b"#" * robots.MAX_BYTES)[: robots.MAX_BYTES]
    assert {host for host, _, _ in server.seen} == {"site.example"}  # the Host header names the site
    assert {agent for _, _, agent in server.seen} == {"crawl-audit-history/0.1"}

    folder = tmp_path / "site.example"
    log = (folder / "observations.log").read_text().splitlines()
    assert len(log) == len(STEPS)
    assert log[1] == "2026-11-02T10:00:00Z  same  20261102T090000Z.txt"

    versions = read_robots_table(str(tmp_path))
    assert [(v.effective_from - T0, v.status) for v in versions] == [
        (timedelta(hours=h), status)
        for h, status in ((0, 200), (3, 301), (4, 404), (6, 503), (7, None), (8, 302), (9, 200), (10, 200))
    ]
    # The content seen at hour 0 was seen again until hour 2; the change came after that.
    assert versions[1].observed_before == T0 + timedelta(hours=2)
    assert versions[3].observed_before == T0 + timedelta(hours=5)


def test_concurrent_captures_of_one_host_write_one_capture(tls, server, tmp_path):
    client = _client(tls, server)
    threads = [
        threading.Thread(target=capture, args=(["site.example"], tmp_path, client, lambda n=n: T0 + timedelta(seconds=n)))
        for n in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    folder = tmp_path / "site.example"
    assert len([p for p in folder.iterdir() if p.suffix == ".txt"]) == 1
    assert len((folder / "observations.log").read_text().splitlines()) == 6
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_the_command_is_idempotent_and_refuses_a_bad_host(tls, server, tmp_path, capsys):
    argv = [
        "history", "capture", "site.example", "Site.Example.", f"--into={tmp_path}", f"--ca-file={tls.ca}",
        f"--connect-to=site.example=127.0.0.1:{server.port}", "--timeout=5",
    ]
    assert cli.main(argv) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("site.example: changed -> ") and first.endswith(".txt (200)")
    # Both spellings are one host: the second fetch finds the same outcome and is only logged.
    assert second.startswith("site.example: same as ") and second.endswith(".txt (200)")
    assert cli.main(argv[:3] + argv[4:]) == 0
    assert capsys.readouterr().out.startswith("site.example: same as ")
    assert len(list((tmp_path / "site.example").glob("*.txt"))) == 1

    assert cli.main(["history", "capture", "../etc", f"--into={tmp_path}"]) == 2
    assert "not a host name: '../etc'" in capsys.readouterr().err
    assert not (tmp_path.parent / "etc").exists()


def test_an_idn_host_is_fetched_and_kept_under_its_a_labels(tls, server, tmp_path, capsys):
    argv = [
        "history", "capture", "Bücher.Example", f"--into={tmp_path}", f"--ca-file={tls.ca}",
        f"--connect-to=bücher.example=127.0.0.1:{server.port}", "--timeout=5",
    ]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith("xn--bcher-kva.example: changed -> ")
    assert [path.name for path in tmp_path.iterdir()] == ["xn--bcher-kva.example"]
    assert server.seen[-1][:2] == ("xn--bcher-kva.example", "/robots.txt")


def test_an_untrusted_certificate_makes_the_host_unreachable(server, tmp_path):
    client = robots_client(timeout=2, connect_to={"site.example": ("127.0.0.1", server.port)})  # system CAs
    (done,) = capture(["site.example"], tmp_path, client)
    assert done.written.name.endswith(".unreachable") and "certificate not trusted" in done.note


@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "a..b", "-a.example", "[::1]", "site.example:443", "x" * 254])
def test_a_host_that_is_not_a_plain_name_never_becomes_a_folder(name):
    with pytest.raises(ValueError, match="not a host name"):
        checked_host(name)


def test_host_names_are_kept_in_the_form_lookups_compare_in():
    assert [checked_host(name) for name in ("Site.Example.", "192.0.2.1", "xn--bcher-kva.example", "Bücher.Example")] == [
        "site.example", "192.0.2.1", "xn--bcher-kva.example", "xn--bcher-kva.example"
    ]
