"""`build` wires the audit graph; `run` adds the writers, runs it and prints the report.

The registry, the range snapshots and the robots table are read before the graph
is built: they are small, a mistake in them should stop the run with one clear
message, and shipping them inside the transforms means workers need no access
to the launching machine's files.
"""
from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher import records
from pipeline import report
from pipeline.options import CrawlAuditOptions, duration
from pipeline.robots_table import read_robots_table
from pipeline.schema import arrow_schema
from pipeline.auditing import LineAuditor
from pipeline.transforms import DEAD_LETTERS, AuditLogLines, CountOutcomes, ReadLogLines, Summarize


def build(pipeline: beam.Pipeline, options: PipelineOptions) -> dict:
    """The audit graph on `pipeline`; returns its output PCollections by table name."""
    settings = options.view_as(CrawlAuditOptions)
    registry = load_registry(settings.registry)
    ranges = load_ranges(settings.ranges, registry)
    versions = read_robots_table(settings.robots)
    auditor = LineAuditor(
        settings.log_format,
        settings.default_host,
        _field_map(settings.field_map),
        registry,
        ranges,
        duration(settings.error_limit),
        duration(settings.cache_grace),
    )
    batches = pipeline | "ReadLogLines" >> ReadLogLines(settings.logs)
    robots = pipeline | "ReadRobotsTable" >> beam.Create(versions)
    outputs = {"batches": batches, "robots": robots} | "AuditLogLines" >> AuditLogLines(auditor)
    outputs["summary"] = outputs["verdicts"] | "Summarize" >> Summarize()
    outputs["counts"] = outputs | "CountOutcomes" >> CountOutcomes()
    return outputs


def _field_map(text: str | None) -> dict | None:
    if not text:
        return None
    mapping = json.loads(text)
    if not isinstance(mapping, dict):
        raise ValueError("--field-map must be a JSON object: our field -> source field path")
    return mapping


def write_outputs(outputs: dict, out: str, output_format: str) -> None:
    """Verdicts and dead letters in the chosen format; summary and counts as JSON."""
    for table in ("verdicts", DEAD_LETTERS):
        _write_table(outputs[table], FileSystems.join(out, table), records.TABLES[table], output_format, table)
    _write_table(outputs["summary"], FileSystems.join(out, "summary"), records.SUMMARY, "jsonl", "summary")
    (
        outputs["counts"]
        | "EncodeCounts" >> beam.Map(json.dumps, sort_keys=True)
        | "WriteCounts" >> beam.io.WriteToText(FileSystems.join(out, "counts"), ".json", shard_name_template="")
    )


def _write_table(pcoll, folder: str, columns, output_format: str, label: str) -> None:
    title = label.title().replace("_", "")
    prefix = FileSystems.join(folder, "part")
    if output_format == "parquet":
        (
            pcoll
            | f"Shape{title}" >> beam.Map(records.shaped, columns)
            | f"Write{title}" >> beam.io.WriteToParquet(
                prefix, arrow_schema(columns), codec="snappy", file_name_suffix=".parquet"
            )
        )
    else:
        (
            pcoll
            | f"Encode{title}" >> beam.Map(lambda r: json.dumps(records.to_json_ready(r, columns), ensure_ascii=False))
            | f"Write{title}" >> beam.io.WriteToText(prefix, ".jsonl")
        )


def run(argv: list[str]) -> int:
    options = PipelineOptions(argv)
    settings = options.view_as(CrawlAuditOptions)
    problems = settings.validate_run()
    if problems:
        raise ValueError("; ".join(problems))
    if not FileSystems.match([settings.logs])[0].metadata_list:
        raise ValueError(f"no log files match {settings.logs!r}")
    with beam.Pipeline(options=options) as pipeline:
        write_outputs(build(pipeline, options), settings.out, settings.output_format)
    print(report.render(report.load(settings.out)))
    return 0
