"""Pipeline options of `crawl-audit run`; every other flag goes to Beam.

No option is `required=True`: Beam parses every registered options class for any
pipeline, so a required flag here would break unrelated pipelines. `pipeline.graph.settings`
checks what a run needs instead, and reads each value once.
"""
from __future__ import annotations

import re
from datetime import timedelta

from apache_beam.options.pipeline_options import PipelineOptions

from pipeline.graph import progress
from matcher.logformats import FORMATS
from pipeline.evidence.resolvers import (
    DEFAULT_CACHE_SIZE,
    DEFAULT_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_TTL,
)

# The runners Beam's DirectRunner options steer: one process, or local worker processes.
LOCAL_RUNNERS = frozenset({None, "DirectRunner", "SwitchingDirectRunner", "FnApiRunner"})
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 3600}


def duration(text: str) -> timedelta:
    """`24h`, `90m`, `30d`, `45s`; a bare number is hours."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (try 24h, 90m, 30d)")
    try:
        return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    except OverflowError:
        raise ValueError(f"duration too long: {text!r}") from None


class CrawlAuditOptions(PipelineOptions):
    """Every flag of `crawl-audit run`, the reverse DNS and proxy ones included."""

    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        parser.add_argument("--logs", help="glob of access-log files (.gz and .bz2 read as they are)")
        parser.add_argument("--log-format", dest="log_format", default="combined", choices=FORMATS)
        parser.add_argument(
            "--default-host", dest="default_host", default=None, help="host for log lines that carry none"
        )
        parser.add_argument(
            "--field-map", dest="field_map", default=None,
            help='for --log-format jsonl (or to extend a preset): JSON object, our field -> source path, '
            'e.g. {"ts": "time", "client_ip": "remote.ip", "path": "uri", "user_agent": "ua"}',
        )
        parser.add_argument("--robots", help="robots history: a JSON Lines table or a captures folder")
        parser.add_argument(
            "--ranges", default=None, help="folder of published IP-range snapshots (default: config/ranges)"
        )
        parser.add_argument("--registry", default=None, help="crawler registry YAML (default: config/crawlers.yaml)")
        parser.add_argument(
            "--page-directives", dest="page_directives", default=None,
            help="page-directives table (JSON Lines: host, path, effective_from, x_robots_tag, meta_robots)",
        )
        parser.add_argument("--out", help="output folder, one subfolder per table")
        parser.add_argument("--format", dest="output_format", default="jsonl", choices=["jsonl", "parquet"])
        parser.add_argument(
            "--overwrite", action="store_true", default=False,
            help="batch: replace the complete run already in --out (nothing else is ever removed)",
        )
        parser.add_argument(
            "--cache-grace", dest="cache_grace", default="24h",
            help="how long a crawler may keep using a cached robots.txt (0 disables)",
        )
        parser.add_argument(
            "--error-limit", dest="error_limit", default="30d",
            help="how long a 5xx/unreachable robots.txt disallows before the last good version applies",
        )

        parser.add_argument(
            "--progress", default="auto", choices=progress.MODES,
            help="batch, local runner: a progress line on stderr (auto: only when stderr is a terminal)",
        )
        parser.add_argument("--window", default="1h", help="crawl-delay aggregates: window size (epoch-aligned)")
        parser.add_argument(
            "--allowed-lateness", dest="allowed_lateness", default="15m",
            help="streaming: how long after the watermark passes a window its requests may still arrive; "
            "later ones go to dead_letters (late-beyond-allowed-lateness)",
        )
        streaming = parser.add_argument_group("streaming (with --streaming)")
        streaming.add_argument(
            "--poll-interval", dest="poll_interval", default="30s", help="how often the --logs folder is listed"
        )
        streaming.add_argument(
            "--watch-for", dest="watch_for", default=None, help="stop watching the --logs folder after this long"
        )
        streaming.add_argument(
            "--robots-refresh", dest="robots_refresh", default="10m",
            help="re-read --robots this often (0: read once at launch)",
        )
        streaming.add_argument(
            "--pubsub-subscription", dest="pubsub_subscription", help="read log lines from this subscription"
        )
        streaming.add_argument(
            "--pubsub-timestamp-attribute", dest="pubsub_timestamp_attribute",
            help="message attribute holding the log time (RFC 3339 or epoch millis); default: publish time",
        )
        streaming.add_argument("--kafka-bootstrap", dest="kafka_bootstrap", help="read log lines from Kafka")
        streaming.add_argument("--kafka-topic", dest="kafka_topic")
        streaming.add_argument(
            "--kafka-config", dest="kafka_config", default=None, help="JSON object of extra consumer properties"
        )
        streaming.add_argument(
            "--kafka-expansion-service", dest="kafka_expansion_service", default=None,
            help="host:port of a Beam Java expansion service (default: start one, needs Java)",
        )
        streaming.add_argument(
            "--bigquery-dataset", dest="bigquery_dataset", help="write the tables to PROJECT:DATASET instead of --out"
        )
        streaming.add_argument(
            "--bigquery-method", dest="bigquery_method", default="STORAGE_WRITE_API",
            choices=["STORAGE_WRITE_API", "STREAMING_INSERTS", "FILE_LOADS"],
        )
        identity = parser.add_argument_group("identity: reverse DNS and proxies")
        identity.add_argument(
            "--dns", default="off",
            help="reverse DNS for claims no published range proves: off, live, or snapshot:FILE",
        )
        identity.add_argument(
            "--dns-server", dest="dns_server", default=None,
            help="HOST:PORT of the DNS server for --dns live (default: the system resolver)",
        )
        identity.add_argument(
            "--dns-record", dest="dns_record", default=None,
            help="write the DNS answers used to FILE (streaming: as JSON Lines files in the folder FILE), "
            "for a later --dns snapshot:FILE",
        )
        identity.add_argument(
            "--dns-ttl", dest="dns_ttl", default=str(DEFAULT_TTL),
            help="streaming: seconds a worker keeps an answer before asking again (a fault: at most a minute)",
        )
        identity.add_argument(
            "--dns-cache-size", dest="dns_cache_size", default=str(DEFAULT_CACHE_SIZE),
            help="streaming: answers a worker keeps, least recently used forgotten first",
        )
        identity.add_argument(
            "--dns-timeout", dest="dns_timeout", default=str(DEFAULT_TIMEOUT), help="seconds per DNS attempt"
        )
        identity.add_argument(
            "--dns-retries", dest="dns_retries", default=str(DEFAULT_RETRIES),
            help="attempts after a timed-out one; an address never takes more than timeout x (retries+1)",
        )
        identity.add_argument(
            "--dns-concurrency", dest="dns_concurrency", default=str(DEFAULT_CONCURRENCY),
            help="DNS lookups in flight per worker",
        )
        identity.add_argument(
            "--trusted-proxies", dest="trusted_proxies", default=None,
            help="comma-separated networks of your own proxies; the client is then the right-most "
            "X-Forwarded-For address outside them (default: the connecting address)",
        )
