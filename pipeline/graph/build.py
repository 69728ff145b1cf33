"""`build` wires the audit graph; `run` adds the writers, runs it and prints the report.

The registry, the range snapshots and the robots table are read before the graph
is built: they are small, a mistake in them should stop the run with one clear
message, and shipping them inside the transforms means workers need no access
to the launching machine's files. A streaming run with `--robots-refresh` re-reads
the robots table on the workers, so there it must be on storage they can reach.

Batch and streaming share the per-line audit and the crawl-delay transform; they
differ in the source, in how the robots table reaches the audit, and in the sinks.
"""
from __future__ import annotations

import os
import sys
import tempfile
from contextlib import AbstractContextManager, nullcontext

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, PortableOptions, StandardOptions

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher import records
from matcher.directives import PageDirectivesTable
from matcher.records import (
    BETWEEN_CAPTURES_TABLE,
    COUNTS_TABLE,
    DEAD_LETTERS_TABLE,
    DNS_ANSWERS_TABLE,
    INDEXING_FINDINGS_TABLE,
    REPORT_COUNTS_TABLE,
    ROBOTS_VERSIONS_TABLE,
    SUMMARY_TABLE,
    VERDICTS_TABLE,
    VIOLATIONS_TABLE,
    WINDOWS_TABLE,
)
from pipeline.report import html as html_report
from pipeline.local import workers as local_workers
from pipeline.graph import progress
from pipeline.report import text as report
from pipeline.graph import robots_refresh
from pipeline.tables import run_folder
from pipeline.graph import stream_sources
from pipeline.graph.between_captures import BetweenCaptures
from pipeline.graph.crawl_delay import CrawlDelayAudit
from pipeline.graph.dns import DnsSettings, ResolveDistinct, dns_settings
from pipeline.graph.indexing import IndexingFindings
from pipeline.graph.line_audit import VERDICT_BATCHES, AuditLogLines, ResolveLogClients
from pipeline.graph.options import LOCAL_RUNNERS, CrawlAuditOptions
from pipeline.evidence.page_directives import read_page_directives
from matcher.line_auditor import LineAuditor, robots_by_host
from pipeline.evidence.confined import is_url
from pipeline.evidence.resolvers import LiveResolver
from pipeline.graph.read_logs import ReadLogLines
from pipeline.evidence.robots_table import read_robots_table
from pipeline.tables.run_folder import RunFolder
from pipeline.graph.settings import RunSettings, read_settings
from pipeline.graph.sinks import WriteBigQueryTable, WriteBundleFiles, WriteWholeTables, write_batched_table, write_table
from pipeline.graph.summaries import CountForReport, CountOutcomes, Summarize

# The record tables every run writes, verdicts first (a batch run adds the summary, the counts, the indexing findings,
# the between-captures changes, the robots versions and the report's counts).
RECORD_TABLES = (VERDICTS_TABLE, DEAD_LETTERS_TABLE, VIOLATIONS_TABLE, WINDOWS_TABLE)
# A batch run's one-object tables, each a JSON file of its own.
DOCUMENTS = (COUNTS_TABLE, REPORT_COUNTS_TABLE)
# Runners on which a PeriodicImpulse side input never becomes ready, so a refreshed robots table
# would hold the audit back forever (measured with Beam 2.77).
_NO_REFRESH_RUNNERS = LOCAL_RUNNERS | {"BundleBasedDirectRunner"}


def build(
    pipeline: beam.Pipeline, options: PipelineOptions, settings: RunSettings | None = None, spill: str | None = None
) -> dict:
    """The audit graph on `pipeline`; returns its output PCollections by table name.

    `settings` are read from `options` when not given; a value that cannot be read stops here.
    `spill`, a folder on this machine, is where a local batch run groups its crawl-delay requests
    (see `pipeline.graph.crawl_delay`); without it the runner groups them.
    """
    if settings is None:
        settings, problems = read_settings(options)
        if settings is None:
            raise ValueError("; ".join(problems))
    auditor = line_auditor(settings)
    # A range file that cannot be used changes verdicts, so the run says so before it starts.
    for problem in auditor.ranges.problems:
        print(f"crawl-audit: ranges: {problem}", file=sys.stderr)
    dns = dns_settings(settings.identity, auditor.registry)
    if settings.streaming:
        if dns is not None and dns.record and not isinstance(dns.resolver, LiveResolver):
            raise ValueError("--dns-record in streaming records live answers: it needs --dns live")
        return _build_streaming(pipeline, settings, auditor, dns)
    batches = pipeline | "ReadLogLines" >> ReadLogLines(settings.logs)
    robots = pipeline | "ReadRobotsTable" >> beam.Create([robots_by_host(read_robots_table(settings.robots))])
    dns_answers = None
    if dns is not None:
        lookups = ResolveDistinct(dns.resolver, dns.record)
        dns_answers = pipeline | "ResolveLogClients" >> ResolveLogClients(settings.logs, auditor, lookups)
    outputs = batches | "AuditLogLines" >> AuditLogLines(auditor, robots, dns_answers)
    verdict_batches = outputs[VERDICT_BATCHES]
    outputs[SUMMARY_TABLE] = verdict_batches | "Summarize" >> Summarize()
    outputs[COUNTS_TABLE] = outputs | "CountOutcomes" >> CountOutcomes()
    outputs[REPORT_COUNTS_TABLE] = verdict_batches | "CountForReport" >> CountForReport()
    outputs[INDEXING_FINDINGS_TABLE] = verdict_batches | "IndexingFindings" >> IndexingFindings()
    outputs[BETWEEN_CAPTURES_TABLE] = verdict_batches | "BetweenCaptures" >> BetweenCaptures()
    # The report's robots.txt section draws the history the verdicts were judged by.
    outputs[ROBOTS_VERSIONS_TABLE] = robots | "RecordRobotsVersions" >> beam.FlatMap(
        lambda table: map(records.robots_version_record, table.versions())
    )
    return _with_crawl_delay(outputs, settings, bounded=True, spill=spill)


