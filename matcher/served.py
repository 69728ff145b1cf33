"""What the server answered a request and what it sent: the status class a `served` row is
counted under, the answer the report names for a disallowed request, and the logged size.

A log writes `-` for a response of no body (Apache's `%b`); the parsers read it as 0, and a
format without a size field leaves the size null, so a sum of sizes is null only when no
request of it logged one (docs/semantics.md § What the server answered).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = [
    "STATUS_CLASSES",
    "REFUSALS",
    "SERVED",
    "OTHER_REFUSAL",
    "status_class",
    "ServedKey",
    "ServedTally",
    "served_key",
    "answer",
    "total_bytes",
]

# Every value of the `status_class` column, in the order tables show them.
STATUS_CLASSES = ("1xx", "2xx", "3xx", "4xx", "5xx", "other", "none")
# Refusals the report names apart: authentication, forbidden, unavailable for legal reasons, too
# many requests. Any other 4xx is a refusal too, counted as `other-4xx`.
REFUSALS = (401, 403, 451, 429)
# The answer of a request whose content was sent, and of a refusal not among `REFUSALS`.
SERVED = "served"
OTHER_REFUSAL = "other-4xx"


# A `served` row: host, crawler (else the operator, as the summary names it), identity, decision,
# status class.
ServedKey = tuple[str | None, str | None, str, str, str]
# requests, bytes, requests that logged a size
ServedTally = tuple[int, int, int]


def served_key(verdict: Mapping) -> ServedKey:
    """The `served` row a verdict is counted in."""
    return (
        verdict["host"], verdict["crawler"] or verdict["operator"], verdict["identity"], verdict["decision"],
        status_class(verdict["status"]),
    )


def status_class(status: int | None) -> str:
    """`1xx` .. `5xx` by the first digit of a status of 100-599, `other` for any other logged
    value, `none` when no status was logged."""
    if status is None:
        return "none"
    if 100 <= status <= 599:
        return f"{status // 100}xx"
    return "other"


def answer(status: int | None) -> str:
    """What the server did with a request: `served` (2xx), one of `REFUSALS` as its number,
    `other-4xx`, or the status class (`3xx`, `5xx`, `1xx`, `other`, `none`)."""
    if status in REFUSALS:
        return str(status)
    kind = status_class(status)
    if kind == "2xx":
        return SERVED
    if kind == "4xx":
        return OTHER_REFUSAL
    return kind


def total_bytes(sizes: Iterable[int | None]) -> int | None:
    """The sum of the logged sizes; None when none was logged."""
    total = None
    for size in sizes:
        if size is not None:
            total = size if total is None else total + size
    return total
