"""The verdict on one request's robots.txt access, and what decided it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from matcher import robots
from matcher.history.versions import RobotsVersion
from matcher.preferences import Preferences

__all__ = [
    "ALLOWED",
    "DISALLOWED",
    "DISALLOWED_BEFORE_REFETCH",
    "DISALLOWED_BETWEEN_CAPTURES",
    "DISALLOWED_WITHIN_GRACE",
    "Judgement",
    "UNKNOWN",
    "Verdict",
]

Verdict = Literal[
    "allowed",
    "disallowed",
    "disallowed-within-grace",
    "disallowed-before-refetch",
    "disallowed-between-captures",
    "unknown",
]

ALLOWED: Verdict = "allowed"
DISALLOWED: Verdict = "disallowed"
DISALLOWED_WITHIN_GRACE: Verdict = "disallowed-within-grace"
DISALLOWED_BETWEEN_CAPTURES: Verdict = "disallowed-between-captures"
# Disallowed only by a change the crawler had not fetched yet, within the cache grace after it
# (`matcher.robots_fetches`); `HostHistory` never decides it.
DISALLOWED_BEFORE_REFETCH: Verdict = "disallowed-before-refetch"
UNKNOWN: Verdict = "unknown"


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
    # The usage preferences of the body that decided, for the group and path it decided by.
    preferences: Preferences | None = None
