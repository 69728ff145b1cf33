"""The page-directives table: captured directives per host, path and time.

A `PageDirectivesTable` finds the row in effect for a request the way the robots history finds
the robots.txt version in effect (`matcher/in_effect.py`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from matcher.directives.model import Directives, combine
from matcher.directives.parser import parse_meta, x_robots_tag_directives
from matcher.hosts import host_key
from matcher.in_effect import index_in_effect
from matcher.normalize import normalize
from matcher.timerange import OutOfRange, is_aware, parse_timestamp, to_utc

__all__ = ["PageDirectives", "PageDirectivesError", "PageDirectivesTable", "page_directives_from_row"]

_ROW_KEYS = frozenset({"host", "path", "effective_from", "x_robots_tag", "meta_robots"})


class PageDirectivesError(ValueError):
    """A page-directives row or set of rows that cannot be used as given."""


@dataclass(frozen=True)
class PageDirectives:
    """One row of the page-directives table: a page's directives from `effective_from` on.

    `x_robots_tag` holds header values, one per header line; `meta_robots` holds
    (name, content) per `<meta>` element. `host` is stored as robots history stores it
    (lower-case, no trailing dot), `effective_from` in UTC. `directives` is the parsed,
    combined content of both.
    """

    host: str
    path: str
    effective_from: datetime
    x_robots_tag: tuple[str, ...] = ()
    meta_robots: tuple[tuple[str, str], ...] = ()
    directives: Directives = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not host_key(self.host):
            raise PageDirectivesError(f"host must be a non-empty string, got {self.host!r}")
        if not isinstance(self.path, str) or not self.path.startswith("/") or "#" in self.path:
            raise PageDirectivesError(
                f"path must be a path (and ?query) starting with '/', without a fragment, got {self.path!r}"
            )
        if not is_aware(self.effective_from):
            raise PageDirectivesError(
                f"effective_from must be a timezone-aware datetime, got {self.effective_from!r}"
            )
        if not isinstance(self.x_robots_tag, tuple) or not all(isinstance(v, str) for v in self.x_robots_tag):
            raise PageDirectivesError(f"x_robots_tag must be a tuple of strings, got {self.x_robots_tag!r}")
        if not isinstance(self.meta_robots, tuple) or not all(_is_meta_pair(m) for m in self.meta_robots):
            raise PageDirectivesError(
                f"meta_robots must be a tuple of (name, content) string pairs, got {self.meta_robots!r}"
            )
        object.__setattr__(self, "host", host_key(self.host))
        try:
            object.__setattr__(self, "effective_from", to_utc(self.effective_from))
        except OutOfRange as error:
            raise PageDirectivesError(f"effective_from: {error}") from None
        parts = [x_robots_tag_directives(self.x_robots_tag)]
        parts += [parse_meta(name, content) for name, content in self.meta_robots]
        object.__setattr__(self, "directives", combine(parts))

    @property
    def key(self) -> tuple[str, str]:
        """(host, normalized path and query): what a request must equal to be covered."""
        return self.host, normalize(self.path)


class PageDirectivesTable:
    """Page-directives rows by host, path and time.

    A row covers requests whose host and normalized path+query equal its own exactly: a
    query string makes a different page, and no row extends to a prefix or to other
    query strings. For a covered page, the row in effect is the latest with
    effective_from <= ts; a request before the page's first row is not covered.
    """

    def __init__(self, rows: Iterable[PageDirectives]) -> None:
        by_page: dict[tuple[str, str], list[PageDirectives]] = {}
        for row in rows:
            by_page.setdefault(row.key, []).append(row)
        self._pages = {key: _ordered(page_rows) for key, page_rows in by_page.items()}
        self._times = {key: tuple(row.effective_from for row in page_rows) for key, page_rows in self._pages.items()}

    def lookup(self, host: str | None, path: str, ts: datetime) -> PageDirectives | None:
        """The row in effect for a request at `ts`; `path` is path+query as the log has it."""
        if not is_aware(ts):
            raise ValueError(f"request time must be a timezone-aware datetime, got {ts!r}")
        if host is None:
            return None
        key = (host_key(host), normalize(path))
        times = self._times.get(key)
        if times is None:
            return None
        index = index_in_effect(times, ts)
        return None if index < 0 else self._pages[key][index]


def page_directives_from_row(row: Mapping[str, object]) -> PageDirectives:
    """Build a row from one decoded JSON Lines object of the page-directives table.

    Required: host, path, effective_from (ISO 8601 with Z or an offset). Optional:
    x_robots_tag (list of header values), meta_robots (list of {"name", "content"}).
    A row with neither says the page carried no directives from that time on.
    """
    unknown = sorted(set(row) - _ROW_KEYS)
    if unknown:
        raise PageDirectivesError(f"unknown field(s) {', '.join(unknown)} in page-directives row")
    for key in ("host", "path", "effective_from"):
        if key not in row:
            raise PageDirectivesError(f"page-directives row is missing {key!r}")
    return PageDirectives(
        host=_row_string(row["host"], "host"),
        path=_row_string(row["path"], "path"),
        effective_from=_row_timestamp(row["effective_from"]),
        x_robots_tag=_row_headers(row.get("x_robots_tag", [])),
        meta_robots=_row_metas(row.get("meta_robots", [])),
    )


def _ordered(rows: list[PageDirectives]) -> tuple[PageDirectives, ...]:
    """One page's rows by time; identical duplicates dropped, conflicting ones rejected.

    Rows may reach a worker in any order, so order cannot settle a conflict.
    """
    ordered = sorted(rows, key=lambda row: row.effective_from)
    kept = [ordered[0]]
    for row in ordered[1:]:
        previous = kept[-1]
        if row.effective_from != previous.effective_from:
            kept.append(row)
        elif (row.x_robots_tag, row.meta_robots) != (previous.x_robots_tag, previous.meta_robots):
            raise PageDirectivesError(
                f"{row.host}{row.path} has two different rows at {row.effective_from.isoformat()}"
            )
    return tuple(kept)


def _is_meta_pair(value: object) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(part, str) for part in value)


def _row_string(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise PageDirectivesError(f"{name} must be a string, got {value!r}")
    return value


def _row_timestamp(value: object) -> datetime:
    if not isinstance(value, str):
        raise PageDirectivesError(f"effective_from must be a timestamp string, got {value!r}")
    try:
        return to_utc(parse_timestamp(value))
    except ValueError:
        raise PageDirectivesError(
            f"effective_from is not an ISO 8601 date-time with Z or an offset: {value!r}"
        ) from None


def _row_headers(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PageDirectivesError(f"x_robots_tag must be a list of header values (strings), got {value!r}")
    return tuple(value)


def _row_metas(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise PageDirectivesError(f"meta_robots must be a list of {{name, content}} objects, got {value!r}")
    metas = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"name", "content"}
            or not isinstance(item["name"], str)
            or not isinstance(item["content"], str)
        ):
            raise PageDirectivesError(
                f'each meta_robots item must be {{"name": str, "content": str}}, got {item!r}'
            )
        metas.append((item["name"], item["content"]))
    return tuple(metas)
