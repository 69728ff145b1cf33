"""Web Bot Auth signatures sent on more than one request, and nonces sent in more than one
signature.

A signature covers the request's components and a validity window, not the request itself:
within the window the same signature verifies on every copy of the request, so a copy made by
someone else verifies too. The audit cannot tell the operator's retries from a replay; it lists
every signature seen more than once, with how many of its requests it verified, for a person
to judge. A nonce promises that its key signs once with it: one key's nonce in a second signature
while the first still holds is listed too (`matcher.web_bot_auth.nonce_reused`). Neither changes
a verdict.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

import apache_beam as beam

from matcher.web_bot_auth import nonce_reused, nonce_use
from pipeline.columnar.selections import signed

SIGNATURE, NONCE = "signature", "nonce"
# A nonce's uses: (request time as ISO text, the signature's expiry, the Signature value)
Use = tuple[str, int, str]
# (requests, first, last, verified, a nonce's uses); times as ISO strings so the values encode
# deterministically
Seen = tuple[int, str, str, int, tuple[Use, ...]]


class SignatureReuse(beam.PTransform):
    """Verdict blocks -> one row per (kind, signature or nonce, crawler) used more than once."""

    def expand(self, verdict_blocks):
        return (
            verdict_blocks
            | "SignaturesSeen" >> beam.FlatMap(lambda block: signatures_seen(signed(block)))
            | "CombinePerSignature" >> beam.CombinePerKey(combine_seen)
            | "SeenMoreThanOnce" >> beam.Filter(lambda item: reused(*item))
            | "SignatureReuseRows" >> beam.MapTuple(signature_reuse_row)
        )


def signatures_seen(verdicts: list[dict]) -> Iterator[tuple[tuple[str, str, str | None], Seen]]:
    for verdict in verdicts:
        signature = verdict["signature"]
        if signature is None:
            continue
        moment = verdict["ts"].isoformat()
        verified = int(verdict["identity_method"] == "web-bot-auth" and verdict["identity"] == "verified")
        who = verdict["crawler"] or verdict["operator"]
        yield (SIGNATURE, signature, who), (1, moment, moment, verified, ())
        signature_input = verdict.get("signature_input")
        use = nonce_use(signature_input, signature) if signature_input else None
        if use is not None:
            yield (NONCE, f"{use.keyid} {use.nonce}", who), (1, moment, moment, verified, ((moment, use.expires, signature),))


def combine_seen(values: Iterable[Seen]) -> Seen:
    requests, first, last, verified, uses = 0, None, None, 0, []
    for count, earliest, latest, proved, used in values:
        requests += count
        verified += proved
        uses.extend(used)
        first = earliest if first is None or _at(earliest) < _at(first) else first
        last = latest if last is None or _at(latest) > _at(last) else last
    return requests, first or "", last or "", verified, tuple(uses)


def reused(key: tuple[str, str, str | None], seen: Seen) -> bool:
    if key[0] == NONCE:
        return nonce_reused((_at(moment), expires, value) for moment, expires, value in seen[4])
    return seen[0] > 1


def signature_reuse_row(key: tuple[str, str, str | None], seen: Seen) -> dict:
    kind, signature, crawler = key
    requests, first, last, verified, _ = seen
    return {
        "kind": kind, "signature": signature, "crawler": crawler, "requests": requests,
        "first_ts": _at(first), "last_ts": _at(last), "verified": verified,
    }


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)
