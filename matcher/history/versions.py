"""One fetch outcome of a host's robots.txt, and what its HTTP status means for crawling."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from matcher.hosts import host_key
from matcher.timerange import OutOfRange, is_aware, to_utc

__all__ = ["Kind", "RobotsTableError", "RobotsVersion"]

Kind = Literal["ok", "unavailable", "error"]


class RobotsTableError(ValueError):
    """A robots history row or set of rows that cannot be used as given."""


@dataclass(frozen=True)
class RobotsVersion:
    """One fetch outcome of a host's robots.txt, in effect from `effective_from` on.

    `status` is the HTTP status, or None when the server could not be reached. `kind` is what
    the outcome means for crawling:

    - "ok" (2xx): the body is parsed and its rules apply; a 2xx needs a body (b"" when empty).
    - "unavailable" (3xx, and 4xx except 429): everything is allowed. A fetcher follows
      redirects itself (RFC 9309 §2.3.1.2), so a recorded 3xx means they led nowhere usable,
      which the RFC lets a crawler treat as unavailable. Its body, if any, is never parsed.
    - "error" (5xx, 429, unreachable): complete disallow, until the 30-day rule applies.

    `host` is stored in its one form (`hosts.host_key`: lower case, no trailing dot, no port);
    `effective_from` must be timezone-aware and is stored in UTC. `sha256` is the hex digest of the body, None without one.

    `observed_before`, for histories built from observations (a capture job, an archive), is
    the last time the previous content was seen: the change happened somewhere in
    (observed_before, effective_from]. None means the change time is exact.
    """

    host: str
    effective_from: datetime
    status: int | None
    body: bytes | None = field(default=None, repr=False)
    observed_before: datetime | None = None
    sha256: str | None = field(init=False, compare=False)
    kind: Kind = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if not is_aware(self.effective_from):
            raise RobotsTableError(
                f"effective_from must be a timezone-aware datetime, got {self.effective_from!r}"
            )
        if not isinstance(self.host, str) or not host_key(self.host):
            raise RobotsTableError(f"host must be a non-empty string, got {self.host!r}")
        if self.body is not None and not isinstance(self.body, bytes):
            raise RobotsTableError(f"body must be bytes or None, got {type(self.body).__name__}")
        kind = _kind(self.status)
        if kind == "ok" and self.body is None:
            raise RobotsTableError(
                f"{self.host} at {self.effective_from.isoformat()}: status {self.status} needs a"
                " body (b'' when it is empty)"
            )
        if self.observed_before is not None:
            if not is_aware(self.observed_before):
                raise RobotsTableError(
                    f"observed_before must be a timezone-aware datetime, got {self.observed_before!r}"
                )
            if self.observed_before >= self.effective_from:
                raise RobotsTableError(
                    f"{self.host} at {self.effective_from.isoformat()}: observed_before"
                    f" {self.observed_before.isoformat()} must be earlier than effective_from"
                )
        object.__setattr__(self, "host", host_key(self.host))
        for name in ("effective_from", "observed_before"):
            moment = getattr(self, name)
            try:
                object.__setattr__(self, name, None if moment is None else to_utc(moment))
            except OutOfRange as error:
                raise RobotsTableError(f"{name}: {error}") from None
        object.__setattr__(self, "kind", kind)
        object.__setattr__(
            self, "sha256", None if self.body is None else hashlib.sha256(self.body).hexdigest()
        )


def _kind(status: int | None) -> Kind:
    if status is None:
        return "error"
    if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599:
        raise RobotsTableError(f"status must be an HTTP status 200-599 or None, got {status!r}")
    if status < 300:
        return "ok"
    if status == 429 or status >= 500:
        return "error"
    return "unavailable"
