"""The figures the closing summary and the page share: every decision of the verdicts schema has
a column, the parts add up to the requests, and claims not proven stay apart from the crawlers."""
from __future__ import annotations

from matcher import records
from matcher.summary import summary_row
from pipeline.report.figures import DECISIONS, figures


def schema_decisions() -> list[str]:
    """The decisions a verdict can take, as the verdicts schema states them."""
    (column,) = [c for c in records.VERDICTS if c.name == "decision"]
    return [value.strip() for value in column.description.split("|")]


def test_every_decision_of_the_verdicts_schema_has_a_summary_column_and_a_figure():
    decisions = schema_decisions()
    assert len(decisions) == 6
    assert [decision for decision, _ in records.DECISION_COLUMNS] == decisions
    summary_columns = {c.name for c in records.SUMMARY}
    assert set(DECISIONS) <= summary_columns
    # Each decision counted into its own column: a row of one request of each adds up.
    from collections import Counter

    row = summary_row(("GPTBot", "verified", "crawler", ("ai-training",)), Counter(decisions))
    assert row["requests"] == len(decisions) == sum(row[column] for column in DECISIONS)
    assert all(row[column] == 1 for column in DECISIONS)


def _row(crawler, identity, purpose=("search-engine",), kind="crawler", **decisions):
    counts = {column: decisions.get(column, 0) for column in DECISIONS}
    return {"crawler": crawler, "identity": identity, "client_kind": kind, "purpose": list(purpose),
            "requests": sum(counts.values()), **counts, "preference_conflicts": 0}


def test_claims_not_proven_are_apart_from_the_crawlers_own_requests():
    figs = figures([
        _row("Googlebot", "verified", allowed=10, within_grace=2),
        _row("Googlebot", "unverified", disallowed=200),
        _row("Googlebot", "spoofed", allowed=80, disallowed=7),
        _row("GPTBot", "verified", ("ai-training",), allowed=3, before_refetch=36, disallowed=1),
        _row("foobot", "unverifiable", ("unknown",), allowed=5),
        _row("curl", "unverifiable", ("unknown",), kind="automated", disallowed=4),
    ])
    assert [(s.name, s.identity) for s in figs.crawlers] == [
        ("GPTBot", "verified"), ("Googlebot", "verified"), ("foobot", "unverifiable"),
    ]
    assert [(s.name, s.identity) for s in figs.claims] == [("Googlebot", "spoofed"), ("Googlebot", "unverified")]
    (claim,) = figs.claimed
    assert claim.sentence() == "claimed Googlebot, not proven: 287 (spoofed 87, unverified 200), 207 disallowed of any kind"
    assert [(s.name, s.identity) for s in figs.automated] == [("curl", "unverifiable")]
    # Purposes count the crawlers' own requests only.
    assert {s.name: s.requests for s in figs.purposes} == {"ai-training": 40, "search-engine": 12, "unknown": 5}
    gptbot = figs.crawlers[0]
    assert gptbot.of("before_refetch") == 36 and gptbot.disallowed_any == 37
    for split in (*figs.crawlers, *figs.claims, *figs.automated, *figs.purposes):
        assert sum(split.decisions) == split.requests


def test_a_summary_row_from_before_a_decision_had_its_column_counts_none_of_it():
    old = {"crawler": "bingbot", "identity": "verified", "purpose": ["search-engine"], "requests": 3,
           "allowed": 2, "disallowed": 1, "within_grace": 0, "between_captures": 0, "unknown": 0}
    (split,) = figures([old]).crawlers
    assert split.of("before_refetch") == 0 and sum(split.decisions) == split.requests
