"""The audit as composite transforms: log lines in, verdicts, dead letters and a summary out.

Every input line ends in exactly one of three places, which the counts check:
a verdict, the skipped non-crawler count, or the dead-letter table.
"""
from __future__ import annotations

import bz2
import gzip
from collections import Counter
from contextlib import contextmanager
from typing import BinaryIO, Callable, Iterator

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from pipeline.auditing import DEAD_LETTER, VERDICT, LineAuditor, host_versions

DEAD_LETTERS = "dead_letters"
TALLY = "tally"
LINES_PER_BATCH = 2000


class ReadLogLines(beam.PTransform):
    """Files matching a glob -> (path, first line number, lines) batches.

    Compression follows the file extension. Batches keep Beam's per-element cost
    off the per-line path; each file is read by one worker, in order.
    """

    def __init__(self, pattern: str, lines_per_batch: int = LINES_PER_BATCH):
        super().__init__()
        self._pattern = pattern
        self._lines_per_batch = lines_per_batch

    def expand(self, pbegin):
        return (
            pbegin
            | "MatchLogFiles" >> fileio.MatchFiles(self._pattern)
            | "OpenLogFiles" >> fileio.ReadMatches()
            | "BatchLines" >> beam.FlatMap(line_batches, self._lines_per_batch)
        )


def line_batches(readable: fileio.ReadableFile, size: int) -> Iterator[tuple[str, int, list[str]]]:
    path = readable.metadata.path
    first, batch = 1, []
    with open_log(path) as handle:
        for raw in iter(handle.readline, b""):
            # Undecodable bytes become \xNN, the escape servers use themselves.
            batch.append(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace"))
            if len(batch) == size:
                yield path, first, batch
                first, batch = first + size, []
    if batch:
        yield path, first, batch


# Beam's own decompressing reader takes 16 MiB of compressed input at a time and holds all of it
# decompressed, and logs compress about tenfold; these readers stream in small chunks instead,
# so memory stays flat however large a log file is.
_STREAMING_DECOMPRESSORS: dict[str, Callable[[BinaryIO], BinaryIO]] = {
    CompressionTypes.GZIP: lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    CompressionTypes.BZIP2: lambda raw: bz2.BZ2File(raw, "rb"),
}


@contextmanager
def open_log(path: str) -> Iterator[BinaryIO]:
    """A log file's bytes on any Beam filesystem, decompressed as its extension says."""
    decompress = _STREAMING_DECOMPRESSORS.get(CompressionTypes.detect_compression_type(path))
    if decompress is None:
        with FileSystems.open(path) as handle:
            yield handle
        return
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw, decompress(raw) as handle:
        yield handle


class AuditLineBatchFn(beam.DoFn):
    """Verdicts per crawler request; dead letters tagged; a tally of lines and skips per batch."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor
        self.lines = Metrics.counter(self.__class__, "lines")
        self.verdicts = Metrics.counter(self.__class__, "verdicts")
        self.skipped = Metrics.counter(self.__class__, "skipped_non_crawlers")
        self.dead = Metrics.counter(self.__class__, "dead_letters")

    def process(self, batch, robots_by_host, dns_answers=None):
        path, first_number, lines = batch
        outcomes = Counter()
        for kind, record in self._auditor.audit_lines(path, first_number, lines, robots_by_host, dns_answers):
            outcomes[kind] += 1
            if kind == VERDICT:
                yield record
            elif kind == DEAD_LETTER:
                yield beam.pvalue.TaggedOutput(DEAD_LETTERS, record)
        tally = {"lines": len(lines), "skipped": len(lines) - outcomes[VERDICT] - outcomes[DEAD_LETTER]}
        self.lines.inc(tally["lines"])
        self.skipped.inc(tally["skipped"])
        self.verdicts.inc(outcomes[VERDICT])
        self.dead.inc(outcomes[DEAD_LETTER])
        yield beam.pvalue.TaggedOutput(TALLY, tally)


class RobotsByHost(beam.PTransform):
    """Robots versions -> (host, HostVersions), the side input requests are judged against."""

    def expand(self, versions):
        return (
            versions
            | "KeyByHost" >> beam.Map(lambda version: (version.host, version))
            | "GroupByHost" >> beam.GroupByKey()
            | "FingerprintHost" >> beam.MapTuple(lambda host, group: (host, host_versions(list(group))))
        )


class ResolveLogClients(beam.PTransform):
    """Log files -> (address, DnsAnswer) for each client address whose verdicts reverse DNS
    decides, each resolved once by `resolve` (see `pipeline.dns.ResolveDistinct`).

    It reads the logs itself rather than sharing the audit's read: the audit needs every answer
    before its first verdict, and a shared read would hold every line in memory meanwhile.
    """

    def __init__(self, pattern: str, auditor: LineAuditor, resolve: beam.PTransform):
        super().__init__()
        self._pattern = pattern
        self._auditor = auditor
        self._resolve = resolve

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadLogLines" >> ReadLogLines(self._pattern)
            | "DnsQuestions" >> beam.FlatMap(self._auditor.dns_questions)
            | "Resolve" >> self._resolve
        )


class AuditLogLines(beam.PTransform):
    """{"batches": line batches, "robots": RobotsVersion[, "dns": (address, DnsAnswer)]}
    -> {"verdicts", "dead_letters", "tally"}. Without "dns", identity is decided with DNS off.

    The DNS answers are a dict side input rather than joined to the lines by address: at 100,000
    and 1,000,000 distinct addresses the join took 2.5x and 1.6x as long on the DirectRunner, for
    a lower peak memory only at a million (2.5 GiB against 3.6; `bench/dns_join_bench.py`)."""

    def __init__(self, auditor: LineAuditor):
        super().__init__()
        self._auditor = auditor

    def expand(self, inputs):
        robots_by_host = inputs["robots"] | "RobotsByHost" >> RobotsByHost()
        side_inputs = [beam.pvalue.AsDict(robots_by_host)]
        if "dns" in inputs:
            side_inputs.append(beam.pvalue.AsDict(inputs["dns"]))
        audited = inputs["batches"] | "AuditLineBatches" >> beam.ParDo(
            AuditLineBatchFn(self._auditor), *side_inputs
        ).with_outputs(DEAD_LETTERS, TALLY, main="verdicts")
        return {"verdicts": audited.verdicts, DEAD_LETTERS: audited[DEAD_LETTERS], TALLY: audited[TALLY]}


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
        "between_captures": counts["disallowed-between-captures"],
        "unknown": counts["unknown"],
    }


class CountOutcomes(beam.PTransform):
    """{"verdicts", "dead_letters", "tally"} -> one dict: lines read and where each went."""

    def expand(self, outputs):
        verdicts = outputs["verdicts"] | "CountVerdicts" >> beam.combiners.Count.Globally()
        dead = outputs[DEAD_LETTERS] | "CountDeadLetters" >> beam.combiners.Count.Globally()
        tallies = outputs[TALLY] | "SumTallies" >> beam.CombineGlobally(sum_tallies)
        return (
            tallies
            | "CountsDict" >> beam.Map(
                lambda tally, verdicts, dead: {**tally, "verdicts": verdicts, "dead_letters": dead},
                beam.pvalue.AsSingleton(verdicts),
                beam.pvalue.AsSingleton(dead),
            )
        )


def sum_tallies(tallies) -> dict:
    total = Counter({"lines": 0, "skipped": 0})
    for tally in tallies:
        total.update(tally)
    return dict(total)
