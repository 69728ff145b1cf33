"""Which log format a file is written in, judged from a sample of its lines.

The one detector: `--log-format auto` calls it on the first lines of each file, and anything else
that wants to name the format of some lines (the run's health check, for the raw text of dead
letters) calls the same two functions:

    rank_formats(lines)  -> every detectable format, best first, as `Candidate`s
    chosen_format(ranked) -> the best candidate if it reads most of the sample, else None

A format "reads" a line when its parser turns the line into a request record; lines the format
reads as written but that carry no request for a resource (`not-request`, see `record.NOT_REQUEST`)
count too, since the server wrote them in that format. Blank lines are left out of the sample.
The `jsonl` format needs a field map, so it is never a candidate; every preset is, and so is
every preset inside each envelope (`syslog+nginx_json`) that most of the sample is wrapped in.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from matcher.logformats.envelopes import ENVELOPES, unwrapped
from matcher.logformats.record import LogParseError, is_not_request

__all__ = ["SAMPLE_LINES", "Candidate", "chosen_format", "detectable_formats", "rank_formats"]

# First lines of a file read to judge its format: enough that a handful of odd lines (a 408, a
# TLS probe) cannot decide it, few enough that detection costs nothing next to the audit.
SAMPLE_LINES = 200


@dataclass(frozen=True)
class Candidate:
    """How well one format reads a sample: `read` of its `sample` non-blank lines."""

    name: str
    read: int
    sample: int

    @property
    def share(self) -> float:
        return self.read / self.sample if self.sample else 0.0

    def reads_most(self) -> bool:
        """More than half the sample read: the bar `chosen_format` sets."""
        return self.sample > 0 and 2 * self.read > self.sample

    def __str__(self) -> str:
        return f"{self.name} ({self.read} of {self.sample} sample lines)"


def detectable_formats() -> tuple[str, ...]:
    """Every format auto-detection tries, in the order that breaks ties (the plainer first)."""
    from matcher.logformats import FORMATS

    return tuple(name for name in FORMATS if name != "jsonl")


def rank_formats(lines: Iterable[bytes | str], formats: Sequence[str] | None = None) -> tuple[Candidate, ...]:
    """Every format of `formats` (default: `detectable_formats()`, and those inside each envelope
    most lines are in) scored on `lines`, best first.

    Lines are bytes as read from the file (decoded as the pipeline decodes them) or text; only the
    first `SAMPLE_LINES` non-blank lines are scored. Ties keep the order of `formats`.
    """
    from matcher.logformats import parser_for

    sample = []
    for line in lines:
        text = line.decode("utf-8", "backslashreplace") if isinstance(line, bytes) else line
        if text.strip():
            sample.append(text)
            if len(sample) == SAMPLE_LINES:
                break
    names = detectable_formats() if formats is None else tuple(formats)
    scored = [_score(name, parser_for(name), sample, len(sample)) for name in names]
    if formats is None:
        # each envelope that most lines are in: every format on what it wraps
        for envelope in ENVELOPES:
            inner = [text for text in (_inside(envelope, text) for text in sample) if text is not None]
            if 2 * len(inner) > len(sample):
                scored += [_score(f"{envelope}+{name}", parser_for(name), inner, len(sample)) for name in names]
    order = {candidate.name: position for position, candidate in enumerate(scored)}
    return tuple(sorted(scored, key=lambda candidate: (-candidate.read, order[candidate.name])))


def _score(name: str, parse, lines: Sequence[str], sample: int) -> Candidate:
    return Candidate(name, sum(1 for text in lines if _reads(parse, text)), sample)


def _inside(envelope: str, text: str) -> str | None:
    try:
        return unwrapped(envelope, text)
    except LogParseError:
        return None


def chosen_format(ranked: Sequence[Candidate]) -> Candidate | None:
    """The best of `rank_formats`' answer when it reads most of the sample; None: no format does."""
    if ranked and ranked[0].reads_most():
        return ranked[0]
    return None


def _reads(parse, text: str) -> bool:
    try:
        parse(text)
    except LogParseError as error:
        return is_not_request(error.reason)
    return True
