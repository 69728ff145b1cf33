"""The summary table's rows: per (crawler, identity, client kind, purpose), the requests and each
decision's count, counted from verdict records."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from matcher.records import DECISION_COLUMNS

__all__ = ["SummaryKey", "decision_counts", "decisions_per_crawler", "summary_key", "summary_row"]

SummaryKey = tuple[str | None, str, str, tuple[str, ...]]
# Counted beside the decisions: requests with a usage-preference conflict, whatever their decision.
_CONFLICTS = "preference-conflicts"


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
        of_key.update(decision_counts(verdict))
    return iter(counts.items())


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
        "requests": sum(n for decision, n in counts.items() if decision != _CONFLICTS),
        **{column: counts[decision] for decision, column in DECISION_COLUMNS},
        "preference_conflicts": counts[_CONFLICTS],
    }
