"""robots.txt versions by host and time, and the judgement of one request against them.

A host's robots.txt changes over time; each change is a `RobotsVersion` that takes effect at
`effective_from` and stays in effect until the next one. `RobotsHistory.judge` finds the version
in effect when a request was made, applies the HTTP-status semantics of RFC 9309 §2.3.1 (with the
30-day error rule), the cache grace and the uncertainty of a history built from observations,
and says which version and which rule decided.
"""
from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from matcher import robots
from matcher.hosts import host_key
from matcher.in_effect import index_in_effect
from matcher.normalize import normalize
from matcher.timerange import NoOffset, OutOfRange, parse_timestamp, shifted, to_utc

Kind = Literal["ok", "unavailable", "error"]
Verdict = Literal[
    "allowed", "disallowed", "disallowed-within-grace", "disallowed-between-captures", "unknown"
]

ALLOWED: Verdict = "allowed"
DISALLOWED: Verdict = "disallowed"
DISALLOWED_WITHIN_GRACE: Verdict = "disallowed-within-grace"
DISALLOWED_BETWEEN_CAPTURES: Verdict = "disallowed-between-captures"
UNKNOWN: Verdict = "unknown"

DEFAULT_ERROR_LIMIT = timedelta(days=30)
DEFAULT_GRACE = timedelta(hours=24)

# datetimes resolve to the microsecond: the last instant a version is in effect is one tick
# before its successor takes effect.
_TICK = timedelta(microseconds=1)
_TABLE_KEYS = frozenset({"host", "effective_from", "status", "body", "body_file", "observed_before"})


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
        if not _is_aware(self.effective_from):
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
            if not _is_aware(self.observed_before):
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


@dataclass(frozen=True)
class Judgement:
    """Whether one request was allowed, and what decided it.

    `version` is the version in effect at the request (None before the first one or for an
    unknown host). `rules_version` is the version whose body decided, with its matcher decision
    in `match`: the version in effect, or under the 30-day rule the last good version before the
    errors; None when no body decided. `crawl_delay` and `crawl_delay_line` come from the group
    chosen in that body. `grace_version` is set only for "disallowed-within-grace": the most
    recent earlier version, in effect during the grace period, that allowed the request.
    `later_version` is set only for "disallowed-between-captures": the next version, whose
    change may already have happened at the request's time, and which allowed it.
    """

    decision: Verdict
    reason: str
    version: RobotsVersion | None = None
    rules_version: RobotsVersion | None = None
    match: robots.Decision | None = None
    crawl_delay: float | None = None
    crawl_delay_line: int | None = None
    grace_version: RobotsVersion | None = None
    later_version: RobotsVersion | None = None


