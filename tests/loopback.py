"""HTTPS servers on 127.0.0.1 for the tests, with a test CA made by the openssl command line.

The certificate names the made-up hosts the tests fetch (`site.example`, `other.example`,
`archive.example`, the IDN `bücher.example` in its A-labels) and 127.0.0.1; the product code trusts it only through its explicit
`ca_file` parameter, so verification stays on.
"""
from __future__ import annotations

import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

NAMES = ("site.example", "other.example", "archive.example", "xn--bcher-kva.example")


@dataclass(frozen=True)
class Tls:
    ca: Path
    cert: Path
    key: Path


def make_tls(folder: Path) -> Tls:
    """A CA and a server certificate it signed, for NAMES and 127.0.0.1."""
    folder.mkdir(parents=True, exist_ok=True)
    key_options = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ca, ca_key = folder / "ca.pem", folder / "ca.key"
    cert, key, request = folder / "server.pem", folder / "server.key", folder / "server.csr"
    _openssl(
        "req", "-x509", *key_options, "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=crawl-audit test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )
    _openssl("req", *key_options, "-keyout", key, "-out", request, "-subj", "/CN=site.example")
    extensions = folder / "server.ext"
    names = ",".join([*(f"DNS:{name}" for name in NAMES), "IP:127.0.0.1"])
    extensions.write_text(
        f"subjectAltName={names}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        "keyUsage=digitalSignature\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    )
    _openssl(
        "x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
        "-out", cert, "-days", "2", "-extfile", extensions,
    )
    return Tls(ca, cert, key)


def _openssl(*arguments: object) -> None:
    subprocess.run(["openssl", *map(str, arguments)], check=True, capture_output=True)


Route = Callable[["Handler"], None]


class Handler(BaseHTTPRequestHandler):
    """Hands every GET to the server's `route`, which answers with the helpers below."""

    def do_GET(self) -> None:
        self.server.seen.append((self.headers.get("Host"), self.path, self.headers.get("User-Agent")))
        self.server.route(self)

    def answer(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def drip(self, body: bytes, every: float) -> None:
        """A 200 whose body arrives one byte per `every` seconds."""
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        try:
            for index in range(len(body)):
                self.wfile.write(body[index:index + 1])
                self.wfile.flush()
                time.sleep(every)
        except OSError:
            pass  # the client gave up: what the test wants

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


class Server:
    """A threaded HTTPS server on 127.0.0.1 on a free port, answering through `route`."""

    def __init__(self, tls: Tls, route: Route) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.cert, tls.key)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.route = route
        self._httpd.seen = []
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def seen(self) -> list[tuple[str, str, str]]:
        """(Host header, path, User-Agent) of every request, in order."""
        return self._httpd.seen

    def set_route(self, route: Route) -> None:
        self._httpd.route = route

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._httpd.shutdown()
        self._thread.join()
        self._httpd.server_close()
