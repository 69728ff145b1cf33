"""Which log format a file is written in, judged from a sample of its lines.

The one detector: `--log-format auto` calls it on the first lines of each file, and anything else
that wants to name the format of some lines (the run's health check, for the raw text of dead
letters) calls the same two functions:

    rank_formats(lines)  -> every detectable format, best first, as `Candidate`s
    chosen_format(ranked) -> the best candidate if it reads most of the sample, else None

A format "reads" a line when its parser turns the line into a request record; lines the format
reads as written but that carry no request for a resource (`not-request`, see `record.NOT_REQUEST`)
count too, since the server wrote them in that format. Blank lines are left out of the sample.
The `jsonl` format needs a field map, so it is never a candidate; every preset is.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
    """Every format of `formats` (default: `detectable_formats()`) scored on `lines`, best first.

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
    scored = []
    for name in names:
        parse = parser_for(name)
        scored.append(Candidate(name, sum(1 for text in sample if _reads(parse, text)), len(sample)))
    order = {name: position for position, name in enumerate(names)}
    return tuple(sorted(scored, key=lambda candidate: (-candidate.read, order[candidate.name])))


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
