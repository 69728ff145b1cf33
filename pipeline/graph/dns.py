"""Reverse DNS in the audit graph: the resolver the `--dns` options ask for and the resolve-once step.

`--dns` picks where answers come from (see `pipeline.evidence.resolvers`): `live` asks a DNS server,
`snapshot:FILE` replays answers recorded earlier, `off` leaves identity to the published ranges.
`--dns-record FILE` writes the answers a run used, as a snapshot for a later offline re-run.

In batch the addresses are resolved once per run whatever the number of log lines naming them, a
batch at a time with bounded concurrency, and join the audit as a side input. In streaming each
worker asks as lines arrive and remembers answers for `--dns-ttl` (`pipeline.graph.line_audit`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.metrics import Metrics

from matcher.agents import Registry
from matcher.reverse_dns import DEFINITE_DNS_ERRORS
from pipeline.evidence.resolvers import Resolver, answer_to_json, build_resolver
from pipeline.graph.settings import IdentitySettings

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


@dataclass(frozen=True)
class DnsSettings:
    """Reverse DNS as the options ask for it."""

    resolver: Resolver
    record: str | None
    ttl: float
    cache_size: int


def dns_settings(identity: IdentitySettings, registry: Registry) -> DnsSettings | None:
    """The resolver and its settings; None for `--dns off`. A snapshot file is read, and a live
    server checked, here at launch."""
    resolver = build_resolver(
        identity.dns,
        registry,
        server=identity.dns_server,
        timeout=identity.dns_timeout,
        retries=identity.dns_retries,
        concurrency=identity.dns_concurrency,
    )
    if resolver is None:
        if identity.dns_record:
            raise ValueError("--dns-record needs --dns live or --dns snapshot:FILE")
        return None
    return DnsSettings(resolver, identity.dns_record, identity.dns_ttl, identity.dns_cache_size)


def dns_lookups(identity: IdentitySettings, registry: Registry) -> ResolveDistinct | None:
    """The resolve-once step the batch audit graph needs; None for `--dns off`."""
    settings = dns_settings(identity, registry)
    return None if settings is None else ResolveDistinct(settings.resolver, settings.record)
