"""Every command of `crawl-audit` and every flag it takes, in one parser.

Each command names its handler (`handler`, in the module of its command group); `main` calls it.
`run` takes the audit's own flags here and hands every flag it does not know to Apache Beam.
A mistake in any flag is one line, `crawl-audit: ...`, exit 2.
"""
from __future__ import annotations

import argparse
import os
from typing import NoReturn

from matcher import records
from matcher.clientip import NO_PROXIES
from matcher.health import CHECKS
from matcher.ip_ranges import RANGE_WINDOW
from matcher.logformats import AUTO, FORMATS
from pipeline.cli import arguments, history, identity, report, robots_file, run, schema, whatif
from pipeline.cli.errors import UsageError
from pipeline.evidence import history_capture, ranges_update, resolvers, wayback
from pipeline.graph import progress
from pipeline.tables.run_folder import crawl_audit_version

PROGRAM = "crawl-audit"
# Sets the default of `run --local-speedups`, e.g. to run a test suite once without them.
LOCAL_SPEEDUPS_VARIABLE = "CRAWL_AUDIT_LOCAL_SPEEDUPS"


class CommandParser(argparse.ArgumentParser):
    """argparse, with a mistake raised as a `UsageError` rather than printed with the usage."""

    def parse_known_args(self, args=None, namespace=None):
        self._refused: list[str] = []
        parsed = super().parse_known_args(args, namespace)
        if self._refused:
            raise UsageError("; ".join(self._refused), self.prog)
        return parsed

    def _get_value(self, action: argparse.Action, text: str):
        # Every flag whose value a converter refuses is listed, not only the first.
        try:
            return super()._get_value(action, text)
        except argparse.ArgumentError as error:
            self._refused.append(str(error).removeprefix("argument "))
            return None

    def error(self, message: str) -> NoReturn:
        raise UsageError(message.removeprefix("argument "), self.prog)


