"""The change audit as the report says it: per robots.txt change, one sentence per crawler and
identity from its `changes` row ("GPTBot re-read robots.txt 3 h after the change; ..."), the
crawler's own rows before the claims not proven, the restricted paths before the opened ones.

Requests to a newly disallowed path before the crawler's re-read are those the audit judged within
grace or before refetch; those after it, plainly disallowed or between captures (docs/semantics.md
§ The change audit).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from matcher.changes import OPENS, is_change
from pipeline.report.figures import CLAIMED, IDENTITY_ORDER, identity_words

__all__ = ["Change", "by_change", "duration", "moments", "sentence", "who"]


@dataclass(frozen=True)
class Change:
    """One change of a host's robots.txt and the rows of the crawlers it concerned, in order."""

    host: str
    at: datetime
    rows: tuple[Mapping, ...]


def by_change(rows: Iterable[Mapping]) -> tuple[Change, ...]:
    """The rows grouped per host and change, the changes in time order (then by host)."""
    grouped: dict[tuple[str, datetime], list[Mapping]] = {}
    for row in rows:
        grouped.setdefault((row["host"], row["change_at"]), []).append(row)
    return tuple(
        Change(host, at, tuple(sorted(of, key=_row_order)))
        for (host, at), of in sorted(grouped.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    )


def _row_order(row: Mapping) -> tuple:
    claimed = row["identity"] in CLAIMED
    rank = IDENTITY_ORDER.index(row["identity"]) if row["identity"] in IDENTITY_ORDER else len(IDENTITY_ORDER)
    return (row["direction"] == OPENS, claimed, -row["requests_after"] - row["requests_before"], row["crawler"], rank)


def who(row: Mapping) -> str:
    """The crawler as its identity lets the report name it: a claim not proven never reads as the crawler."""
    crawler, identity = row["crawler"], row["identity"]
    if identity in CLAIMED:
        return f"Claimed {crawler} ({identity}, not proven)"
    if identity == "verified":
        return crawler
    return f"{crawler} ({identity_words(identity)})"


def _requests(n: int) -> str:
    return f"{n:,} request" if n == 1 else f"{n:,} requests"


def duration(span: timedelta) -> str:
    """A span in the largest two units that matter: `2 days`, `1 day 14 h`, `3 h 20 min`, `45 s`."""
    seconds = max(int(span.total_seconds()), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    # A number stays on the line of its unit.
    if days:
        whole = f"{days}\u00a0day" if days == 1 else f"{days}\u00a0days"
        return f"{whole} {hours}\u00a0h" if hours else whole
    if hours:
        return f"{hours}\u00a0h {minutes}\u00a0min" if minutes else f"{hours}\u00a0h"
    if minutes:
        return f"{minutes}\u00a0min"
    return f"{seconds}\u00a0s"


def sentence(row: Mapping) -> str:
    """What one crawler and identity did with the paths a change turned, in plain words."""
    name, at = who(row), row["change_at"]
    if row["direction"] == OPENS:
        return (
            f"{name}: paths the change newly allowed; {_requests(row['requests_before'])} to them in the period"
            f" before the change, {row['requests_after']:,} after."
        )
    before_read = row["within_grace"] + row["before_refetch"]
    after_read = row["violations"] + row["between_captures"]
    last = row["last_newly_disallowed_request"]
    then = f" (the last {duration(last - at)} after the change)" if last is not None else ""
    earlier = (
        f"; {_requests(row['requests_before'])} to them in the period before the change" if row["requests_before"]
        else "; none to them in the period before the change"
    )
    fetched = row["first_robots_fetch_after"]
    if fetched is None:
        if not row["requests_after"]:
            return f"{name} re-read no robots.txt after the change and made no request to a newly disallowed path{earlier}."
        return (
            f"{name} re-read no robots.txt after the change (none seen in these logs);"
            f" {_requests(row['requests_after'])} to newly disallowed paths after it{then}{earlier}."
        )
    read = f"{name} re-read robots.txt {duration(fetched - at)} after the change"
    if not row["requests_after"]:
        return f"{read} and made no request to a newly disallowed path after the change{earlier}."
    return f"{read}; {_requests(before_read)} to newly disallowed paths before that, {after_read:,} after{then}{earlier}."


def moments(versions: Sequence[Mapping]) -> list[tuple[str, datetime]]:
    """(host, when) of every change among `robots_versions` rows, each host's rows in time order."""
    found = []
    for previous, new in zip(versions, versions[1:]):
        if previous["host"] == new["host"] and is_change(previous["kind"], previous["sha256"], new["kind"], new["sha256"]):
            found.append((new["host"], new["effective_from"]))
    return found
