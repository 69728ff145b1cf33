"""The audit graph: `build` wires it, `write_outputs` and `write_stream_outputs` add the sinks.

The registry, the range snapshots and the robots table are read before the graph
is built: they are small, a mistake in them should stop the run with one clear
message, and shipping them inside the transforms means workers need no access
to the launching machine's files. A streaming run with `--robots-refresh` re-reads
the robots table on the workers, so there it must be on storage they can reach.

Batch and streaming share the per-line audit and the crawl-delay transform; they
differ in the source, in how the robots table reaches the audit, and in the sinks.
The graph is the same on every runner: what only a local run wants (its grouping on disk,
for the crawl-delay requests and the report's disallowed paths) is handed in, never chosen here.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone

import apache_beam as beam
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher import health, records
from matcher.directives import PageDirectivesTable
from matcher.line_auditor import LineAuditor, RobotsByHost, robots_by_host
from matcher.logformats import PASTE_YOUR_FORMAT, reads_in_pieces
from matcher.logformats.timestamps import time_zone
from matcher.logformats.detect import SAMPLE_LINES, Candidate, chosen_format, rank_formats
from matcher.logformats.inference import infer_layout, inferred_choice
from matcher.printable import printable
from matcher.records import (
    BETWEEN_CAPTURES_TABLE,
    CHANGES_TABLE,
    COUNTS_TABLE,
    DEAD_LETTERS_TABLE,
    DNS_ANSWERS_TABLE,
    INDEXING_FINDINGS_TABLE,
    REPORT_COUNTS_TABLE,
    ROBOTS_FETCHES_TABLE,
    ROBOTS_VERSIONS_TABLE,
    BACKOFF_TABLE,
    REFERRALS_TABLE,
    SERVED_TABLE,
    SIGNATURE_REUSE_TABLE,
    SUMMARY_TABLE,
    VERDICTS_TABLE,
    VIOLATIONS_TABLE,
    WINDOWS_TABLE,
)
from pipeline.columnar.selections import verdict_records
from pipeline.evidence.confined import is_url
from pipeline.evidence.page_directives import read_page_directives
from pipeline.evidence.resolvers import LiveResolver
from pipeline.evidence.robots_table import read_robots_table
from pipeline.graph import robots_refresh, stream_sources
from pipeline.graph.between_captures import BetweenCaptures
from pipeline.graph.changes import AuditChanges, AuditChangesOnStream
from pipeline.graph.crawl_delay import CrawlDelayAudit
from pipeline.graph.dns import DnsSettings, ResolveDistinct, dns_settings
from pipeline.graph.indexing import IndexingFindings
from pipeline.graph.line_audit import BLOCK_LINES, REFERRAL_COUNTS, VERDICT_BATCHES, AuditLogLines, ResolveLogClients
from pipeline.graph.read_logs import PIECE_BYTES, ReadLogLines, first_lines
from pipeline.graph.robots_fetches import FollowRobotsFetches, FollowRobotsFetchesOnStream
from pipeline.tables.prior_run import prior_fetches
from pipeline.graph.settings import OutputSettings, RunSettings
from pipeline.graph.referrals import Referrals
from pipeline.graph.served import Served
from pipeline.graph.signature_reuse import SignatureReuse
from pipeline.graph.sinks import WriteBigQueryTable, WriteBundleFiles, WriteWholeTables, write_table, write_table_blocks
from pipeline.graph.summaries import CountForReport, CountOutcomes, Summarize

# The record tables every run writes, verdicts first (a batch run adds the summary, the counts, the indexing findings,
# the between-captures changes, the reused signatures, the robots versions, served, referrals and the report's counts).
RECORD_TABLES = (
    VERDICTS_TABLE, DEAD_LETTERS_TABLE, VIOLATIONS_TABLE, WINDOWS_TABLE, ROBOTS_FETCHES_TABLE, CHANGES_TABLE, BACKOFF_TABLE
)
# A batch run's one-object tables, each a JSON file of its own.
DOCUMENTS = (COUNTS_TABLE, REPORT_COUNTS_TABLE)
# Besides the verdicts, the tables of a batch run that grow with its log or its robots history,
# written in parts in the chosen format, and those that stay a few rows, written whole as JSON Lines
# (those of WHOLE_TABLES_IN_FORMAT in the chosen format).
GROWING_TABLES = (
    DEAD_LETTERS_TABLE, VIOLATIONS_TABLE, WINDOWS_TABLE, ROBOTS_FETCHES_TABLE, ROBOTS_VERSIONS_TABLE, CHANGES_TABLE,
    BACKOFF_TABLE,
)
WHOLE_TABLES = (
    SUMMARY_TABLE, INDEXING_FINDINGS_TABLE, BETWEEN_CAPTURES_TABLE, SIGNATURE_REUSE_TABLE, SERVED_TABLE, REFERRALS_TABLE,
)
WHOLE_TABLES_IN_FORMAT = (SERVED_TABLE, REFERRALS_TABLE)


def build(
    pipeline: beam.Pipeline, settings: RunSettings, grouping: beam.PTransform | None = None,
    auditor: LineAuditor | None = None,
) -> dict:
    """The audit graph on `pipeline`; returns its output PCollections by table name.

    `grouping` groups what a batch run adds up by key, the crawl-delay requests and the report's
    disallowed paths, a transform with `GroupByKey`'s contract (see `pipeline.graph.crawl_delay`);
    a local batch run passes one that groups on disk (`pipeline.local.spill`); without it the
    runner's `GroupByKey` groups them. `auditor` is `line_auditor(settings)` when the caller has
    made it already (to record what its range files lacked).
    """
    auditor = auditor or line_auditor(settings)
    # A range file that cannot be used changes verdicts, so the run says so before it starts.
    for problem in auditor.ranges.problems:
        print(f"crawl-audit: ranges: {printable(problem)}", file=sys.stderr)
    dns = dns_settings(settings.identity, auditor.registry)
    if settings.streaming:
        if dns is not None and dns.record and not isinstance(dns.resolver, LiveResolver):
            raise ValueError("--dns-record in streaming records live answers: it needs --dns live")
        return _build_streaming(pipeline, settings, auditor, dns)
    logs = settings.inputs.logs
    pieces = piece_bytes(settings)
    batches = pipeline | "ReadLogLines" >> ReadLogLines(logs, lines_per_batch=BLOCK_LINES, piece_bytes=pieces)
    robots = pipeline | "ReadRobotsTable" >> beam.Create([robots_by_host(read_robots_table(settings.inputs.robots))])
    dns_answers = None
    if dns is not None:
        lookups = ResolveDistinct(dns.resolver, dns.record)
        dns_answers = pipeline | "ResolveLogClients" >> ResolveLogClients(logs, auditor, lookups, pieces)
    prior = prior_fetches(settings.inputs.prior_run) if settings.inputs.prior_run else ()
    followed = pipeline | "FollowRobotsFetches" >> FollowRobotsFetches(logs, auditor, robots, dns_answers, prior, pieces)
    outputs = batches | "AuditLogLines" >> AuditLogLines(
        auditor, robots, dns_answers, followed["histories"], columnar=True
    )
    outputs[ROBOTS_FETCHES_TABLE] = followed["rows"]
    verdict_batches = outputs[VERDICT_BATCHES]
    outputs[SUMMARY_TABLE] = verdict_batches | "Summarize" >> Summarize()
    outputs[COUNTS_TABLE] = outputs | "CountOutcomes" >> CountOutcomes()
    outputs[REPORT_COUNTS_TABLE] = verdict_batches | "CountForReport" >> CountForReport(grouping)
    outputs[INDEXING_FINDINGS_TABLE] = verdict_batches | "IndexingFindings" >> IndexingFindings()
    outputs[BETWEEN_CAPTURES_TABLE] = verdict_batches | "BetweenCaptures" >> BetweenCaptures()
    outputs[SIGNATURE_REUSE_TABLE] = verdict_batches | "SignatureReuse" >> SignatureReuse()
    outputs[SERVED_TABLE] = verdict_batches | "Served" >> Served()
    outputs[REFERRALS_TABLE] = outputs[REFERRAL_COUNTS] | "Referrals" >> Referrals()
    outputs[CHANGES_TABLE] = verdict_batches | "AuditChanges" >> AuditChanges(
        robots, followed["histories"], auditor.registry
    )
    # The report's robots.txt section draws the history the verdicts were judged by.
    outputs[ROBOTS_VERSIONS_TABLE] = robots | "RecordRobotsVersions" >> beam.FlatMap(
        lambda table: map(records.robots_version_record, table.versions())
    )
    return _with_crawl_delay(outputs, settings, bounded=True, grouping=grouping)


def line_auditor(settings: RunSettings) -> LineAuditor:
    """The per-line audit a run's settings ask for, its registry, ranges and pages read."""
    inputs = settings.inputs
    registry = load_registry(inputs.registry)
    return LineAuditor(
        log_format=inputs.log_format,
        default_host=inputs.default_host,
        field_map=inputs.field_map,
        file_formats=inputs.file_formats,
        file_field_maps=inputs.file_field_maps,
        zone=time_zone(inputs.log_timezone),
        registry=registry,
        ranges=load_ranges(inputs.ranges, registry, settings.identity.range_window),
        error_limit=settings.history.error_limit,
        grace=settings.history.cache_grace,
        proxies=settings.identity.proxies,
        pages=_page_directives(inputs.page_directives),
        truncate_addresses=settings.identity.truncate_addresses,
    )


