"""A row of the robots table, decoded into a `RobotsVersion`."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from matcher.history.versions import RobotsTableError, RobotsVersion
from matcher.timerange import NoOffset, parse_timestamp

__all__ = ["version_from_row"]

_TABLE_KEYS = frozenset({"host", "effective_from", "status", "body", "body_file", "observed_before"})


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
