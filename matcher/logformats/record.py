"""The record a log line becomes, the skim of a line, and the error of a line that becomes none."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple


@dataclass(frozen=True)
class SignedHeaders:
    """A request's HTTP Message Signature headers as the log carries them, escapes undone, with
    the authority exactly as logged (port and case kept): what a Web Bot Auth check needs.
    A Signature-Agent may come without a signature; `agent_logged` says whether the log format
    has a Signature-Agent field at all."""

    authority: str | None
    signature_agent: str | None
    signature_input: str | None
    signature: str | None
    agent_logged: bool = True


@dataclass(frozen=True, init=False)
class LogRecord:
    """One request as logged, with the timestamp in UTC and the host in its one form
    (`hosts.host_key`: lower case, no trailing dot, no port), None when the line names none.

    `target` is the request target as written; `path` is its path+?query (equal to
    `target` for origin-form, the part after the authority for absolute-form).
    `user_agent` is "" when the request carried none. `target_host` is the host an
    absolute-form target names (in the one form), None for origin-form: evidence of what the
    client asked for, never the host the request is audited under. `signed` holds the signature
    headers when the log carries `Signature-Input` and `Signature`, or a `Signature-Agent`.
    """

    ts: datetime
    host: str | None
    client_ip: str
    method: str | None  # None: the log does not write the method
    target: str
    path: str
    status: int | None
    size: int | None
    referer: str | None
    user_agent: str
    forwarded_for: str | None = None
    x_robots_tag: tuple[str, ...] = ()
    target_host: str | None = None
    signed: SignedHeaders | None = None
    content_usage: str | None = None  # the Content-Usage response header, its lines joined by ", "
    retry_after: str | None = None  # the Retry-After response header as logged

    def __init__(
        self,
        ts: datetime,
        host: str | None,
        client_ip: str,
        method: str | None,
        target: str,
        path: str,
        status: int | None,
        size: int | None,
        referer: str | None,
        user_agent: str,
        forwarded_for: str | None = None,
        x_robots_tag: tuple[str, ...] = (),
        target_host: str | None = None,
        signed: SignedHeaders | None = None,
        content_usage: str | None = None,
        retry_after: str | None = None,
    ) -> None:
        # One write instead of the frozen __init__'s twelve guarded setattr calls:
        # a record is built per log line and that cost was a third of a parse.
        object.__setattr__(self, "__dict__", {
            "ts": ts, "host": host, "client_ip": client_ip, "method": method,
            "target": target, "path": path, "status": status, "size": size,
            "referer": referer, "user_agent": user_agent,
            "forwarded_for": forwarded_for, "x_robots_tag": x_robots_tag, "target_host": target_host,
            "signed": signed, "content_usage": content_usage, "retry_after": retry_after,
        })


class Skim(NamedTuple):
    """What decides whether a line can be a crawler request, read without building its record."""

    client_ip: str
    forwarded_for: str | None
    ts: datetime
    user_agent: str
    match: re.Match[str]  # `record` turns it into the line's record
    referer: str | None  # as the record holds it


class LogParseError(ValueError):
    """A line that yields no record; `reason` is a short code for the dead-letter table."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message

    def __reduce__(self) -> tuple[type[LogParseError], tuple[str, str]]:
        # The default reduce passes the formatted text as the only argument,
        # which does not fit __init__; workers that pickle errors need this.
        return (type(self), (self.reason, self.message))


# Reasons of lines the server wrote as it should that carry no request for a resource: a
# connection closed before its request line (a 408 logged with "-"), bytes that are not HTTP (a
# TLS handshake sent to port 80), `OPTIONS *`, `CONNECT host:443`, a W3C log's own
# `#Fields:`-style directives, and a blank line, which holds nothing a format could fail to read.
# They are counted apart as not-requests, never taken for unreadable lines.
NOT_REQUEST_REASONS = frozenset({"no-request", "not-http", "asterisk-form", "authority-form", "directive", "blank"})


def is_not_request(reason: str) -> bool:
    """A parse error's reason names a line that is not a request, rather than one unreadable."""
    return reason in NOT_REQUEST_REASONS


def logged_status(text: str | None) -> int | None:
    """A status as a text log writes it: none when not logged, empty, `-` or negative (HAProxy's
    -1 for a request that got no answer)."""
    return None if text in ("-", "", None) or text.startswith("-") else int(text)


def logged_size(text: str | None) -> int | None:
    """A response size as a text log writes it: `-` (a response of no body) is 0, an empty or
    absent field none; HAProxy may write a leading `+`."""
    return None if text in ("", None) else 0 if text == "-" else int(text.lstrip("+"))
