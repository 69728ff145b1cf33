"""What the server answered the audited requests: one `served` row per host, crawler, identity,
decision and status class, with the requests and the bytes sent."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import apache_beam as beam

from matcher.served import status_class

Key = tuple[str | None, str | None, str, str, str]
# requests, bytes, requests that logged a size
Tally = tuple[int, int, int]


class Served(beam.PTransform):
    """Verdict batches -> `records.SERVED` rows."""

    def expand(self, verdict_batches):
        return (
            verdict_batches
            | "ServedPerBatch" >> beam.FlatMap(served_in_batch)
            | "SumServed" >> beam.CombinePerKey(sum_tallies)
            | "ServedRows" >> beam.MapTuple(served_row)
        )


def served_key(verdict: dict) -> Key:
    """The row a verdict is counted in; its crawler names it as the summary does."""
    return (
        verdict["host"], verdict["crawler"] or verdict["operator"], verdict["identity"], verdict["decision"],
        status_class(verdict["status"]),
    )


def served_in_batch(verdicts: list[dict]) -> Iterator[tuple[Key, Tally]]:
    tallies: dict[Key, list[int]] = {}
    for verdict in verdicts:
        key = served_key(verdict)
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = [0, 0, 0]
        tally[0] += 1
        size = verdict.get("bytes")
        if size is not None:
            tally[1] += size
            tally[2] += 1
    return ((key, tuple(tally)) for key, tally in tallies.items())


def sum_tallies(tallies: Iterable[Tally]) -> Tally:
    requests = sent = sized = 0
    for r, b, s in tallies:
        requests, sent, sized = requests + r, sent + b, sized + s
    return requests, sent, sized


def served_row(key: Key, tally: Tally) -> dict:
    host, crawler, identity, decision, kind = key
    requests, sent, sized = tally
    return {
        "host": host, "crawler": crawler, "identity": identity, "decision": decision, "status_class": kind,
        "requests": requests, "bytes": sent if sized else None,
    }
