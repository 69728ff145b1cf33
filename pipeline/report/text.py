"""The end-of-run summary a person reads: where every line went, a table per crawler, and who
kept its Crawl-delay."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from matcher import records
from matcher.health import Finding
from pipeline.report import health
from pipeline.report.figures import DECISIONS, Figures, Split, byte_size, figures, identity_words, total
from pipeline.tables import reading as tables
from matcher.printable import printable
from pipeline.tables.run_folder import read_manifest

# Rows printed before the rest is summed in one row: the report stays a page long, however
# many crawler names the logs invent.
_CRAWLERS_SHOWN = 25
_CRAWL_DELAY_SHOWN = 25


# The crawl-delay section's groups: whether the operator promised to keep Crawl-delay decides
# what a violation means. Spoofed traffic is listed apart: it is not the crawler it names.
_PROMISES = (
    ("promised to honour Crawl-delay: each violation breaks the operator's own promise", True),
    ("never promised: the operator says it does not follow Crawl-delay", False),
    ("not in the registry: no promise known", None),
)


@dataclass(frozen=True)
class RunSummary:
    counts: dict
    rows: list[dict]
    crawl_delay_windows: Sequence[dict] = ()
    indexing_findings: Sequence[dict] = ()
    between_captures: Sequence[dict] = ()
    health: Sequence[Finding] = ()


def load(out: str) -> RunSummary:
    """Read back the counts, summary, crawl-delay window, indexing-findings and between-captures
    tables of the complete run in `out`: the files its manifest lists, never whatever else the
    folder holds. RunFolderError (a ValueError) when `out` holds no complete run."""
    counts = read_manifest(out)["counts"]

    def rows(table: str) -> list[dict]:
        return list(tables.rows(out, table))

    return RunSummary(
        counts,
        rows(records.SUMMARY_TABLE),
        rows(records.WINDOWS_TABLE),
        rows(records.INDEXING_FINDINGS_TABLE),
        rows(records.BETWEEN_CAPTURES_TABLE),
        health.findings(out),
    )


def render(summary: RunSummary) -> str:
    counts = summary.counts
    lines_read = counts.get("lines", 0)
    accounted = sum(counts.get(key, 0) for key in ("verdicts", "skipped", "not_requests", "dead_letters"))
    crawler_rows = [row for row in summary.rows if row.get("client_kind", "crawler") == "crawler"]
    figs = figures(summary.rows)
    automated = sum(split.requests for split in figs.automated)
    agents = sum(split.requests for split in figs.agents)
    out = [
        f"lines read            {lines_read:>9,}",
        f"  crawler verdicts    {counts.get('verdicts', 0) - automated - agents:>9,}",
        f"  automated clients   {automated:>9,}  (HTTP libraries, tools, monitors, scanners, headless browsers)",
        f"  signed agents       {agents:>9,}  (browsers run by an operator's agent, named by their Signature-Agent)",
        f"  non-crawlers        {counts.get('skipped', 0):>9,}  (counted, not written)",
        f"  not requests        {counts.get('not_requests', 0):>9,}{_not_request_reasons(counts)}",
        f"  dead letters        {counts.get('dead_letters', 0):>9,}  (unparseable lines, see dead_letters/)",
    ]
    if accounted != lines_read:
        out.append(f"  WARNING: {lines_read - accounted:,} lines unaccounted for")
    out.append("")
    out.append(_table(figs.crawlers))
    out.append(DECISIONS_LEGEND)
    out.append("")
    out.extend(_claims_section(figs))
    out.extend(_purpose_section(figs))
    out.extend(_conflicts_section(crawler_rows))
    if figs.automated:
        out.append("automated clients: audited by their own product token's group, else `*`; nothing proves who runs them")
        out.append(_table(figs.automated, "client"))
        out.append("")
    if figs.agents:
        out.append("signed agents: a browser's User-Agent with an operator's Signature-Agent; only the signature proves it")
        out.append(_table(figs.agents, "agent"))
        out.append("")
    out.extend(_crawl_delay_section(summary.crawl_delay_windows))
    out.extend(_indexing_section(summary.indexing_findings))
    out.extend(_between_captures_section(summary.between_captures))
    # Last, where the eye lands when the run ends.
    out.append("")
    out.extend(health.text_lines(summary.health))
    return "\n".join(out)


def _not_request_reasons(counts: dict) -> str:
    """`  (no-request 12, not-http 3)`: why lines the server wrote held no request for a resource."""
    reasons = counts.get("not_request_reasons") or {}
    if not reasons:
        return ""
    ranked = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    return "  (" + ", ".join(f"{reason} {n:,}" for reason, n in ranked) + ")"


def _between_captures_section(rows: Sequence[dict]) -> list[str]:
    """The robots.txt changes whose unknown time left requests with two candidate versions."""
    if not rows:
        return []
    rows = sorted(rows, key=lambda r: (-r["requests"], r["host"] or "", r["later_effective_from"]))
    lines = [
        "",
        "disallowed between captures: the robots.txt changed at an unknown time between two observations;"
        " the version in effect disallowed, the next one allowed",
    ]
    cells = [
        (
            r["host"] or "-", r["crawler"] or "-", r["effective_from"],
            f"{r['observed_before']} .. {r['later_effective_from']}", f"{r['requests']:,}",
        )
        for r in rows[:_FINDINGS_SHOWN]
    ]
    lines += _aligned([("host", "crawler", "in effect from", "changed within", "requests")] + cells, 4, indent="  ")
    if len(rows) > _FINDINGS_SHOWN:
        lines.append(f"  ... {len(rows) - _FINDINGS_SHOWN:,} more in between_captures/")
    return lines


_FINDING_TITLES = {
    "noindex-unseen": "disallowed yet relying on noindex (the noindex is never seen)",
    "crawled-after-unavailable": "crawled after unavailable_after had passed",
}
_FINDINGS_SHOWN = 10


def _indexing_section(findings: Sequence[dict]) -> list[str]:
    lines = []
    for finding, title in _FINDING_TITLES.items():
        rows = sorted((r for r in findings if r["finding"] == finding), key=lambda r: (-r["requests"], r["path"]))
        if not rows:
            continue
        lines += ["", f"pages {title}: {len(rows):,}"]
        cells = [(r["host"] or "-", r["path"], r["crawler"] or "-", f"{r['requests']:,}") for r in rows[:_FINDINGS_SHOWN]]
        lines += _aligned([("host", "path", "crawler", "requests")] + cells, text_columns=3, indent="  ")
        if len(rows) > _FINDINGS_SHOWN:
            lines.append(f"  ... {len(rows) - _FINDINGS_SHOWN:,} more in indexing_findings/")
    return lines


DECISIONS_LEGEND = (
    "disallowed: plainly, by the robots.txt the crawler had or should have had; within_grace, before_refetch,"
    " between_captures: disallowed too, but a cache grace or an unknown change time speaks for the crawler"
)


def _claims_section(figs: Figures) -> list[str]:
    """Requests whose address disproves or does not prove the crawler they name: never the crawler's."""
    if not figs.claims:
        return []
    lines = ["claims not proven: requests naming a crawler their address does not prove; not counted as its own"]
    lines += ["  " + claim.sentence() for claim in figs.claimed[:_CRAWLERS_SHOWN]]
    if len(figs.claimed) > _CRAWLERS_SHOWN:
        lines.append(f"  ... {len(figs.claimed) - _CRAWLERS_SHOWN:,} more claimed names in summary/")
    return lines + [_table(figs.claims, "claimed")] + [""]


