"""Run health of a finished run, read from its folder and said in the text summary and at the top
of report.html: each problem the checks of `matcher.health` found, with its fix."""
from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from html import escape

from matcher import health, records
from matcher.health import Finding, RunFacts
from matcher.logformats.detect import SAMPLE_LINES, rank_formats
from pipeline.report.counts import report_counts
from pipeline.tables import reading as tables
from pipeline.tables.run_folder import read_manifest

# Dead letters read back to tell which format would have read them.
DEAD_LETTER_SAMPLE = SAMPLE_LINES


def findings(out: str, counts=None) -> list[Finding]:
    """The checks' findings for the complete run in `out`; `counts` are its report counts when
    the caller has read them already."""
    return health.findings(run_facts(out, counts))


def run_facts(out: str, counts=None) -> RunFacts:
    manifest = read_manifest(out)
    counts = counts if counts is not None else report_counts(out)
    run_counts = manifest["counts"]
    dead = run_counts.get("dead_letters", 0)
    sample = list(itertools.islice(tables.rows(out, records.DEAD_LETTERS_TABLE), DEAD_LETTER_SAMPLE)) if dead else []
    first_day: dict[str, object] = {}
    for row in tables.rows(out, records.ROBOTS_VERSIONS_TABLE):
        moment = tables.moment(row["effective_from"])
        first_day[row["host"]] = min(moment, first_day.get(row["host"], moment))
    return RunFacts(
        lines=run_counts.get("lines", 0),
        dead_letters=dead,
        log_format=_log_format(manifest),
        dns=manifest.get("inputs", {}).get("dns") or "off",
        verdicts=run_counts.get("verdicts", 0),
        formats_reading_dead_letters=formats_reading([row["raw"] for row in sample]),
        dead_letter_reasons=Counter(row["reason"] for row in sample),
        unjudged=counts.unjudged,
        table_first_day=first_day,
        identity_notes=counts.identity_notes,
        range_problems=_range_problems(manifest),
    )


def _range_problems(manifest: dict) -> tuple[str, ...]:
    problems = manifest.get("inputs", {}).get("range_problems")
    return tuple(str(problem) for problem in problems) if isinstance(problems, list) else ()


def _log_format(manifest: dict) -> str:
    """The format the lines were read as: the one named, or those `auto` chose per file."""
    named = manifest.get("options", {}).get("log_format", "combined")
    detected = sorted({f["log_format"] for f in manifest.get("inputs", {}).get("log_files", ()) if f.get("log_format")})
    return ", ".join(detected) if named == "auto" and detected else named


def formats_reading(lines: Sequence[str]) -> tuple[str, ...]:
    """The formats that read most of `lines`, best first, as `--log-format auto` judges them."""
    return tuple(candidate.name for candidate in rank_formats(lines) if candidate.reads_most())


def text_lines(found: Sequence[Finding]) -> list[str]:
    """The summary's run-health section."""
    if not found:
        return ["run health: every check passed (" + ", ".join(health.CHECKS) + ")"]
    lines = [f"run health: {len(found)} problem{'s' if len(found) > 1 else ''} (requests the run could not judge)"]
    for finding in found:
        lines.append(f"  [{finding.check}] {finding.problem}")
        lines.extend(f"      {detail}" for detail in finding.details)
        lines.append(f"      fix: {finding.fix}")
    return lines


def html_banner(found: Sequence[Finding]) -> str:
    """The banner at the top of report.html: every problem and its fix, or a line saying none."""
    if not found:
        return (
            '<section id="health" class="health ok"><p><strong>Run health:</strong> every check passed'
            f" ({escape(', '.join(health.CHECKS))}).</p></section>"
        )
    items = "".join(
        f'<li data-check="{escape(f.check)}"><strong>{escape(f.check)}</strong>: {escape(f.problem)}'
        + "".join(f'<br><span class="detail">{escape(detail)}</span>' for detail in f.details)
        + f'<br>Fix: <code>{escape(f.fix)}</code></li>'
        for f in found
    )
    return (
        '<section id="health" class="health bad" role="alert">'
        f"<h2>Run health: {len(found)} problem{'s' if len(found) > 1 else ''}</h2>"
        "<p>Part of this run could not be judged; the sections below are incomplete until these are fixed.</p>"
        f"<ul>{items}</ul></section>"
    )