def _build_streaming(
    pipeline: beam.Pipeline, settings: RunSettings, auditor: LineAuditor, dns: DnsSettings | None
) -> dict:
    batches = pipeline | "ReadLogStream" >> _log_source(settings)
    refresh = settings.stream.robots_refresh
    table = settings.inputs.robots
    snapshot = robots_refresh.robots_snapshot(table)
    _say_launch_health(settings, auditor, snapshot)
    if refresh:
        robots = pipeline | "RefreshRobotsTable" >> robots_refresh.RefreshRobotsTable(table, refresh)
    else:
        robots = pipeline | "ReadRobotsTable" >> beam.Create([snapshot])
    outputs = batches | "AuditLogLines" >> AuditLogLines(auditor, robots, dns)
    if dns is None or not dns.record:
        outputs.pop(DNS_ANSWERS_TABLE, None)
    prior = prior_fetches(settings.inputs.prior_run) if settings.inputs.prior_run else ()
    followed = outputs[VERDICT_BATCHES] | "FollowRobotsFetches" >> FollowRobotsFetchesOnStream(
        auditor, robots, settings.crawl_delay.allowed_lateness, prior
    )
    # Crawl-delay reads the verdicts as audited: nothing it uses changes with what a crawler had
    # fetched, so it does not wait for that.
    outputs = _with_crawl_delay(outputs, settings, bounded=False, late_fetches=followed[DEAD_LETTERS_TABLE])
    changes = followed[VERDICT_BATCHES] | "AuditChanges" >> AuditChangesOnStream(
        robots, auditor.registry, settings.stream.changes_every, prior
    )
    return {
        **outputs,
        VERDICT_BATCHES: followed[VERDICT_BATCHES],
        ROBOTS_FETCHES_TABLE: followed[ROBOTS_FETCHES_TABLE],
        CHANGES_TABLE: changes,
    }


