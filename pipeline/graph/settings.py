"""What a `crawl-audit run` was asked to do, read once at launch into one frozen object.

The command line (`pipeline.cli.parser`) has already turned each flag's text into its value; here
the values are grouped by what they steer, checked against each other, and Beam's own options
read for the runner. Nothing after this reads a flag again, and a worker never meets a malformed
one.
"""
from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from apache_beam.options.pipeline_options import PipelineOptions, PortableOptions, StandardOptions

from matcher.clientip import TrustedProxies
from matcher.ip_ranges import RANGE_WINDOW
from matcher.logformats import AUTO, parser_for
from matcher.logformats.timestamps import time_zone

# The runners Beam's DirectRunner options steer: one process, or local worker processes.
LOCAL_RUNNERS = frozenset({None, "DirectRunner", "SwitchingDirectRunner", "FnApiRunner"})
# Runners on which a PeriodicImpulse side input never becomes ready, so a refreshed robots table
# would hold the audit back forever (Beam 2.77), or that refuse such a side input outright
# (Prism: "Unbounded GlobalWindow Triggered SideInput ... not currently supported", apache/beam#31438).
_NO_REFRESH_RUNNERS = LOCAL_RUNNERS | {"BundleBasedDirectRunner", "PrismRunner"}
# How often a stream writes the change audit's rows so far where the runner can: the local runners
# keep no processing-time clock for a trigger (the FnApiRunner fails on one, Beam 2.77).
CHANGES_EVERY = timedelta(minutes=10)


@dataclass(frozen=True)
class InputSettings:
    """The logs and the tables they are judged against."""

    logs: str | None
    log_format: str
    default_host: str | None
    field_map: Mapping | None
    robots: str | None
    page_directives: str | None
    registry: str | None
    ranges: str | None
    log_timezone: str = "UTC"
    # path -> format, for `auto`: what was detected in each log file at launch (`with_file_formats`)
    file_formats: Mapping[str, str] | None = None
    # path -> field map, for a JSON file whose layout `auto` inferred (`with_file_formats`)
    file_field_maps: Mapping[str, Mapping[str, str]] | None = None
    prior_run: str | None = None


@dataclass(frozen=True)
class IdentitySettings:
    """Reverse DNS and the client behind proxies; the resolver itself is built from these at
    launch, once the registry is loaded (`pipeline.graph.dns.dns_settings`)."""

    dns: str
    dns_server: str | None
    dns_record: str | None
    dns_ttl: float
    dns_cache_size: int
    dns_timeout: float
    dns_retries: int
    dns_concurrency: int
    proxies: TrustedProxies
    truncate_addresses: bool = False
    range_window: int = RANGE_WINDOW


@dataclass(frozen=True)
class HistorySettings:
    """How the robots.txt history is read at a request's time."""

    cache_grace: timedelta
    error_limit: timedelta


@dataclass(frozen=True)
class CrawlDelaySettings:
    window: timedelta
    allowed_lateness: timedelta


@dataclass(frozen=True)
class OutputSettings:
    out: str | None
    format: str
    overwrite: bool
    bigquery_dataset: str | None
    bigquery_method: str
    progress: str
    # run-health checks whose finding ends a batch run with exit 1
    fail_on: frozenset[str] = frozenset()


@dataclass(frozen=True)
class StreamingSettings:
    poll_interval: timedelta
    watch_for: timedelta | None
    robots_refresh: timedelta
    # How often, in processing time, a stream writes the change audit's rows so far (0: never early).
    changes_every: timedelta
    pubsub_subscription: str | None
    pubsub_timestamp_attribute: str | None
    kafka_bootstrap: str | None
    kafka_topic: str | None
    kafka_config: Mapping
    kafka_expansion_service: str | None


@dataclass(frozen=True)
class RunSettings:
    """Everything a run was asked; built by `read_settings`."""

    streaming: bool
    inputs: InputSettings
    identity: IdentitySettings
    history: HistorySettings
    crawl_delay: CrawlDelaySettings
    outputs: OutputSettings
    stream: StreamingSettings
    # Beam's `--runner` as given (None: its default, the local DirectRunner).
    runner: str | None
    # The runner runs on this machine (the DirectRunner, or a portable runner with its job
    # service embedded in this process).
    runs_locally: bool
    # The command line chose how the local runner runs (`--direct_running_mode`, `--direct_num_workers`).
    local_mode_chosen: bool
    local_speedups: bool


