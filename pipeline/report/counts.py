"""The counts of a finished run's verdicts that the report and run health read (`report_counts.json`)."""
from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

from matcher import records
from matcher.report_counts import DISALLOWED_FIELDS, ReportCounts
from pipeline.tables import reading as tables
from pipeline.tables.files import RunFolderError, read_member
from pipeline.tables.run_folder import read_manifest

# What a run writes to report_counts.json is bounded by what the page shows; far below this.
MAX_REPORT_COUNTS_BYTES = 1 << 30


def report_counts(out: str) -> ReportCounts:
    """The counts the run wrote; a run folder from before they were written is counted from its
    verdicts, one at a time (slower)."""
    listed = read_manifest(out)["tables"].get(records.REPORT_COUNTS_TABLE)
    if listed is None:
        return ReportCounts.of(map(_as_written, tables.rows(out, records.VERDICTS_TABLE)))
    try:
        (name,) = listed["files"]
    except ValueError:
        raise RunFolderError(f"{out}: the manifest lists {len(listed['files'])} report counts files, not one") from None
    document = read_member(out, name, MAX_REPORT_COUNTS_BYTES)
    try:
        counts = ReportCounts.from_json(json.loads(document))
        problem = _counts_problem(counts)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        problem = repr(error)
    if problem is not None:
        raise RunFolderError(f"{Path(out, name)}: unreadable report counts ({problem}); run the audit again")
    return counts


def _counts_problem(counts: ReportCounts) -> str | None:
    """What in the counts read back is not what the report and run health draw from, or None."""
    text = (str, type(None))
    sections = {
        "hosts": (counts.hosts, lambda key: isinstance(key, text)),
        "timeline": (counts.timeline, lambda key: len(key) == 2 and isinstance(key[1], datetime)),
        "spoofed_addresses": (counts.spoofed_addresses, lambda key: len(key) == 2),
        "spoofed_user_agents": (counts.spoofed_user_agents, lambda key: len(key) == 2),
        "unjudged": (counts.unjudged, lambda key: len(key) == 3 and isinstance(key[2], date)),
        "identity_notes": (counts.identity_notes, lambda key: len(key) == 3 and isinstance(key[2], date)),
    }
    for name, (section, key_fits) in sections.items():
        for key, n in section.items():
            if not _is_count(n) or not key_fits(key):
                return f"a {name} entry is not a key and a count: {key!r}"
    # (label, identity) -> exact totals and the top rows of DISALLOWED_FIELDS
    for key, of in counts.disallowed.items():
        if len(key) != 2 or not (_is_count(of.requests) and _is_count(of.distinct)):
            return f"a disallowed_totals entry is not a key and two counts: {key!r}"
        for fields, n in of.top:
            if len(fields) != len(DISALLOWED_FIELDS) or not _is_count(n):
                return f"a disallowed entry is not a key and a count: {(*key, *fields)!r}"
    return None


def _is_count(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool)


def _as_written(row: dict) -> dict:
    """A verdict read back with its timestamps as the audit made them."""
    version = row["robots_version"]
    if version is not None:
        version = {**version, "effective_from": tables.moment(version["effective_from"])}
    return {**row, "ts": tables.moment(row["ts"]), "robots_version": version}