def _say_launch_health(settings: RunSettings, auditor: LineAuditor, robots: RobotsByHost) -> None:
    """A stream has no closing summary, so what run health can tell at launch is said now."""
    today = datetime.now(timezone.utc).date()
    dns = settings.identity.dns
    found = health.launch_findings(
        health.uncovered_crawlers(auditor.registry, auditor.ranges, today, dns), dns,
        settings.inputs.default_host, tuple(robots),
    )
    for finding in found:
        print(f"crawl-audit: run health: [{finding.check}] {printable(finding.problem)}", file=sys.stderr)
        for detail in finding.details:
            print(f"  {printable(detail)}", file=sys.stderr)
        print(f"  fix: {printable(finding.fix)}", file=sys.stderr)


def _log_source(settings: RunSettings) -> beam.PTransform:
    stream, inputs = settings.stream, settings.inputs
    if stream.pubsub_subscription:
        return stream_sources.ReadPubSubLines(stream.pubsub_subscription, stream.pubsub_timestamp_attribute)
    if stream.kafka_bootstrap:
        return stream_sources.ReadKafkaLines(
            stream.kafka_bootstrap, stream.kafka_topic, stream.kafka_config, stream.kafka_expansion_service
        )
    poll = stream_sources.LogFolderPoll(inputs.log_format, inputs.default_host, inputs.field_map)
    return stream_sources.WatchLogFolder(inputs.logs, poll, stream.poll_interval, stream.watch_for)