class _DefaultsShown(argparse.HelpFormatter):
    """Help that names each flag's default, where it has one that reads as a word or a number."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        readable = isinstance(action.default, (str, int, float)) and not isinstance(action.default, bool)
        shown = readable and action.default != argparse.SUPPRESS and "default" not in text
        if shown and action.option_strings:
            text += " (default: %(default)s)"
        return text


def parser() -> CommandParser:
    top = CommandParser(prog=PROGRAM, description="Audit crawler access against the robots.txt history of a site.")
    top.add_argument("--version", action="version", version=f"{PROGRAM} {crawl_audit_version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _robots_file_commands(commands)
    _identity_commands(commands)
    _history_commands(commands)
    _run_command(commands)
    _finished_run_commands(commands)
    return top


def _robots_file_commands(commands) -> None:
    check = commands.add_parser("check", help="decide URLs for one crawler against a robots.txt file")
    check.add_argument("robots_file", metavar="ROBOTS_FILE", help="the robots.txt file")
    check.add_argument("agent", metavar="AGENT", help="a product token (Googlebot) or a full User-Agent string")
    check.add_argument("urls", nargs="+", metavar="URL", help="URLs or paths to decide (/a?b=1)")
    check.add_argument("--json", action="store_true", help="one JSON object per URL")
    check.set_defaults(handler=robots_file.check)

    lint = commands.add_parser("lint", help="list what a robots.txt file gets wrong, by line")
    lint.add_argument("robots_file", metavar="ROBOTS_FILE", help="the robots.txt file")
    lint.set_defaults(handler=robots_file.lint)


def _identity_commands(commands) -> None:
    verify = commands.add_parser(
        "verify", help="who really sent a request: the identity of IP + User-Agent and its evidence",
        description="Check a crawler claim: published ranges first, then forward-confirmed reverse DNS.",
    )
    verify.add_argument("ip", metavar="IP", help="client address")
    verify.add_argument("user_agent", metavar="USER_AGENT", help="User-Agent header, or a crawler's product token")
    verify.add_argument(
        "--dns", default="off",
        help="off (default: published ranges only, as `run`), live, or snapshot:FILE (answers recorded by a run)",
    )
    verify.add_argument("--dns-server", help="HOST:PORT to ask instead of the system resolver")
    verify.add_argument(
        "--dns-timeout", type=arguments.number(float, 0.001), default=resolvers.DEFAULT_TIMEOUT,
        help="seconds per attempt",
    )
    verify.add_argument(
        "--dns-retries", type=arguments.number(int, 0), default=resolvers.DEFAULT_RETRIES,
        help="attempts after a timeout",
    )
    verify.add_argument("--ranges", help="folder of IP-range snapshots (default: the user data folder, ~/.local/share/crawl-audit/ranges on Linux)")
    verify.add_argument("--registry", help="crawler registry YAML (default: config/crawlers.yaml)")
    verify.add_argument(
        "--at", type=arguments.moment, help="request time, ISO 8601 (default: now); picks the range snapshots within the window"
    )
    verify.add_argument(
        "--range-window", type=arguments.number(int, 0), default=RANGE_WINDOW, metavar="DAYS",
        help=f"days each side of the request within which a range snapshot's absence proves a claim false (default {RANGE_WINDOW})",
    )
    verify.add_argument("--json", action="store_true", help="one JSON object")
    signed = verify.add_argument_group("Web Bot Auth: the request's signature headers, as logged")
    signed.add_argument("--signature-input", metavar="VALUE", help="the Signature-Input header")
    signed.add_argument("--signature", metavar="VALUE", help="the Signature header")
    signed.add_argument("--signature-agent", metavar="VALUE", help="the Signature-Agent header")
    signed.add_argument("--authority", metavar="HOST[:PORT]", help="the Host header exactly as logged, port included")
    signed.add_argument("--method", default="GET", help="the request method")
    signed.add_argument("--path", default="/", help="the request's path and query")
    verify.set_defaults(handler=identity.verify)

    update = commands.add_parser(
        "update-ranges", help="download today's published IP-range files into a dated snapshot folder",
        description="Save each range source's current file as RANGES/<source>/<today, UTC>.json.",
    )
    update.add_argument("--ranges", help="snapshot folder (default: the user data folder, ~/.local/share/crawl-audit/ranges on Linux)")
    update.add_argument("--registry", help="crawler registry YAML (default: config/crawlers.yaml)")
    update.add_argument("--source", action="append", default=[], help="only this source (repeatable)")
    update.add_argument(
        "--timeout", type=arguments.number(float, 0.001), default=ranges_update.DEFAULT_TIMEOUT,
        help="seconds per download, redirects included",
    )
    update.add_argument("--ca-file", help="PEM file of the CAs to trust instead of the system's (HTTPS only)")
    update.set_defaults(handler=identity.update_ranges)
    steps = update.add_subparsers(dest="update_step", metavar="[STEP]")
    imported = steps.add_parser(
        "import-git", help="one snapshot per day a range file changed in a git repository, current to the branch's tip",
        description="Write RANGES/<source>/<day>.json for each UTC day a change to PATH reached the branch (its"
        " first-parent history, renames followed; the day's last change wins) and for the tip's day. PATH holds"
        " the operator's JSON or one prefix a line.",
    )
    _git_file_arguments(imported, "the range file")
    imported.add_argument("--branch", help="the branch to read (default: the repository's HEAD branch)")
    imported.add_argument(
        "--source", dest="git_source", required=True, metavar="NAME", help="the registry's range source the file is"
    )
    # SUPPRESS: a flag given before the step is kept, not reset to the step's default
    imported.add_argument("--ranges", default=argparse.SUPPRESS, help="snapshot folder (default: config/ranges)")
    imported.add_argument("--registry", default=argparse.SUPPRESS, help="crawler registry YAML (default: config/crawlers.yaml)")
    imported.set_defaults(handler=identity.import_range_history)


def _history_commands(commands) -> None:
    group = commands.add_parser(
        "history", help="build a robots.txt history (capture, import-wayback, import-git) and show or diff it",
        description="Build and inspect a robots.txt history.",
    )
    steps = group.add_subparsers(dest="history_command", required=True, metavar="STEP")

    capture = steps.add_parser("capture", help="fetch each host's robots.txt now; keep it when it changed")
    capture.add_argument("hosts", nargs="+", metavar="HOST", help="the hosts whose https://HOST/robots.txt to fetch")
    capture.add_argument("--into", required=True, help="captures folder (HOST/TIMESTAMP.EXT, HOST/observations.log)")
    capture.add_argument(
        "--user-agent", default=history_capture.USER_AGENT, help=f"User-Agent of the fetch (default: {history_capture.USER_AGENT})"
    )
    capture.add_argument(
        "--dns-server", metavar="IP[:PORT]",
        help="resolve the hosts with this DNS server instead of the system resolver (one that does not answer records nothing)",
    )
    _fetch_flags(capture, history_capture.DEFAULT_TIMEOUT)
    capture.set_defaults(handler=history.capture)

    imported = steps.add_parser("import-wayback", help="import the Internet Archive's captures of HOST/robots.txt")
    imported.add_argument("host", metavar="HOST", help="the host whose archived robots.txt captures to import")
    imported.add_argument("--into", required=True, help="captures folder")
    imported.add_argument("--from", dest="start", type=history.archive_time, help="first date (2024-01-31)")
    imported.add_argument("--to", dest="end", type=history.archive_time, help="last date")
    imported.add_argument("--archive", default=wayback.DEFAULT_ARCHIVE, help="archive base URL (HTTPS)")
    imported.add_argument(
        "--delay", type=arguments.number(float, 0), default=wayback.DEFAULT_DELAY, help="seconds between requests"
    )
    imported.add_argument(
        "--retries", type=arguments.number(int, 0), default=wayback.DEFAULT_RETRIES,
        help="retries on 429, 5xx and network errors, with exponential back-off",
    )
    _fetch_flags(imported, 60.0)
    imported.set_defaults(handler=history.import_wayback)

    git = steps.add_parser(
        "import-git", help="one version per change (or deploy) of a robots.txt in the git repository that deploys it",
        description="Write one version of HOST's robots.txt per change on the branch's first-parent history,"
        " dated when it reached the branch (a merge's committer time), renames followed back from PATH.",
    )
    _git_file_arguments(git, "the robots.txt")
    git.add_argument("--host", required=True, help="the host that serves this robots.txt")
    git.add_argument("--into", required=True, help="captures folder")
    git.add_argument("--branch", help="the branch that is deployed (default: the repository's HEAD branch)")
    git.add_argument(
        "--deployed-at", metavar="FILE",
        help="file of 'COMMIT TIMESTAMP' lines: when each deploy put a commit live (instead of the branch's times)",
    )
    git.set_defaults(handler=history.import_git)

    one = steps.add_parser("import-file", help="one robots.txt file as the version in effect from a given moment")
    one.add_argument("file", metavar="FILE", help="the robots.txt file")
    one.add_argument("--host", required=True, help="the host it was served on")
    one.add_argument(
        "--effective-from", required=True, type=arguments.moment, metavar="WHEN",
        help="when it took effect, ISO 8601 (UTC unless given): the audit judges no request before it",
    )
    one.add_argument("--into", required=True, help="captures folder")
    one.set_defaults(handler=history.import_file)

    show = steps.add_parser("show", help="each host's versions as a time line")
    show.add_argument("table", metavar="TABLE", help="robots table: JSON Lines or captures folder")
    show.add_argument("--host", help="only this host (default: every host in the table)")
    show.set_defaults(handler=history.show)

    diff = steps.add_parser("diff", help="rule changes between the versions in effect at T1 and T2")
    diff.add_argument("table", metavar="TABLE", help="robots table: JSON Lines or captures folder")
    diff.add_argument("--host", required=True, help="the host whose versions to compare")
    diff.add_argument("t1", metavar="T1", type=arguments.moment, help="ISO 8601 time (UTC when no offset)")
    diff.add_argument("t2", metavar="T2", type=arguments.moment, help="a later ISO 8601 time (UTC when no offset)")
    diff.set_defaults(handler=history.show_diff)


def _fetch_flags(command: argparse.ArgumentParser, timeout: float) -> None:
    command.add_argument(
        "--timeout", type=arguments.number(float, 0, above=True), default=timeout,
        help=f"seconds per fetch, redirects included (default {timeout:g})",
    )
    command.add_argument("--ca-file", help="PEM file of the CAs to trust instead of the system's")
    command.add_argument(
        "--connect-to", type=history.connect_to, action="append", default=[], metavar="HOST=ADDRESS:PORT",
        help="connect to ADDRESS:PORT for HOST; the request and certificate still name HOST (repeatable)",
    )


def _run_command(commands) -> None:
    command = commands.add_parser(
        "run", help="audit access logs (crawl-audit run --help lists the options)",
        description="Audit access logs against the robots.txt history. Any other flag goes to Apache Beam"
        " (--runner, --direct_num_workers, ...).",
        formatter_class=_DefaultsShown,
        # A Beam flag must never be taken for an abbreviation of one of ours.
        allow_abbrev=False,
    )
    inputs = command.add_argument_group("inputs")
    inputs.add_argument("--logs", metavar="GLOB", help="glob of access-log files (.gz, .bz2, .xz and .zst read as they are)")
    inputs.add_argument(
        "--log-format", default=AUTO, type=arguments.log_format, metavar="FORMAT",
        help=f"the log lines' format: {AUTO} (each file's own, told from its first lines), {', '.join(FORMATS)};"
        " or the server's own format string: 'apache:%%h %%l %%u %%t \"%%r\" %%>s %%b ...' (a LogFormat) or"
        " 'nginx:$remote_addr - $remote_user [$time_local] ...' (a log_format); or a CloudFront real-time"
        " log's field list: 'cloudfront_realtime:timestamp,c-ip,...'",
    )
    inputs.add_argument("--default-host", metavar="HOST", help="host for log lines that carry none")
    inputs.add_argument(
        "--log-timezone", default="UTC", metavar="ZONE",
        help="zone of log times written without one (HAProxy's accept date): UTC, an IANA name such as"
        " Europe/Paris, or +HH:MM",
    )
    inputs.add_argument(
        "--field-map", type=arguments.json_object, metavar="JSON",
        help='for --log-format jsonl (or to extend a preset): JSON object, our field -> source path, '
        'e.g. {"ts": "time", "client_ip": "remote.ip", "path": "uri", "user_agent": "ua"}',
    )
    inputs.add_argument("--robots", metavar="TABLE", help="robots history: a JSON Lines table or a captures folder")
    inputs.add_argument("--ranges", metavar="DIR", help="folder of published IP-range snapshots (default: the user data folder, ~/.local/share/crawl-audit/ranges on Linux)")
    inputs.add_argument("--registry", metavar="FILE", help="crawler registry YAML (default: config/crawlers.yaml)")
    inputs.add_argument(
        "--page-directives", metavar="TABLE", help="page-directives table (JSON Lines: host, path, effective_from, x_robots_tag, meta_robots)"
    )

    inputs.add_argument(
        "--prior-run", metavar="OUT",
        help="an earlier run's folder: its robots_fetches table says what each crawler held when its logs ended",
    )

    judged = command.add_argument_group("robots.txt history and crawl-delay")
    judged.add_argument(
        "--cache-grace", type=arguments.duration, metavar="DURATION", default="24h",
        help="how long a crawler may keep using a cached robots.txt (0 disables)",
    )
    judged.add_argument(
        "--error-limit", type=arguments.duration, metavar="DURATION", default="30d",
        help="how long a 5xx/unreachable robots.txt disallows before the last good version applies",
    )
    judged.add_argument("--window", type=arguments.duration, metavar="DURATION", default="1h", help="crawl-delay aggregates: window size (epoch-aligned)")
    judged.add_argument(
        "--allowed-lateness", type=arguments.duration, metavar="DURATION", default="15m",
        help="streaming: how long after the watermark passes a window its requests, or a request its "
        "crawler's robots.txt fetches, may still arrive; later ones go to dead_letters (late-beyond-allowed-lateness)",
    )

    outputs = command.add_argument_group("outputs")
    outputs.add_argument("--out", metavar="DIR", help="output folder, one subfolder per table")
    outputs.add_argument(
        "--format", dest="output_format", default="jsonl", choices=["jsonl", "parquet"], help="the tables' file format"
    )
    outputs.add_argument(
        "--overwrite", action="store_true", help="batch: replace the complete run already in --out (nothing else is ever removed)"
    )
    outputs.add_argument(
        "--progress", default="auto", choices=progress.MODES,
        help="batch, local runner: a progress line on stderr (auto: only when stderr is a terminal)",
    )
    outputs.add_argument(
        "--fail-on", type=arguments.health_checks, default=frozenset(), metavar="CHECKS",
        help="batch: exit 1 when one of these run-health checks finds a problem (comma-separated:"
        f" {', '.join(CHECKS)}; or any); without it a run that ends exits 0",
    )
    outputs.add_argument(
        "--local-speedups", default=os.environ.get(LOCAL_SPEEDUPS_VARIABLE, "on"), choices=["on", "off"],
        help="batch, local runner: worker processes forked in advance and grouping on disk"
        f" (off: Beam's local runner as it comes; the default can be set in {LOCAL_SPEEDUPS_VARIABLE})",
    )

    identity_flags = command.add_argument_group("identity: reverse DNS and proxies")
    identity_flags.add_argument(
        "--range-window", type=arguments.number(int, 0), default=RANGE_WINDOW, metavar="DAYS",
        help=f"days each side of a request within which a range snapshot's absence proves a claim false (default {RANGE_WINDOW})",
    )
    identity_flags.add_argument("--dns", default="off", metavar="MODE", help="reverse DNS for claims no published range proves: off, live, or snapshot:FILE")
    identity_flags.add_argument("--dns-server", metavar="HOST:PORT", help="HOST:PORT of the DNS server for --dns live (default: the system resolver)")
    identity_flags.add_argument(
        "--dns-record", metavar="FILE", help="write the DNS answers used to FILE (streaming: as JSON Lines files in the folder FILE), "
        "for a later --dns snapshot:FILE",
    )
    identity_flags.add_argument(
        "--dns-ttl", type=arguments.number(float, 0), default=resolvers.DEFAULT_TTL,
        help="streaming: seconds a worker keeps an answer before asking again (a fault: at most a minute)",
    )
    identity_flags.add_argument(
        "--dns-cache-size", type=arguments.number(int, 1), default=resolvers.DEFAULT_CACHE_SIZE,
        help="streaming: answers a worker keeps, least recently used forgotten first",
    )
    identity_flags.add_argument(
        "--dns-timeout", type=arguments.number(float, 0.001), default=resolvers.DEFAULT_TIMEOUT, help="seconds per DNS attempt"
    )
    identity_flags.add_argument(
        "--dns-retries", type=arguments.number(int, 0), default=resolvers.DEFAULT_RETRIES,
        help="attempts after a timed-out one; an address never takes more than timeout x (retries+1)",
    )
    identity_flags.add_argument(
        "--dns-concurrency", type=arguments.number(int, 1), default=resolvers.DEFAULT_CONCURRENCY,
        help="DNS lookups in flight per worker",
    )
    identity_flags.add_argument(
        "--trusted-proxies", type=arguments.networks, default=NO_PROXIES, metavar="NETS", help="comma-separated networks of your own proxies; the client is then the right-most "
        "X-Forwarded-For address outside them (default: the connecting address)",
    )

    identity_flags.add_argument(
        "--truncate-addresses", action="store_true",
        help="write the client address of automated, unverifiable and undeclared (browser-like) clients as its "
        "/24 (IPv4) or /48 (IPv6) network, for sites that must not keep personal data; verified and spoofed "
        "crawlers keep theirs, the evidence of their identity",
    )

    streaming = command.add_argument_group("streaming (with --streaming)")
    streaming.add_argument("--streaming", action="store_true", help="run continuously on a stream of log lines")
    streaming.add_argument("--poll-interval", type=arguments.duration, metavar="DURATION", default="30s", help="how often the --logs folder is listed")
    streaming.add_argument("--watch-for", type=arguments.duration, metavar="DURATION", help="stop watching the --logs folder after this long")
    streaming.add_argument(
        "--robots-refresh", type=arguments.duration, metavar="DURATION", default="10m", help="re-read --robots this often (0: read once at launch)"
    )
    streaming.add_argument(
        "--changes-every", type=arguments.duration, metavar="DURATION",
        help="write the change audit's rows so far this often, with final false (0: only when the input ends;"
        " default 10m, 0 on the local runners)",
    )
    streaming.add_argument("--pubsub-subscription", help="read log lines from this subscription")
    streaming.add_argument(
        "--pubsub-timestamp-attribute",
        help="message attribute holding the log time (RFC 3339 or epoch millis); default: publish time",
    )
    streaming.add_argument("--kafka-bootstrap", help="read log lines from Kafka")
    streaming.add_argument("--kafka-topic", help="the topic of log lines")
    streaming.add_argument("--kafka-config", type=arguments.json_object, help="JSON object of extra consumer properties")
    streaming.add_argument(
        "--kafka-expansion-service", help="host:port of a Beam Java expansion service (default: start one, needs Java)"
    )
    streaming.add_argument("--bigquery-dataset", help="write the tables to PROJECT:DATASET instead of --out")
    streaming.add_argument(
        "--bigquery-method", default="STORAGE_WRITE_API", choices=["STORAGE_WRITE_API", "STREAMING_INSERTS", "FILE_LOADS"],
        help="how BigQuery tables are written",
    )
    command.set_defaults(handler=run.run, passes_to_beam=True)


def _finished_run_commands(commands) -> None:
    shown = commands.add_parser(
        "report", help="print the closing report of a complete run folder again and rebuild its report.html"
    )
    shown.add_argument("out", metavar="OUT", help="the run's --out folder (JSON Lines or Parquet)")
    shown.add_argument("--html", help="where to write it (default OUT/report.html)")
    shown.set_defaults(handler=report.report)

    asked = commands.add_parser("whatif", help="what a proposed robots.txt would have changed for a finished run's requests")
    asked.add_argument("out", metavar="OUT", help="the run's --out folder (JSON Lines or Parquet)")
    asked.add_argument("--host", required=True, help="the host whose requests are decided again")
    asked.add_argument("--proposed", required=True, help="the proposed robots.txt file")
    asked.add_argument("--from", dest="start", type=arguments.moment, help="only requests at or after this time (UTC unless given)")
    asked.add_argument("--to", dest="end", type=arguments.moment, help="only requests before this time")
    asked.add_argument("--registry", help="crawler registry (default config/crawlers.yaml)")
    asked.set_defaults(handler=whatif.whatif)

    described = commands.add_parser(
        "schema", help="print a table's schema: BigQuery fields (bq mk --schema) or JSON Schema of its JSON Lines"
    )
    described.add_argument("table", nargs="?", choices=list(records.TABLES), help="one table (default: all)")
    described.add_argument(
        "--format", choices=["bigquery", "json"], default="json",
        help="bigquery: the field list of bq mk --schema; json: a JSON Schema of one JSON Lines record (default: json)",
    )
    described.set_defaults(handler=schema.schema)


def settings_of(argv: list[str]):
    """The settings and Beam options of `crawl-audit run ARGV`, as the command line reads them."""
    args, beam_args = parser().parse_known_args(["run", *argv])
    return run.read_run(args, beam_args)


def _git_file_arguments(command: argparse.ArgumentParser, what: str) -> None:
    """REPO and PATH..., as both `import-git` commands take them."""
    command.add_argument("repo", metavar="REPO", help="the git repository (a working copy or a bare clone)")
    command.add_argument(
        "paths", nargs="+", metavar="PATH",
        help=f"{what}'s path inside the repository today; more paths: where it lived before, when a"
        " rename is not found on its own",
    )