def line_auditor(settings: RunSettings) -> LineAuditor:
    """The per-line audit a run's settings ask for, its registry, ranges and pages read."""
    registry = load_registry(settings.registry)
    return LineAuditor(
        log_format=settings.log_format,
        default_host=settings.default_host,
        field_map=settings.field_map,
        registry=registry,
        ranges=load_ranges(settings.ranges, registry),
        error_limit=settings.error_limit,
        grace=settings.cache_grace,
        proxies=settings.identity.proxies,
        pages=_page_directives(settings.page_directives),
    )


def _build_streaming(
    pipeline: beam.Pipeline, settings: RunSettings, auditor: LineAuditor, dns: DnsSettings | None
) -> dict:
    batches = pipeline | "ReadLogStream" >> _log_source(settings)
    refresh = settings.robots_refresh
    if refresh:
        robots = pipeline | "RefreshRobotsTable" >> robots_refresh.RefreshRobotsTable(settings.robots, refresh)
    else:
        robots = pipeline | "ReadRobotsTable" >> beam.Create([robots_refresh.robots_snapshot(settings.robots)])
    outputs = batches | "AuditLogLines" >> AuditLogLines(auditor, robots, dns)
    if dns is None or not dns.record:
        outputs.pop(DNS_ANSWERS_TABLE, None)
    return _with_crawl_delay(outputs, settings, bounded=False)


def _log_source(settings: RunSettings) -> beam.PTransform:
    if settings.pubsub_subscription:
        return stream_sources.ReadPubSubLines(settings.pubsub_subscription, settings.pubsub_timestamp_attribute)
    if settings.kafka_bootstrap:
        return stream_sources.ReadKafkaLines(
            settings.kafka_bootstrap,
            settings.kafka_topic,
            settings.kafka_config,
            settings.kafka_expansion_service,
        )
    poll = stream_sources.LogFolderPoll(settings.log_format, settings.default_host, settings.field_map)
    return stream_sources.WatchLogFolder(settings.logs, poll, settings.poll_interval, settings.watch_for)


def _with_crawl_delay(outputs: dict, settings: RunSettings, bounded: bool, spill: str | None = None) -> dict:
    """Adds the crawl-delay tables; its late requests join the dead letters."""
    crawl_delay = outputs[VERDICT_BATCHES] | "CrawlDelayAudit" >> CrawlDelayAudit(
        settings.window, settings.allowed_lateness, bounded, spill
    )
    dead_letters = (outputs[DEAD_LETTERS_TABLE], crawl_delay[DEAD_LETTERS_TABLE]) | "AllDeadLetters" >> beam.Flatten()
    return {
        **outputs,
        VIOLATIONS_TABLE: crawl_delay[VIOLATIONS_TABLE],
        WINDOWS_TABLE: crawl_delay[WINDOWS_TABLE],
        DEAD_LETTERS_TABLE: dead_letters,
    }


def _page_directives(location: str | None) -> PageDirectivesTable | None:
    return PageDirectivesTable(read_page_directives(location)) if location else None


def write_outputs(outputs: dict, out: str, output_format: str) -> None:
    """Verdicts, dead letters, the crawl-delay tables and the robots history in the chosen format;
    summary, counts, the report's counts, indexing findings and between-captures changes as JSON.

    Verdicts, dead letters and violations grow with the log and are written in parts as they are
    made; the other tables stay small and are each written whole, as one file."""
    write_batched_table(
        outputs[VERDICT_BATCHES], FileSystems.join(out, VERDICTS_TABLE), records.VERDICTS, output_format, VERDICTS_TABLE
    )
    for table in (DEAD_LETTERS_TABLE, VIOLATIONS_TABLE):
        write_table(outputs[table], FileSystems.join(out, table), records.TABLES[table], output_format, table)
    formats = _whole_table_formats(output_format)
    small = {table: outputs[table] for table in (*formats, *DOCUMENTS)}
    small[REPORT_COUNTS_TABLE] = small[REPORT_COUNTS_TABLE] | "ReportCountsAsJson" >> beam.Map(
        lambda counts: counts.to_json()
    )
    small | "WriteSmallTables" >> WriteWholeTables(out, formats, documents=DOCUMENTS)