def _with_crawl_delay(
    outputs: dict,
    settings: RunSettings,
    bounded: bool,
    grouping: beam.PTransform | None = None,
    late_fetches: beam.PCollection | None = None,
) -> dict:
    """Adds the crawl-delay and back-off tables; late requests, and a stream's late robots.txt
    fetches, join the dead letters."""
    crawl_delay = outputs[VERDICT_BATCHES] | "CrawlDelayAudit" >> CrawlDelayAudit(
        settings.crawl_delay.window, settings.crawl_delay.allowed_lateness, bounded, grouping
    )
    late = () if late_fetches is None else (late_fetches,)
    dead_letters = (outputs[DEAD_LETTERS_TABLE], crawl_delay[DEAD_LETTERS_TABLE], *late) | "AllDeadLetters" >> beam.Flatten()
    return {
        **outputs,
        VIOLATIONS_TABLE: crawl_delay[VIOLATIONS_TABLE],
        WINDOWS_TABLE: crawl_delay[WINDOWS_TABLE],
        BACKOFF_TABLE: crawl_delay[BACKOFF_TABLE],
        DEAD_LETTERS_TABLE: dead_letters,
    }


def _page_directives(location: str | None) -> PageDirectivesTable | None:
    return PageDirectivesTable(read_page_directives(location)) if location else None


def write_outputs(outputs: dict, out: str, output_format: str) -> None:
    """The tables that grow with the log or the robots history in the chosen format; summary,
    counts, the report's counts, indexing findings, between-captures changes and reused
    signatures as JSON; served and referrals in the chosen format.

    Those that grow are written in parts by the steps that make them; the others stay a few rows
    and are each written whole, as one file."""
    write_table_blocks(
        outputs[VERDICT_BATCHES], FileSystems.join(out, VERDICTS_TABLE), records.VERDICTS, output_format, VERDICTS_TABLE
    )
    for table in GROWING_TABLES:
        write_table(outputs[table], FileSystems.join(out, table), records.TABLES[table], output_format, table)
    small = {table: outputs[table] for table in (*WHOLE_TABLES, *DOCUMENTS)}
    small[REPORT_COUNTS_TABLE] = small[REPORT_COUNTS_TABLE] | "ReportCountsAsJson" >> beam.Map(
        lambda counts: counts.to_json()
    )
    parquet = WHOLE_TABLES_IN_FORMAT if output_format == "parquet" else ()
    small | "WriteSmallTables" >> WriteWholeTables(out, WHOLE_TABLES, documents=DOCUMENTS, parquet=parquet)


def write_stream_outputs(outputs: dict, settings: OutputSettings, dns_record: str | None = None) -> None:
    """Each table to BigQuery (`--bigquery-dataset`) or, one file per bundle, under `--out`; the
    DNS answers of a live run, when recorded, to `dns_record`."""
    outputs = {**outputs, VERDICTS_TABLE: outputs[VERDICT_BATCHES] | "UnbatchVerdicts" >> beam.FlatMap(verdict_rows)}
    for table in RECORD_TABLES:
        title = table.title().replace("_", "")
        if settings.bigquery_dataset:
            sink = WriteBigQueryTable(f"{settings.bigquery_dataset}.{table}", records.TABLES[table], settings.bigquery_method)
        else:
            sink = WriteBundleFiles(FileSystems.join(settings.out, table), records.TABLES[table], settings.format)
        outputs[table] | f"Write{title}" >> sink
    if DNS_ANSWERS_TABLE in outputs:
        # A snapshot file set, readable by a later `--dns snapshot:FOLDER`, whatever the sink.
        outputs[DNS_ANSWERS_TABLE] | "WriteDnsAnswers" >> WriteBundleFiles(dns_record, records.DNS_ANSWERS, "jsonl")


