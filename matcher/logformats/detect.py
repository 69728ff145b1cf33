"""Which log format a file is written in, judged from a sample of its lines.

The one detector: `--log-format auto` calls it on the first lines of each file, and anything else
that wants to name the format of some lines (the run's health check, for the raw text of dead
letters) calls the same two functions:

    rank_formats(lines)  -> every detectable format, best first, as `Candidate`s
    chosen_format(ranked) -> the best candidate if it reads the sample clearly, else None

A format "reads" a line when its parser turns the line into a request record; lines the format
reads as written but that carry no request for a resource (`not-request`, see `record.NOT_REQUEST`)
count too, since the server wrote them in that format. Blank lines are left out of the sample;
header lines (a `#` first: W3C directives, comments) are read in their place, since a `#Fields:`
line says how the lines after it read, but not counted, so that a short file's headers neither
carry nor sink a format; a file of nothing but headers is judged on its headers.

Candidates that read as many lines are ranked by what they give: one that names the host on most
of the lines it reads (lighttpd's `%V` where combined has the identd user, varnishncsa's absolute
URLs) comes before one that does not, so that the same lines are not read without their host; else
the order of the formats decides.

The best candidate is taken when it reads at least 60% of the sample, or at least 30% and twice
as many lines as the runner-up: the best of the others that read a line it does not (a format
that reads only lines the best reads too, such as an alias, is no rival). The lines it does not
read become dead letters, which the run's health check counts; a handful of garbled lines or a
second layout in the same file does not refuse the file.

The `jsonl` format needs a field map, so it is never a candidate; every preset is, and so is
every preset inside each envelope (`syslog+nginx_json`) that most of the sample is wrapped in.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from matcher.logformats.envelopes import ENVELOPES, unwrapped
from matcher.logformats.record import LogParseError, LogRecord, is_not_request

__all__ = [
    "SAMPLE_LINES", "SHARE_AHEAD", "SHARE_ALONE", "Candidate", "chosen_format", "detectable_formats", "rank_formats",
    "sample_of", "scored",
]

# First lines of a file read to judge its format: enough that a handful of odd lines (a 408, a
# TLS probe) cannot decide it, few enough that detection costs nothing next to the audit.
SAMPLE_LINES = 200
# The shares of the sample, in percent, `chosen_format` asks of the best candidate: alone, or with
# twice the runner-up's lines; compared in whole numbers, with no rounding.
SHARE_ALONE = 60
SHARE_AHEAD = 30


@dataclass(frozen=True)
class Candidate:
    """How well one format reads a sample: `read` of its `sample` lines (headers and blank lines
    left out); `lines` are the positions of those read, to tell rivals from aliases; `hosts` how
    many of them it reads a logged host from."""

    name: str
    read: int
    sample: int
    lines: frozenset[int] = field(default=frozenset(), compare=False, repr=False)
    hosts: int = field(default=0, compare=False, repr=False)

    @property
    def share(self) -> float:
        return self.read / self.sample if self.sample else 0.0

    def names_hosts(self) -> bool:
        """The host is read from most of the lines read: a format that gives it, not a format whose
        odd line happens to (an absolute URL a client sent to an origin server)."""
        return 2 * self.hosts > self.read

    def reads_most(self) -> bool:
        """At least `SHARE_ALONE` of the sample read: taken whatever the other formats read."""
        return self.sample > 0 and 100 * self.read >= SHARE_ALONE * self.sample

    def __str__(self) -> str:
        return f"{self.name} ({self.read} of {self.sample} lines read, {self.share:.0%})"


def detectable_formats() -> tuple[str, ...]:
    """Every format auto-detection tries, in the order that breaks ties (the plainer first)."""
    from matcher.logformats import FORMATS

    return tuple(name for name in FORMATS if name != "jsonl")


def rank_formats(lines: Iterable[bytes | str], formats: Sequence[str] | None = None) -> tuple[Candidate, ...]:
    """Every format of `formats` (default: `detectable_formats()`, and those inside each envelope
    most lines are in) scored on `lines`, best first.

    Lines are bytes as read from the file (decoded as the pipeline decodes them) or text; only the
    first `SAMPLE_LINES` non-blank lines are read, and of them the lines that are not headers
    scored (all of them when every one is a header). Ties keep the order of `formats`.
    """
    from matcher.logformats import parser_for

    sample = sample_of(lines)
    counted = _counted(sample)
    names = detectable_formats() if formats is None else tuple(formats)
    scored = [_score(name, parser_for(name), sample, counted) for name in names]
    if formats is None:
        # each envelope that most lines are in: every format on what it wraps
        for envelope in ENVELOPES:
            inner = [_inside(envelope, text) for text in sample]
            if 2 * sum(text is not None for text in inner) > len(sample):
                scored += [_score(f"{envelope}+{name}", parser_for(name), inner, counted) for name in names]
    order = {candidate.name: position for position, candidate in enumerate(scored)}
    return tuple(sorted(scored, key=lambda candidate: (-candidate.read, not candidate.names_hosts(), order[candidate.name])))


def sample_of(lines: Iterable[bytes | str]) -> list[str]:
    """The lines a format is judged on: the first `SAMPLE_LINES` non-blank ones, as text."""
    sample = []
    for line in lines:
        text = line.decode("utf-8", "backslashreplace") if isinstance(line, bytes) else line
        if text.strip():
            sample.append(text)
            if len(sample) == SAMPLE_LINES:
                break
    return sample


def scored(name: str, parse: Callable[[str], LogRecord], lines: Iterable[bytes | str]) -> Candidate:
    """A parser that no format name stands for alone (a layout inferred from the lines) scored on
    `lines` as `rank_formats` scores each format, so that `chosen_format` weighs it like them."""
    sample = sample_of(lines)
    return _score(name, parse, sample, _counted(sample))


def _counted(sample: Sequence[str]) -> frozenset[int]:
    """The positions scored: headers are still read, in their place (a W3C `#Fields:` says how the
    lines after it read), but counted only in a sample of nothing else."""
    counted = frozenset(position for position, text in enumerate(sample) if not _is_header(text))
    return counted or frozenset(range(len(sample)))


def _is_header(text: str) -> bool:
    """A line a server writes above its requests: a W3C directive, a comment."""
    return text.lstrip("\ufeff \t").startswith("#")


def _score(name: str, parse: Callable[[str], LogRecord], lines: Sequence[str | None], counted: frozenset[int]) -> Candidate:
    """`lines` read in order (None: not there to read, outside the envelope); those at `counted`
    positions scored."""
    read, hosts = set(), 0
    for position, text in enumerate(lines):
        if text is None:
            continue
        reading = _reading(parse, text)  # a header too: a W3C parser takes its `#Fields:`
        if reading is not None and position in counted:
            read.add(position)
            hosts += reading
    return Candidate(name, len(read), len(counted), frozenset(read), hosts)


def _inside(envelope: str, text: str) -> str | None:
    try:
        return unwrapped(envelope, text)
    except LogParseError:
        return None


def chosen_format(ranked: Sequence[Candidate]) -> Candidate | None:
    """The best of `rank_formats`' answer when it reads at least `SHARE_ALONE` percent of the sample,
    or at least `SHARE_AHEAD` percent and twice the lines of the best rival; None: no format reads
    it clearly."""
    if not ranked or not ranked[0].read:
        return None
    best = ranked[0]
    if best.reads_most():
        return best
    runner_up = max((c.read for c in ranked[1:] if not c.lines <= best.lines), default=0)
    if 100 * best.read >= SHARE_AHEAD * best.sample and best.read >= 2 * runner_up:
        return best
    return None


def _reading(parse: Callable[[str], LogRecord], text: str) -> bool | None:
    """None: the line is not read; else whether its record names the host (a not-request has none)."""
    try:
        record = parse(text)
    except LogParseError as error:
        return False if is_not_request(error.reason) else None
    return record.host is not None
