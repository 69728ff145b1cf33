"""robots.txt versions by host and time, and the judgement of one request against them
(docs/semantics.md § History). One module per concept:

- `versions`: one fetch outcome (`RobotsVersion`) and what its HTTP status means;
- `judgement`: the verdicts and the `Judgement` that explains one;
- `host`: one host's history and the judgement of a request (status classes, the 30-day error
  rule, cache grace, changes between captures);
- `table`: the versions of a whole table, one history per host;
- `rows`: a robots-table row decoded into a version;
- `observations`: `observed_before` from the fetch times of a capture job.

Code outside this package imports from here.
"""
from matcher.history.host import HostHistory
from matcher.history.judgement import (
    ALLOWED,
    DISALLOWED,
    DISALLOWED_BEFORE_REFETCH,
    DISALLOWED_BETWEEN_CAPTURES,
    DISALLOWED_WITHIN_GRACE,
    UNKNOWN,
    Judgement,
)
from matcher.history.observations import with_observations
from matcher.history.rows import version_from_row
from matcher.history.table import RobotsHistory
from matcher.history.versions import RobotsTableError, RobotsVersion

__all__ = [
    "ALLOWED",
    "DISALLOWED",
    "DISALLOWED_BEFORE_REFETCH",
    "DISALLOWED_BETWEEN_CAPTURES",
    "DISALLOWED_WITHIN_GRACE",
    "HostHistory",
    "Judgement",
    "RobotsHistory",
    "RobotsTableError",
    "RobotsVersion",
    "UNKNOWN",
    "version_from_row",
    "with_observations",
]
