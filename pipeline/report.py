"""The end-of-run summary a person reads: where every line went, and a table per crawler."""
from __future__ import annotations

import json
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

_COLUMNS = ("requests", "allowed", "disallowed", "within_grace", "unknown")
_IDENTITY_ORDER = ("verified", "spoofed", "unverified", "unverifiable", "undeclared")


@dataclass(frozen=True)
class RunSummary:
    counts: dict
    rows: list[dict]


def load(out: str) -> RunSummary:
    """Read back the counts and summary tables a run wrote under `out`."""
    counts = json.loads(_read_all(FileSystems.join(out, "counts.json")))
    rows = [json.loads(line) for line in _read_all(FileSystems.join(out, "summary", "part*")).splitlines() if line]
    return RunSummary(counts, rows)


def _read_all(pattern: str) -> str:
    texts = []
    for match in FileSystems.match([pattern])[0].metadata_list:
        with FileSystems.open(match.path) as handle:
            texts.append(handle.read().decode("utf-8"))
    return "".join(texts)


def render(summary: RunSummary) -> str:
    counts = summary.counts
    lines_read = counts.get("lines", 0)
    accounted = sum(counts.get(key, 0) for key in ("verdicts", "skipped", "dead_letters"))
    out = [
        f"lines read            {lines_read:>9,}",
        f"  crawler verdicts    {counts.get('verdicts', 0):>9,}",
        f"  non-crawlers        {counts.get('skipped', 0):>9,}  (counted, not written)",
        f"  dead letters        {counts.get('dead_letters', 0):>9,}  (unparseable lines, see dead_letters/)",
    ]
    if accounted != lines_read:
        out.append(f"  WARNING: {lines_read - accounted:,} lines unaccounted for")
    out.append("")
    out.append(_table(summary.rows))
    return "\n".join(out)


def _table(rows: list[dict]) -> str:
    header = ("crawler", "identity") + _COLUMNS
    ordered = sorted(
        rows,
        key=lambda r: (
            -sum(x["requests"] for x in rows if x["crawler"] == r["crawler"]),
            r["crawler"] or "",
            _IDENTITY_ORDER.index(r["identity"]) if r["identity"] in _IDENTITY_ORDER else 99,
        ),
    )
    cells = [header] + [
        (row["crawler"] or "(none)", row["identity"]) + tuple(f"{row[c]:,}" for c in _COLUMNS) for row in ordered
    ]
    widths = [max(len(str(line[i])) for line in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(cell).ljust(w) if i < 2 else str(cell).rjust(w) for i, (cell, w) in enumerate(zip(line, widths)))
        for line in cells
    )
