"""What the server answered the audited requests: one `served` row per host, crawler, identity,
decision and status class, with the requests and the bytes sent."""
from __future__ import annotations

from collections.abc import Iterable

import apache_beam as beam

from matcher.served import ServedKey, ServedTally
from pipeline.columnar.served import served_in_block


class Served(beam.PTransform):
    """Verdict blocks -> `records.SERVED` rows."""

    def expand(self, verdict_blocks):
        return (
            verdict_blocks
            | "ServedPerBatch" >> beam.FlatMap(served_in_block)
            | "SumServed" >> beam.CombinePerKey(sum_tallies)
            | "ServedRows" >> beam.MapTuple(served_row)
        )


def sum_tallies(tallies: Iterable[ServedTally]) -> ServedTally:
    requests = sent = sized = 0
    for r, b, s in tallies:
        requests, sent, sized = requests + r, sent + b, sized + s
    return requests, sent, sized


def served_row(key: ServedKey, tally: ServedTally) -> dict:
    host, crawler, identity, decision, kind = key
    requests, sent, sized = tally
    return {
        "host": host, "crawler": crawler, "identity": identity, "decision": decision, "status_class": kind,
        "requests": requests, "bytes": sent if sized else None,
    }
