"""One host's robots.txt history, and the judgement of one request against it.

A host's robots.txt changes over time; each change is a `RobotsVersion` that takes effect at
`effective_from` and stays in effect until the next one. `HostHistory.judge` finds the version
in effect when a request was made, applies the HTTP-status semantics of RFC 9309 §2.3.1 (with the
30-day error rule), the cache grace and the uncertainty of a history built from observations,
and says which version and which rule decided.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from matcher import robots
from matcher.history.judgement import (
    ALLOWED,
    DISALLOWED,
    DISALLOWED_BETWEEN_CAPTURES,
    DISALLOWED_WITHIN_GRACE,
    UNKNOWN,
    Judgement,
)
from matcher.history.versions import RobotsTableError, RobotsVersion
from matcher.in_effect import index_in_effect
from matcher.normalize import normalize
from matcher.timerange import is_aware, shifted

__all__ = ["DEFAULT_ERROR_LIMIT", "DEFAULT_GRACE", "HostHistory"]

DEFAULT_ERROR_LIMIT = timedelta(days=30)
DEFAULT_GRACE = timedelta(hours=24)

# datetimes resolve to the microsecond: the last instant a version is in effect is one tick
# before its successor takes effect.
_TICK = timedelta(microseconds=1)


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

    @property
    def grace(self) -> timedelta:
        return self._grace

    @property
    def error_limit(self) -> timedelta:
        return self._error_limit

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
            return _before_first_version(path)
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

    def judge_held(
        self, served_at: datetime, ts: datetime, tokens: Sequence[str], path: str, catch_all: bool = True
    ) -> Judgement:
        """Judge a request at `ts` by the version that was in effect at `served_at`, without grace:
        what a crawler that fetched robots.txt then, and kept that copy, was bound by. An error
        version is judged at `ts`, so the 30-day rule counts from the start of its run of errors."""
        index = self._index_at(served_at)
        if index < 0:
            return _before_first_version(path)
        return self._evaluate(index, ts, tokens, path, catch_all)

    def turning_points(self) -> tuple[datetime, ...]:
        """The instants, in order, at which `judge` may answer otherwise for the same crawler and
        path: each version's start, its `observed_before`, the end of its cache grace, and the
        moment a run of errors passes the error limit. Two request times that no turning point
        separates (each is before, at or after every one alike) get the same judgement."""
        points = set(self._times)
        points.update(version.observed_before for version in self._versions if version.observed_before is not None)
        points.update(shifted(moment, self._grace) for moment in self._times)
        points.update(shifted(start, self._error_limit) for start in self._run_start if start is not None)
        return tuple(sorted(points))

    def first_change_after(self, moment: datetime) -> RobotsVersion | None:
        """The first version to take effect after `moment`: the change a copy fetched then misses."""
        following = self._index_at(moment) + 1
        return self._versions[following] if following < len(self._versions) else None

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
        parsed = self._robots_file(index)
        decision = parsed.decide_path(tokens, path, catch_all)
        group = decision.group
        return Judgement(
            ALLOWED if decision.allowed else DISALLOWED,
            decision.reason,
            version,
            rules_version=version,
            match=decision,
            crawl_delay=None if group is None else group.crawl_delay,
            crawl_delay_line=None if group is None else group.crawl_delay_line,
            preferences=parsed.preferences(group, path),
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


def _before_first_version(path: str) -> Judgement:
    if _is_robots_txt(path):
        return Judgement(ALLOWED, "robots-exempt")
    return Judgement(UNKNOWN, "no-robots-version")


def _is_robots_txt(path: str) -> bool:
    return robots.is_robots_txt(normalize(path))


def _require_request_time(ts: object) -> None:
    if not is_aware(ts):
        raise ValueError(f"request time must be a timezone-aware datetime, got {ts!r}")


def _require_duration(value: object, name: str) -> timedelta:
    if not isinstance(value, timedelta) or value < timedelta(0):
        raise ValueError(f"{name} must be a non-negative timedelta, got {value!r}")
    return value