class HostHistory:
    """The robots.txt versions of one host, ordered by time, each parsed at most once.

    Two versions with the same `effective_from` are one version when status and body are equal;
    when they differ the input is rejected. Input order cannot settle it: rows reaching the
    pipeline as a side input arrive in no guaranteed order. A version's `observed_before` must
    not be earlier than its predecessor's `effective_from`: the previous content cannot have
    been seen before it took effect.
    """

    def __init__(
        self,
        versions: Iterable[RobotsVersion],
        *,
        error_limit: timedelta = DEFAULT_ERROR_LIMIT,
        grace: timedelta = DEFAULT_GRACE,
    ) -> None:
        self._versions = _ordered(versions)
        _check_observations(self._versions)
        self._times = tuple(version.effective_from for version in self._versions)
        self._error_limit = _require_duration(error_limit, "error_limit")
        self._grace = _require_duration(grace, "grace")
        self._run_start, self._fallback = _error_runs(self._versions)
        self._parsed: list[robots.RobotsFile | None] = [None] * len(self._versions)

    def __getstate__(self) -> dict[str, object]:
        # The parse cache is derived, and parsed files hold compiled matchers that plain pickle
        # cannot carry; a history shipped to a worker parses again there, once per version.
        return {**self.__dict__, "_parsed": [None] * len(self._versions)}

    @property
    def versions(self) -> tuple[RobotsVersion, ...]:
        return self._versions

    def version_at(self, ts: datetime) -> RobotsVersion | None:
        """The version in effect at `ts`: the latest with effective_from <= ts."""
        index = self._index_at(ts)
        return None if index < 0 else self._versions[index]

    def judge(
        self, ts: datetime, tokens: Sequence[str], path: str, catch_all: bool = True
    ) -> Judgement:
        """Judge a request at `ts` by a crawler with these robots tokens.

        `path` is the path and query as the log carries it (not an absolute URL);
        `catch_all=False` for crawlers that ignore `User-agent: *`.

        A request is a plain "disallowed" only when every version the crawler could have held
        disallows it. The next version is a candidate when the request falls after its
        `observed_before` (its change may already have happened); earlier versions are
        candidates within the cache grace. The later candidate is tried first: it asks which
        version was in effect at all, the grace only which one a crawler may have cached.
        """
        index = self._index_at(ts)
        if index < 0:
            return _without_version(path, "no-robots-version")
        current = self._evaluate(index, ts, tokens, path, catch_all)
        if current.decision != DISALLOWED:
            return current
        later = self._later_candidate(index, ts)
        if later is not None and self._evaluate(later, ts, tokens, path, catch_all).decision == ALLOWED:
            return replace(
                current,
                decision=DISALLOWED_BETWEEN_CAPTURES,
                reason="change-time-unknown",
                later_version=self._versions[later],
            )
        earlier = self._allowed_within_grace(index, ts, tokens, path, catch_all)
        if earlier is None:
            return current
        return replace(current, decision=DISALLOWED_WITHIN_GRACE, grace_version=earlier)

    def _index_at(self, ts: datetime) -> int:
        _require_request_time(ts)
        return index_in_effect(self._times, ts)

    def _evaluate(
        self, index: int, at: datetime, tokens: Sequence[str], path: str, catch_all: bool
    ) -> Judgement:
        """Judge against version `index` as it stood at `at`, without grace."""
        version = self._versions[index]
        if version.kind == "ok":
            return self._by_body(index, tokens, path, catch_all)
        if _is_robots_txt(path):
            return Judgement(ALLOWED, "robots-exempt", version)
        if version.kind == "unavailable":
            return Judgement(ALLOWED, "robots-unavailable", version)
        if at - self._run_start[index] > self._error_limit:
            return self._after_error_limit(index, tokens, path, catch_all)
        reason = "robots-unreachable" if version.status is None else "robots-server-error"
        return Judgement(DISALLOWED, reason, version)

    def _after_error_limit(
        self, index: int, tokens: Sequence[str], path: str, catch_all: bool
    ) -> Judgement:
        """RFC 9309 §2.3.1.4: after a long error state, fall back to the last good fetch.

        The last good fetch is the version just before the run of errors. When it is a 4xx,
        the crawler's last knowledge was "no robots.txt", so everything is allowed, as it is
        when the host's history starts with the errors.
        """
        version = self._versions[index]
        fallback = self._fallback[index]
        if fallback is None or self._versions[fallback].kind != "ok":
            return Judgement(ALLOWED, "error-over-30-days-allow", version)
        by_body = self._by_body(fallback, tokens, path, catch_all)
        return replace(by_body, reason="error-over-30-days-last-good", version=version)

    def _by_body(
        self, index: int, tokens: Sequence[str], path: str, catch_all: bool
    ) -> Judgement:
        """Judge by the parsed body of version `index`."""
        version = self._versions[index]
        decision = self._robots_file(index).decide_path(tokens, path, catch_all)
        group = decision.group
        return Judgement(
            ALLOWED if decision.allowed else DISALLOWED,
            decision.reason,
            version,
            rules_version=version,
            match=decision,
            crawl_delay=None if group is None else group.crawl_delay,
            crawl_delay_line=None if group is None else group.crawl_delay_line,
        )

    def _robots_file(self, index: int) -> robots.RobotsFile:
        # Threads racing here may both parse; the results are equal, so no lock is needed
        # (and a lock would stop the history from pickling into a Beam worker).
        parsed = self._parsed[index]
        if parsed is None:
            body = self._versions[index].body
            assert body is not None  # "ok" versions always carry a body
            parsed = self._parsed[index] = robots.parse(body)
        return parsed

    def _later_candidate(self, index: int, ts: datetime) -> int | None:
        """The next version's index when `ts` lies in its (observed_before, effective_from) window."""
        following = index + 1
        if following == len(self._versions):
            return None
        observed_before = self._versions[following].observed_before
        return following if observed_before is not None and ts > observed_before else None

    def _allowed_within_grace(
        self, index: int, ts: datetime, tokens: Sequence[str], path: str, catch_all: bool
    ) -> RobotsVersion | None:
        """The latest version before `index`, in effect during [ts - grace, ts), that allowed.

        Each earlier version is judged at the last instant it was in effect: the error state
        only grows with time, so that instant is when a 30-day fallback would have applied.
        A zero grace makes the period empty, so nothing is searched.
        """
        first = max(self._index_at(shifted(ts, -self._grace)), 0)
        for earlier in range(index - 1, first - 1, -1):
            last_instant = self._times[earlier + 1] - _TICK
            if self._evaluate(earlier, last_instant, tokens, path, catch_all).decision == ALLOWED:
                return self._versions[earlier]
        return None


