"""Pipeline options of `crawl-audit run`; every other flag goes to Beam.

No option is `required=True`: Beam parses every registered options class for any
pipeline, so a required flag here would break unrelated pipelines. `validate_run`
checks what a run needs instead.
"""
from __future__ import annotations

import re
from datetime import timedelta

from apache_beam.options.pipeline_options import PipelineOptions

from pipeline.logformats import FORMATS

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 3600}


def duration(text: str) -> timedelta:
    """`24h`, `90m`, `30d`, `45s`; a bare number is hours."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (try 24h, 90m, 30d)")
    return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])


class CrawlAuditOptions(PipelineOptions):
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
        parser.add_argument("--dns", default="off", choices=["off"], help="identity by DNS (off: ranges only)")
        parser.add_argument("--out", help="output folder, one subfolder per table")
        parser.add_argument("--format", dest="output_format", default="jsonl", choices=["jsonl", "parquet"])
        parser.add_argument(
            "--cache-grace", dest="cache_grace", default="24h",
            help="how long a crawler may keep using a cached robots.txt (0 disables)",
        )
        parser.add_argument(
            "--error-limit", dest="error_limit", default="30d",
            help="how long a 5xx/unreachable robots.txt disallows before the last good version applies",
        )

    def validate_run(self) -> list[str]:
        """What is missing or malformed for a run, as messages."""
        problems = [f"--{name} is required" for name in ("logs", "robots", "out") if not getattr(self, name)]
        for flag, value in (("--cache-grace", self.cache_grace), ("--error-limit", self.error_limit)):
            try:
                duration(value)
            except ValueError as error:
                problems.append(f"{flag}: {error}")
        return problems
