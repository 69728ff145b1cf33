"""The counts of a finished run's verdicts that the report and run health read (`report_counts.json`)."""
from __future__ import annotations

import json
from pathlib import Path

from matcher import records
from matcher.report_counts import ReportCounts
from pipeline.tables import reading as tables
from pipeline.tables.run_folder import RunFolderError, read_manifest


def report_counts(out: str) -> ReportCounts:
    """The counts the run wrote; a run folder from before they were written is counted from its
    verdicts, one at a time (slower)."""
    listed = read_manifest(out)["tables"].get(records.REPORT_COUNTS_TABLE)
    if listed is None:
        return ReportCounts.of(map(_as_written, tables.rows(out, records.VERDICTS_TABLE)))
    try:
        (name,) = listed["files"]
        return ReportCounts.from_json(json.loads(Path(out, name).read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as error:
        raise RunFolderError(f"{out}: unreadable report counts ({error!r}); run the audit again") from None


def _as_written(row: dict) -> dict:
    """A verdict read back with its timestamps as the audit made them."""
    version = row["robots_version"]
    if version is not None:
        version = {**version, "effective_from": tables.moment(version["effective_from"])}
    return {**row, "ts": tables.moment(row["ts"]), "robots_version": version}
