"""The shared HTTPS client: its overall deadline holds in every phase of a fetch, redirects
stay on HTTPS, and certificates are always checked."""
from __future__ import annotations

import socket
import time

import pytest

from loopback import Server
from pipeline.evidence.http_client import Client, FetchError


def _header_drip(handler) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok":
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.2)


def _route(handler) -> None:
    if handler.path == "/slow-headers":
        _header_drip(handler)
    elif handler.path == "/to-other-host":
        handler.answer(302, headers={"Location": "https://other.example/landing"})
    else:
        handler.answer(200, handler.headers.get("Host").encode())


@pytest.fixture
def server(tls):
    with Server(tls, _route) as running:
        yield running


def _client(tls, server, timeout=5.0, **options) -> Client:
    connect_to = {name: ("127.0.0.1", server.port) for name in ("site.example", "other.example")}
    return Client(user_agent="test", timeout=timeout, max_bytes=1024, ca_file=str(tls.ca), connect_to=connect_to, **options)


def test_connect_to_keeps_the_host_in_the_request_and_the_certificate_check(tls, server):
    response = _client(tls, server).get("https://site.example/")
    assert (response.status, response.body) == (200, b"site.example")
    moved = _client(tls, server).get("https://site.example/to-other-host")
    assert (moved.url, moved.body, moved.redirects) == (
        "https://other.example/landing", b"other.example", ("https://site.example/to-other-host",)
    )


@pytest.mark.slow
def test_the_deadline_holds_while_headers_drip(tls, server):
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"no complete answer from https://site.example/slow-headers within 1s"):
        _client(tls, server, timeout=1.0).get("https://site.example/slow-headers")
    assert time.monotonic() - started < 1.5


@pytest.mark.slow
def test_the_deadline_holds_when_the_tls_handshake_never_comes(tls):
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        client = Client(user_agent="test", timeout=1.0, max_bytes=1024, ca_file=str(tls.ca),
                        connect_to={"site.example": silent.getsockname()})
        started = time.monotonic()
        with pytest.raises(FetchError, match="within 1s"):
            client.get("https://site.example/robots.txt")
        assert time.monotonic() - started < 1.5


def test_a_certificate_for_another_name_is_refused(tls, server):
    client = Client(user_agent="test", timeout=5, max_bytes=1024, ca_file=str(tls.ca),
                    connect_to={"unnamed.example": ("127.0.0.1", server.port)})
    with pytest.raises(FetchError, match="certificate not trusted"):
        client.get("https://unnamed.example/")


def test_redirects_are_counted_against_the_limit(tls, server):
    response = _client(tls, server, max_redirects=0).get("https://site.example/to-other-host")
    assert (response.status, response.stopped) == (302, "more than 0 redirects")
