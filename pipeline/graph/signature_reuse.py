"""Web Bot Auth signatures sent on more than one request.

A signature covers the request's components and a validity window, not the request itself:
within the window the same signature verifies on every copy of the request, so a copy made by
someone else verifies too. The audit cannot tell the operator's retries from a replay; it lists
every signature seen more than once, with how many of its requests it verified, for a person
to judge.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

import apache_beam as beam

# (requests, first, last, verified); times as ISO strings so the values encode deterministically
Seen = tuple[int, str, str, int]


class SignatureReuse(beam.PTransform):
    """Verdict batches -> one row per (signature, crawler) sent on more than one request."""

    def expand(self, verdict_batches):
        return (
            verdict_batches
            | "SignaturesSeen" >> beam.FlatMap(signatures_seen)
            | "CombinePerSignature" >> beam.CombinePerKey(combine_seen)
            | "SeenMoreThanOnce" >> beam.Filter(lambda item: item[1][0] > 1)
            | "SignatureReuseRows" >> beam.MapTuple(signature_reuse_row)
        )


def signatures_seen(verdicts: list[dict]) -> Iterator[tuple[tuple[str, str | None], Seen]]:
    for verdict in verdicts:
        if verdict["signature"] is not None:
            moment = verdict["ts"].isoformat()
            verified = int(verdict["identity_method"] == "web-bot-auth" and verdict["identity"] == "verified")
            yield (verdict["signature"], verdict["crawler"] or verdict["operator"]), (1, moment, moment, verified)


def combine_seen(values: Iterable[Seen]) -> Seen:
    requests, first, last, verified = 0, None, None, 0
    for count, earliest, latest, proved in values:
        requests += count
        verified += proved
        first = earliest if first is None or _at(earliest) < _at(first) else first
        last = latest if last is None or _at(latest) > _at(last) else last
    return requests, first or "", last or "", verified


def signature_reuse_row(key: tuple[str, str | None], seen: Seen) -> dict:
    signature, crawler = key
    requests, first, last, verified = seen
    return {
        "signature": signature, "crawler": crawler, "requests": requests,
        "first_ts": _at(first), "last_ts": _at(last), "verified": verified,
    }


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)