class RobotsHistory(Mapping[str, HostHistory]):
    """Every host's robots.txt history; judges requests by host, time, tokens and path.

    `error_limit` is how long an error state lasts before the last good version applies again;
    `grace` is how long a crawler may act on a cached earlier version (zero turns it off).
    """

    def __init__(
        self,
        versions: Iterable[RobotsVersion],
        *,
        error_limit: timedelta = DEFAULT_ERROR_LIMIT,
        grace: timedelta = DEFAULT_GRACE,
    ) -> None:
        by_host: dict[str, list[RobotsVersion]] = {}
        for version in versions:
            by_host.setdefault(version.host, []).append(version)
        self._hosts = {
            host: HostHistory(host_versions, error_limit=error_limit, grace=grace)
            for host, host_versions in by_host.items()
        }

    def __getitem__(self, host: str) -> HostHistory:
        return self._hosts[host_key(host)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._hosts)

    def __len__(self) -> int:
        return len(self._hosts)

    def judge(
        self, host: str, ts: datetime, tokens: Sequence[str], path: str, catch_all: bool = True
    ) -> Judgement:
        """Judge a request to `host` at `ts`; see `HostHistory.judge`."""
        history = self._hosts.get(host_key(host))
        if history is None:
            _require_request_time(ts)
            return _without_version(path, "unknown-host")
        return history.judge(ts, tokens, path, catch_all)


def version_from_row(row: Mapping[str, object], body: bytes | None) -> RobotsVersion:
    """Build a version from one decoded robots-table row and the body bytes its reader resolved.

    The row is {"host", "effective_from", "status", and "body" or "body_file", optionally
    "observed_before"}; `body` is the content those name (None when the row has neither).
    `effective_from` and `observed_before` are ISO 8601 / RFC 3339 timestamps with an offset;
    `status` an HTTP status or "unreachable".
    """
    unknown = sorted(set(row) - _TABLE_KEYS)
    if unknown:
        raise RobotsTableError(f"unknown field(s) {', '.join(unknown)} in robots row")
    if "body" in row and "body_file" in row:
        raise RobotsTableError("a robots row has either body or body_file, not both")
    for key in ("host", "effective_from", "status"):
        if key not in row:
            raise RobotsTableError(f"robots row is missing {key!r}")
    return RobotsVersion(
        host=_row_host(row["host"]),
        effective_from=_row_timestamp(row["effective_from"], "effective_from"),
        status=_row_status(row["status"]),
        body=body,
        observed_before=None
        if row.get("observed_before") is None
        else _row_timestamp(row["observed_before"], "observed_before"),
    )


