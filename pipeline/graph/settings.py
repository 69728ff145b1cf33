"""The options of `crawl-audit run`, read once at launch into typed, frozen settings.

Durations become timedeltas and JSON flags dicts here, and every problem is listed before any
work starts, so the graph never parses a flag again and a worker never meets a malformed one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from matcher.clientip import TrustedProxies, trusted_proxies
from pipeline.graph.options import CrawlAuditOptions, duration


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


@dataclass(frozen=True)
class RunSettings:
    """What a run was asked to do; built by `read_settings`."""

    streaming: bool
    logs: str | None
    robots: str | None
    out: str | None
    output_format: str
    overwrite: bool
    log_format: str
    default_host: str | None
    field_map: dict | None
    registry: str | None
    ranges: str | None
    page_directives: str | None
    cache_grace: timedelta
    error_limit: timedelta
    window: timedelta
    allowed_lateness: timedelta
    poll_interval: timedelta
    robots_refresh: timedelta
    watch_for: timedelta | None
    pubsub_subscription: str | None
    pubsub_timestamp_attribute: str | None
    kafka_bootstrap: str | None
    kafka_topic: str | None
    kafka_config: dict
    kafka_expansion_service: str | None
    identity: IdentitySettings
    progress: str


def read_settings(options: PipelineOptions) -> tuple[RunSettings | None, list[str]]:
    """The settings and every problem found; settings are None when a value cannot be read."""
    flags = options.view_as(CrawlAuditOptions)
    streaming = bool(options.view_as(StandardOptions).streaming)
    problems = _streaming_problems(flags) if streaming else [
        f"--{name} is required" for name in ("logs", "robots", "out") if not getattr(flags, name)
    ]
    spans = {}
    for name in ("cache_grace", "error_limit", "window", "allowed_lateness", "poll_interval", "robots_refresh"):
        spans[name] = _duration(name, getattr(flags, name), problems)
    spans["watch_for"] = None if flags.watch_for is None else _duration("watch_for", flags.watch_for, problems)
    if not problems and spans["window"] <= timedelta(0):
        problems.append("--window must be longer than 0")
    field_map = _json_object(flags.field_map, "--field-map", problems)
    kafka_config = _json_object(flags.kafka_config, "--kafka-config", problems)
    identity = _identity(flags, problems)
    if any(value is False for value in (*spans.values(), field_map, kafka_config, identity)):
        return None, problems
    settings = RunSettings(
        streaming=streaming,
        logs=flags.logs,
        robots=flags.robots,
        out=flags.out,
        output_format=flags.output_format,
        overwrite=flags.overwrite,
        log_format=flags.log_format,
        default_host=flags.default_host,
        field_map=field_map,
        registry=flags.registry,
        ranges=flags.ranges,
        page_directives=flags.page_directives,
        pubsub_subscription=flags.pubsub_subscription,
        pubsub_timestamp_attribute=flags.pubsub_timestamp_attribute,
        kafka_bootstrap=flags.kafka_bootstrap,
        kafka_topic=flags.kafka_topic,
        kafka_config=kafka_config or {},
        kafka_expansion_service=flags.kafka_expansion_service,
        identity=identity,
        progress=flags.progress,
        **spans,
    )
    return settings, problems


def _streaming_problems(flags: CrawlAuditOptions) -> list[str]:
    problems = [] if flags.robots else ["--robots is required"]
    sources = [bool(flags.logs), bool(flags.pubsub_subscription), bool(flags.kafka_bootstrap)]
    if sum(sources) != 1:
        problems.append("give one source: --logs (a folder glob), --pubsub-subscription or --kafka-bootstrap")
    if flags.kafka_bootstrap and not flags.kafka_topic:
        problems.append("--kafka-topic is required with --kafka-bootstrap")
    if bool(flags.out) == bool(flags.bigquery_dataset):
        problems.append("give one sink: --out or --bigquery-dataset")
    return problems


def _identity(flags: CrawlAuditOptions, problems: list[str]) -> IdentitySettings | bool:
    """The identity settings, or False with each problem noted."""
    before = len(problems)
    numbers = {
        "dns_timeout": _number("dns_timeout", flags.dns_timeout, float, 0.001, problems),
        "dns_retries": _number("dns_retries", flags.dns_retries, int, 0, problems),
        "dns_concurrency": _number("dns_concurrency", flags.dns_concurrency, int, 1, problems),
        "dns_ttl": _number("dns_ttl", flags.dns_ttl, float, 0, problems),
        "dns_cache_size": _number("dns_cache_size", flags.dns_cache_size, int, 1, problems),
    }
    specs = (flags.trusted_proxies or "").split(",")
    try:
        proxies = trusted_proxies(spec for spec in specs if spec.strip())
    except ValueError as error:
        problems.append(f"--trusted-proxies: {error}")
    if len(problems) > before:
        return False
    return IdentitySettings(
        dns=flags.dns, dns_server=flags.dns_server, dns_record=flags.dns_record, proxies=proxies, **numbers
    )


def _number(name: str, text: str, kind: type, minimum: float, problems: list[str]) -> float | int | None:
    """The number, or None with the problem noted."""
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = None
    if value is None or value < minimum:
        problems.append(f"--{name.replace('_', '-')}: expected a number of at least {minimum}, got {text!r}")
        return None
    return value


def _duration(name: str, text: str, problems: list[str]) -> timedelta | bool:
    """The duration, or False with the problem noted."""
    try:
        return duration(text)
    except ValueError as error:
        problems.append(f"--{name.replace('_', '-')}: {error}")
        return False


def _json_object(text: str | None, flag: str, problems: list[str]) -> dict | None | bool:
    """The JSON object of a flag, None when not given, or False with the problem noted."""
    if not text:
        return None
    try:
        mapping = json.loads(text)
    except ValueError as error:
        problems.append(f"{flag} is not JSON: {error}")
        return False
    if not isinstance(mapping, dict):
        problems.append(f"{flag} must be a JSON object")
        return False
    return mapping
