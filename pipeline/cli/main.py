"""The `crawl-audit` command line.

Exit codes:
  check  0 every URL allowed, 1 at least one URL disallowed, 2 usage or input error
  lint   0 no findings, 1 findings printed, 2 usage or input error
  verify 0 verified, 1 any other identity, 2 usage or input error
  run    0 the audit finished, 2 usage or input error
  report 0 printed, 2 the folder holds no complete run
  update-ranges  0 every source saved, 1 a source was not saved, 2 usage or input error
  history        0 done, 1 done in part (run again to resume), 2 usage or input error
  schema 0 printed, 2 usage error
  report 0 report written, 2 usage or input error
  whatif 0 what-if written, 2 usage or input error
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Sequence

from config.registry import default_registry
from matcher import agents, records, robots
from matcher.explain import decision_to_dict, rule_text, why
from matcher.normalize import normalize, request_path
from pipeline.report.terminal import printable, printable_json

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class InputError(Exception):
    """A problem with what the user gave us, reported as one line."""


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from error


def check(args: argparse.Namespace) -> int:
    rf = robots.parse(_read_bytes(args.robots_file))
    tokens = agents.robots_tokens(args.agent, default_registry())
    any_disallowed = False
    for url in args.urls:
        decision = rf.decide_tokens(tokens, url)
        any_disallowed |= not decision.allowed
        if args.json:
            print(printable_json(decision_to_dict(url, decision)))
        else:
            print(_describe(url, tokens, decision))
    return EXIT_FINDINGS if any_disallowed else EXIT_OK


def _describe(url: str, tokens: Sequence[str], decision: robots.Decision) -> str:
    verdict = "allowed" if decision.allowed else "DISALLOWED"
    lines = [f"{url}: {verdict}", f"  tokens: {', '.join(tokens) or '(none)'}"]
    group = decision.group
    if group is not None:
        named = ", ".join(f"{agent} (line {line})" for agent, line in zip(group.agents, group.agent_lines))
        lines.append(f"  group:  User-agent: {named}")
    runner_up = None
    if decision.rule is not None:
        lines.append(f"  rule:   {rule_text(decision.rule)}")
        runner_up = group.runner_up(decision, normalize(request_path(url)))
    lines.append(f"  why:    {why(decision, runner_up)}")
    return "\n".join(printable(line) for line in lines)


def lint(args: argparse.Namespace) -> int:
    rf = robots.parse(_read_bytes(args.robots_file))
    for diagnostic in rf.diagnostics:
        print(printable(f"{args.robots_file}:{diagnostic.line}: {diagnostic.code}: {diagnostic.message}"))
    return EXIT_FINDINGS if rf.diagnostics else EXIT_OK


def schema(args: argparse.Namespace) -> int:
    """The record schema of one table, or of all by name, as BigQuery or JSON Schema takes it."""
    from pipeline.tables.schema import bigquery_schema  # pyarrow: loaded only for this command

    names = [args.table] if args.table else list(records.TABLES)
    if args.format == "bigquery":
        schemas = {name: bigquery_schema(records.TABLES[name])["fields"] for name in names}
    else:
        schemas = {name: records.json_schema(records.TABLES[name], title=name) for name in names}
    print(json.dumps(schemas[args.table] if args.table else schemas, indent=2, ensure_ascii=False))
    return EXIT_OK


def report_command(args: argparse.Namespace) -> int:
    """Rebuild the HTML report of a finished run, and print its text summary."""
    logging.getLogger().setLevel(logging.ERROR)
    from pipeline.report import html as html_report
    from pipeline.report import text as report

    try:
        text = report.render(report.load(args.out))
        written = html_report.write(args.out, args.html)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    print(f"{text}\n\nreport: {written}")
    return EXIT_OK


def whatif_command(args: argparse.Namespace) -> int:
    """Decide a finished run's verdicts of one host again under a proposed robots.txt."""
    logging.getLogger().setLevel(logging.ERROR)
    from pipeline.report import html as html_report
    from pipeline.report import whatif

    try:
        question = whatif.Question(
            args.out,
            args.host,
            Path(args.proposed).name,
            _read_bytes(args.proposed),
            whatif.moment_argument(args.start) if args.start else None,
            whatif.moment_argument(args.end) if args.end else None,
        )
        digest = whatif.run(question, args.registry)
        written = html_report.write(args.out)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    print(f"{whatif.render(digest)}\n\nwritten: {args.out}/{whatif.FOLDER}/, report: {written}")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crawl-audit", description="Audit crawler access against robots.txt.")
    commands = parser.add_subparsers(dest="command", required=True)

    check_parser = commands.add_parser("check", help="decide URLs for one crawler against a robots.txt file")
    check_parser.add_argument("robots_file")
    check_parser.add_argument("agent", help="a product token (Googlebot) or a full User-Agent string")
    check_parser.add_argument("urls", nargs="+", metavar="URL")
    check_parser.add_argument("--json", action="store_true", help="one JSON object per URL")
    check_parser.set_defaults(handler=check)

    lint_parser = commands.add_parser("lint", help="list what a robots.txt file gets wrong, by line")
    lint_parser.add_argument("robots_file")
    lint_parser.set_defaults(handler=lint)

    schema_parser = commands.add_parser(
        "schema", help="print a table's schema: BigQuery fields (bq mk --schema) or JSON Schema of its JSON Lines"
    )
    schema_parser.add_argument("table", nargs="?", choices=list(records.TABLES), help="one table (default: all)")
    schema_parser.add_argument("--format", choices=["bigquery", "json"], default="json")
    schema_parser.set_defaults(handler=schema)

    report_parser = commands.add_parser("report", help="print the closing report of a complete run folder again and rebuild its report.html")
    report_parser.add_argument("out", help="the run's --out folder (JSON Lines or Parquet)")
    report_parser.add_argument("--html", help="where to write it (default OUT/report.html)")
    report_parser.set_defaults(handler=report_command)

    whatif_parser = commands.add_parser(
        "whatif", help="what a proposed robots.txt would have changed for a finished run's requests"
    )
    whatif_parser.add_argument("out", help="the run's --out folder (JSON Lines or Parquet)")
    whatif_parser.add_argument("--host", required=True, help="the host whose requests are decided again")
    whatif_parser.add_argument("--proposed", required=True, help="the proposed robots.txt file")
    whatif_parser.add_argument("--from", dest="start", help="only requests at or after this time (UTC unless given)")
    whatif_parser.add_argument("--to", dest="end", help="only requests before this time")
    whatif_parser.add_argument("--registry", help="crawler registry (default config/crawlers.yaml)")
    whatif_parser.set_defaults(handler=whatif_command)

    run_parser = commands.add_parser(
        "run", help="audit access logs (crawl-audit run --help lists the options)", add_help=False
    )
    run_parser.add_argument("-h", "--help", action="store_true")
    run_parser.set_defaults(handler=run)

    # These two parse their own arguments (`crawl-audit verify --help`).
    for name, summary in (
        ("verify", "who really sent a request: the identity of IP + User-Agent and its evidence"),
        ("update-ranges", "download today's published IP-range files into a dated snapshot folder"),
    ):
        commands.add_parser(name, help=summary, add_help=False).set_defaults(handler=identity_command)
    commands.add_parser(
        "history", help="build a robots.txt history (capture, import-wayback, import-git) and show or diff it",
        add_help=False,
    ).set_defaults(handler=history_command)
    return parser


