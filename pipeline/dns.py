"""Reverse DNS in the audit graph: the `--dns` options and the resolve-once step.

`--dns` picks where answers come from (see `pipeline.resolvers`): `live` asks a DNS server,
`snapshot:FILE` replays answers recorded earlier, `off` leaves identity to the published ranges.
`--dns-record FILE` writes the answers a run used, as a snapshot for a later offline re-run.

In batch the addresses are resolved once per run whatever the number of log lines naming them, a
batch at a time with bounded concurrency, and join the audit as a side input. In streaming each
worker asks as lines arrive and remembers answers for `--dns-ttl` (`pipeline.streaming`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import PipelineOptions

from matcher.agents import Registry
from matcher.clientip import TrustedProxies, trusted_proxies
from matcher.reverse_dns import DEFINITE_DNS_ERRORS
from pipeline.resolvers import (
    DEFAULT_CACHE_SIZE,
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_TTL,
    Resolver,
    answer_to_json,
    build_resolver,
)

# Addresses per resolving call: enough to keep every thread busy for several rounds.
_BATCH = 256


class ResolveBatchFn(beam.DoFn):
    """A batch of distinct addresses -> (address, answer), with counters of DNS trouble."""

    def __init__(self, resolver: Resolver):
        self._resolver = resolver
        self.addresses = Metrics.counter(self.__class__, "dns_addresses")
        self.timeouts = Metrics.counter(self.__class__, "dns_timeouts")
        self.errors = Metrics.counter(self.__class__, "dns_errors")

    def process(self, addresses: list[str]):
        # Counted here, not in the resolver's threads: Beam metrics belong to the bundle's thread.
        for answer in self._resolver.resolve_many(addresses):
            self.addresses.inc()
            count_trouble(answer, self.timeouts, self.errors)
            yield answer.ip, answer


def count_trouble(answer, timeouts, errors) -> None:
    """Each lookup of `answer` that timed out, or failed otherwise than by a missing record."""
    for lookup in (answer.ptr, *(lookup for _, lookup in answer.forward)):
        if lookup.error == "timeout":
            timeouts.inc()
        elif lookup.error is not None and lookup.error not in DEFINITE_DNS_ERRORS:
            errors.inc()


class ResolveDistinct(beam.PTransform):
    """Addresses, repeats allowed -> (address, DnsAnswer), each address resolved once per run;
    with `record`, the answers are also written there as a snapshot."""

    def __init__(self, resolver: Resolver, record: str | None = None):
        super().__init__()
        self._resolver = resolver
        self._record = record

    def expand(self, addresses):
        answers = (
            addresses
            | "DistinctAddresses" >> beam.Distinct()
            | "BatchAddresses" >> beam.BatchElements(min_batch_size=_BATCH, max_batch_size=_BATCH)
            | "Resolve" >> beam.ParDo(ResolveBatchFn(self._resolver))
        )
        if self._record:
            (
                answers
                | "EncodeDnsAnswers" >> beam.MapTuple(lambda _, answer: json.dumps(answer_to_json(answer), sort_keys=True))
                | "WriteDnsRecord" >> beam.io.WriteToText(self._record, shard_name_template="")
            )
        return answers


# ------------------------------------------------------------------------------- options


class IdentityOptions(PipelineOptions):
    """How identity is checked: reverse DNS and the client address behind proxies."""

    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        parser.add_argument(
            "--dns", default="off",
            help="reverse DNS for claims no published range proves: off, live, or snapshot:FILE",
        )
        parser.add_argument(
            "--dns-server", dest="dns_server", default=None,
            help="HOST:PORT of the DNS server for --dns live (default: the system resolver)",
        )
        parser.add_argument(
            "--dns-record", dest="dns_record", default=None,
            help="write the DNS answers used to FILE (streaming: as JSON Lines files in the folder FILE), "
            "for a later --dns snapshot:FILE",
        )
        parser.add_argument(
            "--dns-ttl", dest="dns_ttl", default=str(DEFAULT_TTL),
            help="streaming: seconds a worker keeps an answer before asking again (a fault: at most a minute)",
        )
        parser.add_argument(
            "--dns-cache-size", dest="dns_cache_size", default=str(DEFAULT_CACHE_SIZE),
            help="streaming: answers a worker keeps, least recently used forgotten first",
        )
        parser.add_argument(
            "--dns-timeout", dest="dns_timeout", default=str(DEFAULT_TIMEOUT), help="seconds per DNS attempt"
        )
        parser.add_argument(
            "--dns-retries", dest="dns_retries", default=str(DEFAULT_RETRIES),
            help="attempts after a timed-out one; an address never takes more than timeout x (retries+1)",
        )
        parser.add_argument(
            "--dns-concurrency", dest="dns_concurrency", default=str(DEFAULT_CONCURRENCY),
            help="DNS lookups in flight per worker",
        )
        parser.add_argument(
            "--trusted-proxies", dest="trusted_proxies", default=None,
            help="comma-separated networks of your own proxies; the client is then the right-most "
            "X-Forwarded-For address outside them (default: the connecting address)",
        )


@dataclass(frozen=True)
class DnsSettings:
    """Reverse DNS as the options ask for it."""

    resolver: Resolver
    record: str | None
    ttl: float
    cache_size: int


def dns_settings(options: PipelineOptions, registry: Registry) -> DnsSettings | None:
    """The resolver and its settings for these options; None for `--dns off`."""
    settings = options.view_as(IdentityOptions)
    resolver = build_resolver(
        settings.dns,
        registry,
        server=settings.dns_server,
        timeout=_number("--dns-timeout", settings.dns_timeout, float, 0.001),
        retries=_number("--dns-retries", settings.dns_retries, int, 0),
        concurrency=_number("--dns-concurrency", settings.dns_concurrency, int, 1),
    )
    ttl = _number("--dns-ttl", settings.dns_ttl, float, 0)
    cache_size = _number("--dns-cache-size", settings.dns_cache_size, int, 1)
    if resolver is None:
        if settings.dns_record:
            raise ValueError("--dns-record needs --dns live or --dns snapshot:FILE")
        return None
    return DnsSettings(resolver, settings.dns_record, ttl, cache_size)


def dns_lookups(options: PipelineOptions, registry: Registry) -> ResolveDistinct | None:
    """The resolve-once step the batch audit graph needs for these options; None for `--dns off`."""
    settings = dns_settings(options, registry)
    return None if settings is None else ResolveDistinct(settings.resolver, settings.record)


def client_proxies(options: PipelineOptions) -> TrustedProxies:
    """The `--trusted-proxies` networks (none by default: the connecting address is the client)."""
    text = options.view_as(IdentityOptions).trusted_proxies
    try:
        return trusted_proxies(spec for spec in (text or "").split(",") if spec.strip())
    except ValueError as error:
        raise ValueError(f"--trusted-proxies: {error}") from None


def _number(flag: str, text: str, kind: type, minimum: float):
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = None
    if value is None or value < minimum:
        raise ValueError(f"{flag}: expected a number of at least {minimum}, got {text!r}")
    return value

