"""The one HTTPS client of crawl-audit: `history capture`, `history import-wayback` and
`update-ranges` fetch through it.

Built on the standard library's `http.client` and `ssl` rather than urllib3 or httpx: their
timeouts bound each connect and each socket read, so a server dripping one byte per read holds
them indefinitely, and an overall deadline has to be enforced around them anyway. With the
socket in hand this module enforces it directly: connecting and the TLS handshake get the time
that remains, and a watchdog shuts the socket down at the deadline, which ends any read still
blocked, in the headers or the body. It
also owns the redirect policy (HTTPS only, at most five hops, RFC 9309 §2.3.1.2) and the size
cap, and needs no dependency.

Certificates are always verified, against the system's CAs or, with `ca_file`, against that
file alone. `connect_to` sends a host's connections to another address while the request and
the certificate check still name the host (like curl's --connect-to): for a mirror, a staging
server, or a test server on 127.0.0.1.
"""
from __future__ import annotations

import errno
import http.client
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

DEFAULT_MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


class FetchError(Exception):
    """No usable answer (refused URL, network or TLS error, deadline passed); the message says why."""


class LocalFailure(FetchError):
    """The site's name could not be resolved, or this machine has no route to it: the fetch says
    nothing about the site."""


# What says nothing about the site: no route from this machine to its network or host, and any
# failure to resolve its name (no such name, no address, a resolver that failed or did not
# answer), which an offline machine or a broken resolver configuration gives for every name.
_LOCAL_ERRNOS = frozenset({errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH})


@dataclass(frozen=True)
class Response:
    """The last answer of a redirect chain.

    `status` is a 3xx only when the chain was not followed to its end; `stopped` then says why.
    `truncated`: the body went past the size cap and holds only that many bytes.
    `retry_after` is the server's Retry-After header, for a caller that backs off.
    """

    url: str
    status: int
    body: bytes
    truncated: bool = False
    redirects: tuple[str, ...] = ()
    stopped: str | None = None
    retry_after: str | None = None


class Client:
    """GET over HTTPS with an overall deadline per fetch (`timeout` seconds, redirects
    included), a size cap and same-scheme redirects."""

    def __init__(
        self,
        *,
        user_agent: str,
        timeout: float,
        max_bytes: int,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        ca_file: str | None = None,
        connect_to: Mapping[str, tuple[str, int]] | None = None,
        resolve: Callable[[str], str] | None = None,
    ) -> None:
        if timeout <= 0 or max_bytes <= 0 or max_redirects < 0:
            raise ValueError("timeout and max_bytes must be positive, max_redirects not negative")
        self.user_agent = user_agent
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self._context = ssl.create_default_context(cafile=ca_file)
        self._connect_to = {host.lower(): target for host, target in (connect_to or {}).items()}
        # a host name -> the address to connect to, instead of the system resolver; raises
        # FetchError (LocalFailure when the resolver itself did not answer)
        self._resolve = resolve

    def get(self, url: str, accept: str = "*/*", max_bytes: int | None = None) -> Response:
        """GET `url`; `max_bytes` overrides the client's size cap for this fetch."""
        deadline = time.monotonic() + self.timeout
        cap = self.max_bytes if max_bytes is None else max_bytes
        redirects: list[str] = []
        while True:
            response, location = self._once(url, accept, deadline, cap)
            if location is None:
                return Response(
                    url, response.status, response.body, response.truncated, tuple(redirects),
                    retry_after=response.retry_after,
                )
            target = urljoin(url, location)
            if urlsplit(target).scheme != "https":
                stopped = f"redirect to {target} refused: HTTPS only"
            elif len(redirects) == self.max_redirects:
                stopped = f"more than {self.max_redirects} redirects"
            else:
                redirects.append(url)
                url = target
                continue
            return Response(url, response.status, b"", False, tuple(redirects), stopped)

    def _once(self, url: str, accept: str, deadline: float, cap: int) -> tuple[Response, str | None]:
        """One request: its answer, and the Location to follow when it is a redirect."""
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            raise FetchError(f"refused {url}: only https:// URLs are fetched")
        host = parts.hostname
        try:
            port = parts.port or 443
        except ValueError:
            raise FetchError(f"refused {url}: bad port") from None
        address = self._connect_to.get(host.lower())
        if address is None:
            address = (self._resolve(host) if self._resolve is not None else host, port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        watchdog = _Watchdog(deadline)
        connection = http.client.HTTPSConnection(host, port, context=self._context)
        tls = None
        try:
            raw = socket.create_connection(address, timeout=watchdog.remaining())
            watchdog.guard(raw)
            # The connection is opened here, not by http.client, to connect to `address`
            # while TLS and the Host header name `host`.
            tls = connection.sock = self._context.wrap_socket(raw, server_hostname=host)
            watchdog.guard(tls)
            tls.settimeout(watchdog.remaining())
            connection.request(
                "GET", target,
                headers={"User-Agent": self.user_agent, "Accept": accept, "Accept-Encoding": "identity",
                         "Connection": "close"},
            )
            answer = connection.getresponse()
            body, truncated = _read_body(answer, watchdog, cap)
            location = answer.getheader("Location") if answer.status in _REDIRECTS else None
            return Response(url, answer.status, body, truncated, retry_after=answer.getheader("Retry-After")), location
        except (OSError, http.client.HTTPException, ValueError) as error:
            if _is_local(error):
                raise LocalFailure(f"cannot fetch {url}: {_local_part(error)} ({_reason(error)})") from None
            if watchdog.expired():
                raise FetchError(f"no complete answer from {url} within {self.timeout:g}s") from None
            raise FetchError(f"cannot fetch {url}: {_reason(error)}") from None
        finally:
            watchdog.cancel()
            connection.close()
            if tls is not None:
                tls.close()


def _read_body(answer: http.client.HTTPResponse, watchdog: _Watchdog, cap: int) -> tuple[bytes, bool]:
    """At most `cap` bytes of the body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = answer.read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if watchdog.expired():
            raise TimeoutError("deadline passed")
    body = b"".join(chunks)
    return body[:cap], len(body) > cap


class _Watchdog:
    """Shuts the guarded socket down at the deadline, so no blocked read outlives it."""

    def __init__(self, deadline: float) -> None:
        self._deadline = deadline
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._fired = False
        self._timer = threading.Timer(max(deadline - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline passed")
        return left

    def expired(self) -> bool:
        return self._fired or time.monotonic() >= self._deadline

    def guard(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self._fired:
                self._shutdown()

    def cancel(self) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        with self._lock:
            self._fired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed or never connected: nothing left to interrupt


def _is_local(error: BaseException) -> bool:
    if isinstance(error, socket.gaierror):
        return True
    return isinstance(error, OSError) and error.errno in _LOCAL_ERRNOS


def _local_part(error: BaseException) -> str:
    return "its name could not be resolved" if isinstance(error, socket.gaierror) else "this machine has no route to it"


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"certificate not trusted ({error.verify_message})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
