"""When a change happened, as far as the fetches of a capture job can tell."""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from matcher.history.versions import RobotsVersion

__all__ = ["with_observations"]


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