def _whole_table_formats(output_format: str) -> dict[str, str]:
    """The tables written whole, each with its format (the documents aside)."""
    return {
        WINDOWS_TABLE: output_format,
        ROBOTS_VERSIONS_TABLE: output_format,
        SUMMARY_TABLE: "jsonl",
        INDEXING_FINDINGS_TABLE: "jsonl",
        BETWEEN_CAPTURES_TABLE: "jsonl",
    }


def _runs_locally(options: PipelineOptions) -> bool:
    runner = options.view_as(StandardOptions).runner
    embedded = runner == "PortableRunner" and options.view_as(PortableOptions).job_endpoint == "embed"
    return runner in _NO_REFRESH_RUNNERS or embedded


def write_stream_outputs(outputs: dict, settings: CrawlAuditOptions) -> None:
    """Each table to BigQuery (`--bigquery-dataset`) or, one file per bundle, under `--out`."""
    outputs = {**outputs, VERDICTS_TABLE: outputs[VERDICT_BATCHES] | "UnbatchVerdicts" >> beam.FlatMap(iter)}
    for table in RECORD_TABLES:
        title = table.title().replace("_", "")
        if settings.bigquery_dataset:
            sink = WriteBigQueryTable(
                f"{settings.bigquery_dataset}.{table}", records.TABLES[table], settings.bigquery_method
            )
        else:
            sink = WriteBundleFiles(
                FileSystems.join(settings.out, table), records.TABLES[table], settings.output_format
            )
        outputs[table] | f"Write{title}" >> sink
    if DNS_ANSWERS_TABLE in outputs:
        # A snapshot file set, readable by a later `--dns snapshot:FOLDER`, whatever the sink.
        outputs[DNS_ANSWERS_TABLE] | "WriteDnsAnswers" >> WriteBundleFiles(
            settings.dns_record, records.DNS_ANSWERS, "jsonl"
        )


def _log_files(pattern: str) -> list:
    """The files --logs matches; no match, or a folder among them, is refused before any work."""
    matched = FileSystems.match([pattern])[0].metadata_list
    if not matched:
        raise ValueError(f"no log files match {pattern!r}")
    folders = [m.path for m in matched if not is_url(m.path) and os.path.isdir(m.path)]
    if folders:
        raise ValueError(f"--logs matches the folder {folders[0]}; give a glob of files, e.g. {folders[0]}/*.log")
    return matched


def run(argv: list[str]) -> int:
    options = PipelineOptions(argv)
    settings, problems = read_settings(options)
    if problems:
        raise ValueError("; ".join(problems))
    if settings.streaming:
        if settings.robots_refresh and _runs_locally(options):
            raise ValueError(
                "--robots-refresh needs Dataflow or Flink: on the local runners the refreshed table never"
                " reaches the audit; use --robots-refresh 0 (read once at launch)"
            )
        # Runs until cancelled (or `--watch-for` ends the folder source); no closing report.
        with beam.Pipeline(options=options) as pipeline:
            write_stream_outputs(build(pipeline, options, settings), options.view_as(CrawlAuditOptions))
        return 0
    log_files = _log_files(settings.logs)
    in_workers = local_workers.use_both_cores(options, argv, log_files)
    folder = RunFolder.prepare(settings.out, settings.overwrite)
    try:
        log_bytes = sum(match.size_in_bytes for match in log_files)
        with (
            # The fork server imports this module, and with it every step of the graph.
            local_workers.local_runner(in_workers, preload=[__name__]) as runner,
            _spill_folder(options) as spill,
            local_workers.launching(),
            progress.reporting(log_bytes, settings.progress),
            beam.Pipeline(runner=runner, options=options) as pipeline,
        ):
            write_outputs(build(pipeline, options, settings, spill), str(folder.staging), settings.output_format)
        folder.commit(run_folder.manifest(folder.staging, options, log_files, _table_formats(settings.output_format)))
    except BaseException:
        folder.discard()
        raise
    print(report.render(report.load(settings.out)))
    print(f"\nreport: {html_report.write(settings.out)}")
    return 0


def _spill_folder(options: PipelineOptions) -> AbstractContextManager[str | None]:
    """A folder removed after the run, where a local batch run groups its crawl-delay requests;
    None on other runners, whose grouping spills as it needs to."""
    if options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        return tempfile.TemporaryDirectory(prefix="crawl-audit-spill-")
    return nullcontext(None)


def _table_formats(output_format: str) -> dict[str, str]:
    """Every table of a batch run with the format `write_outputs` writes it in."""
    parts = {table: output_format for table in (VERDICTS_TABLE, DEAD_LETTERS_TABLE, VIOLATIONS_TABLE)}
    return {**parts, **_whole_table_formats(output_format), **{document: "json" for document in DOCUMENTS}}