def read_settings(args: argparse.Namespace, options: PipelineOptions, beam_args: Sequence[str]) -> RunSettings:
    """The settings of a parsed `run` command line, the flags it hands Beam and the options Beam
    read from them; a ValueError lists every problem found."""
    streaming = args.streaming
    problems = _streaming_problems(args) if streaming else [
        f"--{name} is required" for name in ("logs", "robots", "out") if not getattr(args, name)
    ]
    if args.window <= timedelta(0):
        problems.append("--window must be longer than 0")
    runner = options.view_as(StandardOptions).runner
    embedded = runner == "PortableRunner" and options.view_as(PortableOptions).job_endpoint == "embed"
    runs_locally = runner in _NO_REFRESH_RUNNERS or embedded
    if streaming and args.robots_refresh and runs_locally:
        problems.append(
            "--robots-refresh needs Dataflow or Flink: on the local runners the refreshed table never"
            " reaches the audit; use --robots-refresh 0 (read once at launch)"
        )
    changes_every = args.changes_every
    if changes_every is None:
        changes_every = timedelta(0) if runs_locally else CHANGES_EVERY
    elif streaming and changes_every and runs_locally:
        problems.append(
            "--changes-every needs Dataflow or Flink: the local runners cannot time early rows;"
            " use --changes-every 0 (the change audit written when the input ends)"
        )
    log_format = args.log_format
    if log_format == AUTO and args.field_map:
        log_format = "jsonl"  # a field map names a JSON layout: nothing is left to detect
    try:
        time_zone(args.log_timezone)
    except ValueError as error:
        problems.append(f"--log-timezone: {error}")
    if log_format != AUTO:
        try:
            parser_for(log_format, args.default_host, args.field_map)
        except ValueError as error:
            problems.append(f"--log-format {log_format}: {error}")
    if problems:
        raise ValueError("; ".join(problems))
    return RunSettings(
        streaming=streaming,
        inputs=InputSettings(
            logs=args.logs,
            log_format=log_format,
            default_host=args.default_host,
            field_map=args.field_map,
            log_timezone=args.log_timezone,
            robots=args.robots,
            page_directives=args.page_directives,
            registry=args.registry,
            ranges=args.ranges,
            prior_run=getattr(args, "prior_run", None),
        ),
        identity=IdentitySettings(
            dns=args.dns,
            dns_server=args.dns_server,
            dns_record=args.dns_record,
            dns_ttl=args.dns_ttl,
            dns_cache_size=args.dns_cache_size,
            dns_timeout=args.dns_timeout,
            dns_retries=args.dns_retries,
            dns_concurrency=args.dns_concurrency,
            proxies=args.trusted_proxies,
            truncate_addresses=args.truncate_addresses,
            range_window=args.range_window,
        ),
        history=HistorySettings(cache_grace=args.cache_grace, error_limit=args.error_limit),
        crawl_delay=CrawlDelaySettings(window=args.window, allowed_lateness=args.allowed_lateness),
        outputs=OutputSettings(
            out=args.out,
            format=args.output_format,
            overwrite=args.overwrite,
            bigquery_dataset=args.bigquery_dataset,
            bigquery_method=args.bigquery_method,
            progress=args.progress,
            fail_on=args.fail_on,
        ),
        stream=StreamingSettings(
            poll_interval=args.poll_interval,
            watch_for=args.watch_for,
            robots_refresh=args.robots_refresh,
            changes_every=changes_every,
            pubsub_subscription=args.pubsub_subscription,
            pubsub_timestamp_attribute=args.pubsub_timestamp_attribute,
            kafka_bootstrap=args.kafka_bootstrap,
            kafka_topic=args.kafka_topic,
            kafka_config=args.kafka_config or {},
            kafka_expansion_service=args.kafka_expansion_service,
        ),
        runner=runner,
        runs_locally=runs_locally,
        local_mode_chosen=any(arg.startswith(("--direct_num_workers", "--direct_running_mode")) for arg in beam_args),
        local_speedups=args.local_speedups == "on" and runner in LOCAL_RUNNERS,
    )


def with_file_formats(
    settings: RunSettings, file_formats: Mapping[str, str], file_field_maps: Mapping[str, Mapping[str, str]] | None = None,
) -> RunSettings:
    """`settings` with the formats detected in each log file at launch, and the field maps inferred
    for JSON files no preset reads."""
    return dataclasses.replace(settings, inputs=dataclasses.replace(
        settings.inputs, file_formats=dict(file_formats), file_field_maps=dict(file_field_maps or {})))


def _streaming_problems(args: argparse.Namespace) -> list[str]:
    problems = [] if args.robots else ["--robots is required"]
    sources = [bool(args.logs), bool(args.pubsub_subscription), bool(args.kafka_bootstrap)]
    if sum(sources) != 1:
        problems.append("give one source: --logs (a folder glob), --pubsub-subscription or --kafka-bootstrap")
    if args.kafka_bootstrap and not args.kafka_topic:
        problems.append("--kafka-topic is required with --kafka-bootstrap")
    if bool(args.out) == bool(args.bigquery_dataset):
        problems.append("give one sink: --out or --bigquery-dataset")
    return problems