def verdict_rows(verdicts: list[dict] | pa.Table) -> list[dict]:
    """The verdicts of a stream's batch, or of a batch graph's block (its tables can be written as
    a stream writes them)."""
    return verdict_records(verdicts) if isinstance(verdicts, pa.Table) else verdicts


def streaming_pipeline(settings: RunSettings, options: PipelineOptions) -> beam.Pipeline:
    """The audit with the sinks of a stream (one file per bundle, or BigQuery), not yet run."""
    pipeline = beam.Pipeline(options=options)
    write_stream_outputs(build(pipeline, settings), settings.outputs, settings.identity.dns_record)
    return pipeline


def run_streaming(settings: RunSettings, options: PipelineOptions) -> None:
    """Runs until cancelled (or `--watch-for` ends the folder source); no closing report."""
    streaming_pipeline(settings, options).run().wait_until_finish()


def piece_bytes(settings: RunSettings) -> int | None:
    """How large a piece of a plain log file is read on its own (`read_logs.file_pieces`); None:
    every file whole, when some file's format keeps its directives inside an envelope."""
    used = {settings.inputs.log_format, *(settings.inputs.file_formats or {}).values()}
    return PIECE_BYTES if all(reads_in_pieces(name) for name in used) else None


def log_files(pattern: str) -> list:
    """The files --logs matches; no match, or a folder among them, is refused before any work."""
    matched = FileSystems.match([pattern])[0].metadata_list
    if not matched:
        raise ValueError(f"no log files match {pattern!r}")
    folders = [m.path for m in matched if not is_url(m.path) and os.path.isdir(m.path)]
    if folders:
        raise ValueError(f"--logs matches the folder {folders[0]}; give a glob of files, e.g. {folders[0]}/*.log")
    return matched


@dataclass(frozen=True)
class Unreadable:
    """A log file whose first lines could not be read (a `.gz` that is not gzip): no format is
    chosen for it, and the audit's read of it makes it a dead letter while the other files run."""

    reason: str

    def __str__(self) -> str:
        return f"none, the file cannot be read ({self.reason}): its dead letter says so"


def detect_file_formats(log_files) -> dict[str, Candidate | Unreadable]:
    """path -> the format `detect.chosen_format` takes on the file's first lines (`--log-format auto`),
    else the layout inferred from them (`inference.InferredFormat`) when that is taken, or Unreadable
    when not one line could be read; an empty file gets none. A file that neither reads is refused
    with the best candidates."""
    detected: dict[str, Candidate | Unreadable] = {}
    for found in log_files:
        lines, stopped = first_lines(found.path, SAMPLE_LINES)
        if stopped is not None and not lines:
            detected[found.path] = Unreadable(printable(stopped))
            continue
        ranked = rank_formats(lines)
        if not ranked[0].sample:
            continue  # nothing to read, nothing to audit
        best, inferred = chosen_format(ranked), None
        if best is None:
            inferred = infer_layout(lines)
            best = inferred_choice(inferred, ranked)
        if best is None:
            candidates = ", ".join(str(candidate) for candidate in ranked[:3])
            guess = "" if inferred is None else (
                f"; the layout inferred from them reads {inferred.read} of {inferred.sample}: {inferred.option()}")
            raise ValueError(
                f"no log format reads enough of the first lines of {printable(found.path)}; best candidates: "
                f"{candidates}{guess}; {PASTE_YOUR_FORMAT} (JSON lines: --log-format jsonl --field-map)"
            )
        detected[found.path] = best
    return detected


def table_formats(output_format: str) -> dict[str, str]:
    """Every table of a batch run with the format `write_outputs` writes it in."""
    parts = {table: output_format for table in (VERDICTS_TABLE, *GROWING_TABLES)}
    whole = {table: output_format if table in WHOLE_TABLES_IN_FORMAT else "jsonl" for table in WHOLE_TABLES}
    return {**parts, **whole, **{document: "json" for document in DOCUMENTS}}
