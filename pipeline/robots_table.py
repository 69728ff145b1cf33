"""Readers of the robots history table (DESIGN §5).

Two layouts hold the same table:

- JSON Lines: one row per version, `{"host", "effective_from", "status", "body" | "body_file"}`,
  `body_file` relative to the table's folder and read as bytes, so a BOM or CRLF survives.
- A captures folder: `HOST/TIMESTAMP.EXT`, where TIMESTAMP is ISO 8601 in UTC
  (`2026-11-02T09:00:00Z` or `20261102T090000Z`) and EXT says what the fetch gave:
  `.txt` a 200 body, `.NNN` that HTTP status (its bytes, if any, as the body; only a 2xx
  body is ever parsed), `.unreachable` no answer at all.
  An optional `HOST/observations.log` (written by `crawl-audit history`) lists every time the
  host's robots.txt was fetched, one RFC 3339 timestamp at the start of each line; with it,
  each version's `observed_before` is the last fetch before it (DESIGN §5). Names starting
  with `.` are a writer's temporary files and are skipped.

A malformed table is the site owner's configuration, not traffic: it stops the run
with one message naming the file and row, rather than silently changing verdicts.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from apache_beam.io.filesystems import FileSystems

from matcher.history import RobotsTableError, RobotsVersion, host_key, version_from_row, with_observations
from pipeline.json_table import read_json_table

OBSERVATIONS_LOG = "observations.log"
_CAPTURE = re.compile(r"(?P<stamp>\d{8}T\d{6}Z|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)\.(?P<ext>txt|\d{3}|unreachable)")


def read_robots_table(location: str) -> list[RobotsVersion]:
    """All versions of a JSON Lines table or a captures folder."""
    if Path(location).is_dir():
        return _read_captures(Path(location))
    return _read_jsonl(location)


def _read_jsonl(location: str) -> list[RobotsVersion]:
    folder = location.rsplit("/", 1)[0] if "/" in location else "."
    return read_json_table("robots table", location, lambda row: version_from_row(row, _row_body(row, folder)), RobotsTableError)


def _row_body(row: dict, folder: str) -> bytes | None:
    if "body" in row:
        if not isinstance(row["body"], str):
            raise RobotsTableError("body must be a string (use body_file for exact bytes)")
        return row["body"].encode("utf-8")
    if "body_file" in row:
        with FileSystems.open(FileSystems.join(folder, row["body_file"])) as handle:
            return handle.read()
    return None


def _read_captures(folder: Path) -> list[RobotsVersion]:
    versions = []
    for path in sorted(folder.glob("*/*")):
        if path.name.startswith(".") or path.name == OBSERVATIONS_LOG:
            continue
        match = _CAPTURE.fullmatch(path.name)
        if match is None:
            raise RobotsTableError(f"{path}: not a capture name (HOST/TIMESTAMP.txt|.NNN|.unreachable)")
        ext = match["ext"]
        status = 200 if ext == "txt" else None if ext == "unreachable" else int(ext)
        body = path.read_bytes() if status is not None else None
        try:
            versions.append(RobotsVersion(path.parent.name, _capture_time(match["stamp"]), status, body))
        except RobotsTableError as error:
            raise RobotsTableError(f"{path}: {error}") from error
    for log in sorted(folder.glob(f"*/{OBSERVATIONS_LOG}")):
        host = host_key(log.parent.name)
        observed = with_observations([v for v in versions if v.host == host], _observation_times(log))
        versions = [v for v in versions if v.host != host] + observed
    return versions


def _observation_times(log: Path) -> list[datetime]:
    times = []
    for number, line in enumerate(log.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        stamp = line.split(maxsplit=1)[0]
        try:
            moment = datetime.fromisoformat(stamp)
        except ValueError:
            moment = None
        if moment is None or moment.utcoffset() is None:
            raise RobotsTableError(f"{log}:{number}: not an RFC 3339 timestamp with an offset: {stamp!r}")
        times.append(moment)
    return times


def _capture_time(stamp: str) -> datetime:
    compact = "%Y%m%dT%H%M%SZ" if "-" not in stamp else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(stamp, compact).replace(tzinfo=timezone.utc)
