"""The summary table's rows: per (crawler, identity, client kind, purpose), the requests and each
decision's count, counted from verdict records."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from matcher.records import DECISION_COLUMNS

__all__ = ["SummaryKey", "count_bytes", "count_verdict", "decision_counts", "decisions_per_crawler", "summary_key", "summary_row"]

SummaryKey = tuple[str | None, str, str, tuple[str, ...]]
# Counted beside the decisions: requests with a usage-preference conflict, whatever their decision,
# the bytes sent, and the requests that logged a size (none: the row's bytes are null).
_CONFLICTS = "preference-conflicts"
_BYTES = "bytes"
_SIZED = "sized"


def summary_key(verdict: Mapping) -> SummaryKey:
    """The summary row a verdict is counted in."""
    return (
        verdict["crawler"] or verdict["operator"], verdict["identity"], verdict["client_kind"], tuple(verdict["purpose"])
    )


def decisions_per_crawler(verdicts: Iterable[Mapping]) -> Iterator[tuple[SummaryKey, Counter]]:
    counts: dict[SummaryKey, Counter] = {}
    for verdict in verdicts:
        key = summary_key(verdict)
        of_key = counts.get(key)
        if of_key is None:
            of_key = counts[key] = Counter()
        count_verdict(of_key, verdict)
    return iter(counts.items())


def count_verdict(counts: Counter, verdict: Mapping) -> None:
    """Adds a verdict to its summary row's counts: its decision, a conflict, its logged size."""
    counts.update(decision_counts(verdict))
    size = verdict.get("bytes")
    if size is not None:
        count_bytes(counts, size, 1)


def count_bytes(counts: Counter, total: int, sized: int) -> None:
    """Adds to a summary row's counts `sized` requests that logged a size, `total` bytes in all."""
    counts[_BYTES] += total
    counts[_SIZED] += sized


def decision_counts(verdict: Mapping) -> tuple[str, ...]:
    """What a verdict adds to its summary row's counts: its decision, and whether it conflicts
    with a usage preference."""
    return (verdict["decision"], _CONFLICTS) if verdict["preference_conflicts"] else (verdict["decision"],)


def summary_row(key: SummaryKey, counts: Counter) -> dict:
    crawler, identity, client_kind, purpose = key
    return {
        "crawler": crawler,
        "identity": identity,
        "client_kind": client_kind,
        "purpose": purpose,
        "requests": sum(counts[decision] for decision, _ in DECISION_COLUMNS),
        **{column: counts[decision] for decision, column in DECISION_COLUMNS},
        "preference_conflicts": counts[_CONFLICTS],
        "bytes": counts[_BYTES] if counts[_SIZED] else None,
    }
