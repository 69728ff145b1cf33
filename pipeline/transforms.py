"""The audit as composite transforms: log lines in, verdicts, dead letters and a summary out.

Every input line ends in exactly one of three places, which the counts check:
a verdict, the skipped non-crawler count, or the dead-letter table.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Iterable, Iterator

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.metrics import Metrics

from matcher.agents import Registry
from matcher.audit import audit
from matcher.history import HostHistory, RobotsVersion, host_key
from matcher.identity import RangeIndex
from pipeline.logformats import LogParseError, parser_for

DEAD_LETTERS = "dead_letters"
SKIPPED = "skipped"


@dataclass(frozen=True)
class HostVersions:
    """One host's robots versions as the side input carries them; the fingerprint lets a
    worker keep one parsed history per distinct table content."""

    fingerprint: str
    versions: tuple[RobotsVersion, ...]


def host_versions(versions: Iterable[RobotsVersion]) -> HostVersions:
    ordered = tuple(sorted(versions, key=lambda v: (v.effective_from, v.status or 0, v.sha256 or "")))
    digest = hashlib.sha256()
    for version in ordered:
        digest.update(f"{version.host}|{version.effective_from.isoformat()}|{version.status}|{version.sha256}\n".encode())
    return HostVersions(digest.hexdigest(), ordered)


class ReadLogLines(beam.PTransform):
    """Files matching a glob -> (source "file:line", text). Compression follows the extension."""

    def __init__(self, pattern: str):
        super().__init__()
        self._pattern = pattern

    def expand(self, pbegin):
        return (
            pbegin
            | "MatchLogFiles" >> fileio.MatchFiles(self._pattern)
            | "OpenLogFiles" >> fileio.ReadMatches()
            | "NumberLines" >> beam.FlatMap(numbered_lines)
        )


def numbered_lines(readable: fileio.ReadableFile) -> Iterator[tuple[str, str]]:
    name = readable.metadata.path
    with readable.open() as handle:
        for number, raw in enumerate(iter(handle.readline, b""), start=1):
            # Undecodable bytes become \xNN, the escape servers use themselves.
            yield f"{name}:{number}", raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace")


class ParseLogLineFn(beam.DoFn):
    def __init__(self, log_format: str, default_host: str | None, field_map: dict | None):
        self._args = (log_format, default_host, field_map)
        self.parsed = Metrics.counter(self.__class__, "parsed")
        self.dead = Metrics.counter(self.__class__, "dead_letters")

    def setup(self):
        self._parse = parser_for(*self._args)

    def process(self, element):
        source, line = element
        try:
            record = self._parse(line)
        except LogParseError as error:
            self.dead.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS, dead_letter(source, error.reason, error.message, line))
            return
        self.parsed.inc()
        yield source, record


def dead_letter(source: str, reason: str, message: str, raw: str) -> dict:
    return {"source": source, "reason": reason, "message": message, "raw": raw}


class AuditRequestFn(beam.DoFn):
    """Verdict per crawler request; non-crawlers go to the `skipped` output."""

    def __init__(self, registry: Registry, ranges: RangeIndex, error_limit: timedelta, grace: timedelta):
        self._registry = registry
        self._ranges = ranges
        self._history_settings = {"error_limit": error_limit, "grace": grace}
        self.verdicts = Metrics.counter(self.__class__, "verdicts")
        self.skipped = Metrics.counter(self.__class__, "skipped_non_crawlers")

    def setup(self):
        self._histories: dict[str, HostHistory] = {}

    def process(self, element, robots_by_host):
        source, request = element
        verdict = audit(request, source, self._registry, self._ranges, self._history(request.host, robots_by_host))
        if verdict is None:
            self.skipped.inc()
            yield beam.pvalue.TaggedOutput(SKIPPED, source)
        else:
            self.verdicts.inc()
            yield verdict

    def _history(self, host: str | None, robots_by_host) -> HostHistory | None:
        entry = robots_by_host.get(host_key(host)) if host else None
        if entry is None:
            return None
        history = self._histories.get(entry.fingerprint)
        if history is None:
            history = self._histories[entry.fingerprint] = HostHistory(entry.versions, **self._history_settings)
        return history


class RobotsByHost(beam.PTransform):
    """Robots versions -> (host, HostVersions), the side input requests are judged against."""

    def expand(self, versions):
        return (
            versions
            | "KeyByHost" >> beam.Map(lambda version: (version.host, version))
            | "GroupByHost" >> beam.GroupByKey()
            | "FingerprintHost" >> beam.MapTuple(lambda host, group: (host, host_versions(group)))
        )


class AuditLogLines(beam.PTransform):
    """{"lines": (source, line), "robots": RobotsVersion} -> {"verdicts", "dead_letters", "skipped"}."""

    def __init__(self, parse: ParseLogLineFn, audit_fn: AuditRequestFn):
        super().__init__()
        self._parse = parse
        self._audit = audit_fn

    def expand(self, inputs):
        parsed = inputs["lines"] | "ParseLogLines" >> beam.ParDo(self._parse).with_outputs(
            DEAD_LETTERS, main="requests"
        )
        robots_by_host = inputs["robots"] | "RobotsByHost" >> RobotsByHost()
        audited = parsed.requests | "AuditRequests" >> beam.ParDo(
            self._audit, beam.pvalue.AsDict(robots_by_host)
        ).with_outputs(SKIPPED, main="verdicts")
        return {"verdicts": audited.verdicts, DEAD_LETTERS: parsed[DEAD_LETTERS], SKIPPED: audited[SKIPPED]}


class CountDecisions(beam.CombineFn):
    def create_accumulator(self):
        return Counter()

    def add_input(self, counts, decision):
        counts[decision] += 1
        return counts

    def merge_accumulators(self, accumulators):
        return sum(accumulators, Counter())

    def extract_output(self, counts):
        return counts


class Summarize(beam.PTransform):
    """Verdicts -> one row per (crawler, identity): requests and each decision's count."""

    def expand(self, verdicts):
        return (
            verdicts
            | "KeyByCrawlerIdentity" >> beam.Map(lambda v: ((v["crawler"] or v["operator"], v["identity"]), v["decision"]))
            | "CountDecisions" >> beam.CombinePerKey(CountDecisions())
            | "SummaryRows" >> beam.MapTuple(summary_row)
        )


def summary_row(key: tuple[str | None, str], counts: Counter) -> dict:
    crawler, identity = key
    return {
        "crawler": crawler,
        "identity": identity,
        "requests": sum(counts.values()),
        "allowed": counts["allowed"],
        "disallowed": counts["disallowed"],
        "within_grace": counts["disallowed-within-grace"],
        "unknown": counts["unknown"],
    }


class CountOutcomes(beam.PTransform):
    """Lines read and where each went, as one dict; the three outcomes must add up."""

    def expand(self, pcolls):
        counted = [
            pcolls[name] | f"Count{label}" >> beam.combiners.Count.Globally() | f"Name{label}" >> beam.Map(lambda n, k=name: (k, n))
            for name, label in (("lines", "Lines"), ("verdicts", "Verdicts"), (SKIPPED, "Skipped"), (DEAD_LETTERS, "DeadLetters"))
        ]
        return counted | "MergeCounts" >> beam.Flatten() | "CountsDict" >> beam.combiners.ToDict()