def _purpose_section(figs: Figures) -> list[str]:
    """The crawlers' own requests per purpose; a crawler of several purposes counts under each."""
    if not figs.purposes:
        return []
    cells = [("purpose", "requests", "bytes") + DECISIONS] + [(split.name,) + _numbers(split) for split in figs.purposes]
    return [
        "crawlers' own requests by purpose (a crawler of several purposes counts under each; claims not proven are apart)"
    ] + _aligned(cells, text_columns=1, indent="  ") + [""]


def _conflicts_section(rows: Sequence[dict]) -> list[str]:
    """Requests against a usage preference for the crawler's purpose, apart from access violations."""
    rows = sorted((r for r in rows if r.get("preference_conflicts")), key=lambda r: (-r["preference_conflicts"], r["crawler"] or ""))
    if not rows:
        return []
    cells = [("crawler", "identity", "requests")] + [
        (r["crawler"] or "(none)", r["identity"], f"{r['preference_conflicts']:,}") for r in rows[:_CRAWLERS_SHOWN]
    ]
    return [
        "preference conflicts: fetches whose crawler's purpose a Content-Signal or Content-Usage in force refused"
        " (not access violations; see verdicts.preference_conflicts)"
    ] + _aligned(cells, text_columns=2, indent="  ") + [""]