def history_command(args: argparse.Namespace, argv: list[str]) -> int:
    from pipeline.cli import history as history_cli

    return history_cli.main(argv)


def identity_command(args: argparse.Namespace, argv: list[str]) -> int:
    from pipeline.cli import identity as identity_cli

    return identity_cli.COMMANDS[args.command](argv)


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    # Imported here so `check` and `lint` answer without loading Beam. Beam's
    # import-time warnings about optional cloud clients would bury the report.
    logging.getLogger().setLevel(logging.ERROR)
    from pipeline.graph import build as graph
    from pipeline.graph.options import CrawlAuditOptions

    if args.help or not beam_args:
        usage = argparse.ArgumentParser(
            prog="crawl-audit run", epilog="Any other flag goes to Apache Beam (--runner, --direct_num_workers, ...)."
        )
        CrawlAuditOptions._add_argparse_args(usage)
        usage.print_help()
        return EXIT_OK
    try:
        return graph.run(beam_args)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    # `run` hands every flag it does not know to Beam; the other commands take none.
    args, extra = parser.parse_known_args(argv)
    passes_through = args.command in ("run", "verify", "update-ranges", "history")
    if extra and not passes_through:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.handler(args, extra) if passes_through else args.handler(args)
    except InputError as error:
        # A table with several problems lists one a line, under the first.
        first, *rest = str(error).split("\n")
        print(f"crawl-audit: {printable(first)}", file=sys.stderr)
        for line in rest:
            print(printable(line), file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader (`| head`) has what it wanted; that is not a failure.
        sys.stderr.close()
        return EXIT_OK