def with_observations(
    versions: Iterable[RobotsVersion], observed: Iterable[datetime]
) -> list[RobotsVersion]:
    """One host's versions with `observed_before` taken from the times its robots.txt was fetched.

    `observed` holds every fetch time of a capture job, those that found a change (the captures
    themselves) and those that found the same outcome again. A version's `observed_before` is
    the last fetch before it, and at least its predecessor's own capture time.
    """
    ordered = sorted(versions, key=lambda version: version.effective_from)
    times = sorted(observed)
    result = ordered[:1]
    for previous, version in zip(ordered, ordered[1:]):
        last = bisect_left(times, version.effective_from) - 1
        seen = previous.effective_from if last < 0 else max(times[last], previous.effective_from)
        result.append(replace(version, observed_before=seen))
    return result


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


def _ordered(versions: Iterable[RobotsVersion]) -> tuple[RobotsVersion, ...]:
    """Versions sorted by time, equal duplicates dropped, conflicting ones rejected."""
    ordered = sorted(versions, key=lambda version: version.effective_from)
    if not ordered:
        raise RobotsTableError("a host history needs at least one version")
    hosts = {version.host for version in ordered}
    if len(hosts) > 1:
        raise RobotsTableError(f"one host history holds several hosts: {sorted(hosts)}")
    kept = [ordered[0]]
    for version in ordered[1:]:
        previous = kept[-1]
        if version.effective_from != previous.effective_from:
            kept.append(version)
        elif (version.status, version.body) != (previous.status, previous.body):
            raise RobotsTableError(
                f"{version.host} has two different versions at"
                f" {version.effective_from.isoformat()}"
                f" (status {previous.status} and {version.status})"
            )
    return tuple(kept)


def _check_observations(versions: Sequence[RobotsVersion]) -> None:
    for previous, version in zip(versions, versions[1:]):
        if version.observed_before is not None and version.observed_before < previous.effective_from:
            raise RobotsTableError(
                f"{version.host} at {version.effective_from.isoformat()}: observed_before"
                f" {version.observed_before.isoformat()} is earlier than the previous version"
                f" ({previous.effective_from.isoformat()})"
            )


def _error_runs(
    versions: Sequence[RobotsVersion],
) -> tuple[tuple[datetime | None, ...], tuple[int | None, ...]]:
    """Per version: when its run of consecutive errors began, and the version before that run.

    Both are None for versions that are not errors; the second is None too when the run opens
    the history.
    """
    run_start: list[datetime | None] = []
    fallback: list[int | None] = []
    for index, version in enumerate(versions):
        if version.kind != "error":
            run_start.append(None)
            fallback.append(None)
        elif index > 0 and versions[index - 1].kind == "error":
            run_start.append(run_start[-1])
            fallback.append(fallback[-1])
        else:
            run_start.append(version.effective_from)
            fallback.append(index - 1 if index > 0 else None)
    return tuple(run_start), tuple(fallback)


def _without_version(path: str, reason: str) -> Judgement:
    if _is_robots_txt(path):
        return Judgement(ALLOWED, "robots-exempt")
    return Judgement(UNKNOWN, reason)


def _is_robots_txt(path: str) -> bool:
    return robots.is_robots_txt(normalize(path))


def _is_aware(value: object) -> bool:
    return isinstance(value, datetime) and value.utcoffset() is not None


def _require_request_time(ts: object) -> None:
    if not _is_aware(ts):
        raise ValueError(f"request time must be a timezone-aware datetime, got {ts!r}")


def _require_duration(value: object, name: str) -> timedelta:
    if not isinstance(value, timedelta) or value < timedelta(0):
        raise ValueError(f"{name} must be a non-negative timedelta, got {value!r}")
    return value


def _row_host(value: object) -> str:
    if not isinstance(value, str):
        raise RobotsTableError(f"host must be a string, got {value!r}")
    return value


def _row_timestamp(value: object, name: str) -> datetime:
    if not isinstance(value, str):
        raise RobotsTableError(f"{name} must be a timestamp string, got {value!r}")
    try:
        return parse_timestamp(value)
    except NoOffset:
        raise RobotsTableError(f"{name} needs a UTC offset or 'Z': {value!r}") from None
    except ValueError:
        raise RobotsTableError(f"{name} is not an ISO 8601 timestamp: {value!r}") from None


def _row_status(value: object) -> int | None:
    if value == "unreachable":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RobotsTableError(f'status must be an integer or "unreachable", got {value!r}')
    return value