def _table(splits: Sequence[Split], name: str = "crawler") -> str:
    """Per crawler and identity, the crawlers with most requests first (as ranked); past
    `_CRAWLERS_SHOWN` crawlers the rest are summed in one row, since anyone can send requests
    under new names."""
    names = list(dict.fromkeys(split.name for split in splits))
    shown = set(names[:_CRAWLERS_SHOWN])
    cells = [(name, "identity", "requests", "bytes") + DECISIONS] + [
        (split.name, identity_words(split.identity)) + _numbers(split) for split in splits if split.name in shown
    ]
    hidden = len(names) - len(shown)
    if hidden:
        rest = total("", (split for split in splits if split.name not in shown))
        cells.append((f"({hidden:,} more {name}s)", "-") + _numbers(rest))
    return "\n".join(_aligned(cells, text_columns=2))


def _numbers(split: Split) -> tuple[str, ...]:
    """requests, the bytes sent, then each decision."""
    requests, *decisions = (f"{n:,}" for n in split.cells())
    return (requests, byte_size(split.bytes), *decisions)


def _aligned(cells: list[tuple], text_columns: int, indent: str = "") -> list[str]:
    """Rows of cells padded to their column's width: text left, numbers right; every cell escaped
    for the terminal, since most of them come from log lines."""
    cells = [tuple(printable(str(cell)) for cell in line) for line in cells]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    return [
        indent + "  ".join(
            cell.ljust(w) if i < text_columns else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))
        ).rstrip()
        for line in cells
    ]


def _crawl_delay_section(windows: list[dict]) -> list[str]:
    """Per crawler, identity and host where a Crawl-delay applied: requests, violations, smallest gap."""
    totals = crawl_delay_totals(windows)
    if not totals:
        return ["crawl-delay: no request had a Crawl-delay in effect"]
    out = ["crawl-delay: requests that followed the previous one sooner than the Crawl-delay allowed"]
    header = ("crawler", "identity", "host", "delay", "requests", "violations", "smallest gap")
    groups = [
        (title, [t for t in totals if t["identity"] != "spoofed" and t["honours"] is promise])
        for title, promise in _PROMISES
    ]
    groups.append(("spoofed claims: not the crawler they name, never counted against it",
                   [t for t in totals if t["identity"] == "spoofed"]))
    for title, group in groups:
        if group:
            out.append(f"  {title}")
            cells = [header] + [
                (
                    t["crawler"], t["identity"], t["host"],
                    "/".join(f"{delay:g}s" for delay in t["delays"]),
                    f"{t['requests']:,}", f"{t['violations']:,}",
                    "-" if t["smallest_gap"] is None else f"{t['smallest_gap']:g}s",
                )
                for t in group[:_CRAWL_DELAY_SHOWN]
            ]
            rest = group[_CRAWL_DELAY_SHOWN:]
            if rest:
                cells.append((
                    f"({len(rest):,} more)", "-", "-", "-",
                    f"{sum(t['requests'] for t in rest):,}", f"{sum(t['violations'] for t in rest):,}", "-",
                ))
            out.extend(_aligned(cells, text_columns=4, indent="    "))
    return out


def crawl_delay_totals(windows: list[dict]) -> list[dict]:
    """One total per (crawler, identity, host) over the windows that had a delay in effect,
    most violations first."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in windows:
        if row["crawl_delay_s"] is not None:
            grouped[(row["crawler"] or row["operator"] or "(none)", row["identity"], row["host"] or "(none)")].append(row)
    totals = []
    for (crawler, identity, host), rows in grouped.items():
        gaps = [row["min_gap_s"] for row in rows if row["min_gap_s"] is not None]
        totals.append({
            "crawler": crawler,
            "identity": identity,
            "host": host,
            "delays": sorted({row["crawl_delay_s"] for row in rows}),
            "requests": sum(row["requests"] for row in rows),
            "violations": sum(row["violations"] for row in rows),
            "smallest_gap": min(gaps, default=None),
            "honours": rows[0]["honours_crawl_delay"],
        })
    return sorted(totals, key=lambda t: (-t["violations"], t["crawler"], t["host"]))
