"""Readers of the robots history table (docs/semantics.md § History).

Two layouts hold the same table:

- JSON Lines: one row per version, `{"host", "effective_from", "status", "body" | "body_file"}`,
  `body_file` relative to the table's folder and read as bytes, so a BOM or CRLF survives. It
  must stay inside that folder (symlinks followed) and name a regular file; a captures folder
  is held to the same rule. Only the part the parser reads (500 KiB, plus one byte to know it
  was cut) is read.
- A captures folder: `HOST/TIMESTAMP.EXT`, where TIMESTAMP is ISO 8601 in UTC
  (`2026-11-02T09:00:00Z` or `20261102T090000Z`) and EXT says what the fetch gave:
  `.txt` a 200 body, `.NNN` that HTTP status (its bytes, if any, as the body; only a 2xx
  body is ever parsed), `.unreachable` no answer at all.
  An optional `HOST/observations.log` (written by `crawl-audit history`) lists every time the
  host's robots.txt was fetched, one RFC 3339 timestamp at the start of each line; with it,
  each version's `observed_before` is the last fetch before it (docs/semantics.md § History).
  Names starting with `.` are a writer's temporary files and are skipped.

A malformed table is the site owner's configuration, not traffic: it stops the run at launch,
rather than silently changing verdicts or failing later on a worker, with one message naming the
file and row of every problem: rows that cannot be read, bodies that cannot be read, bad times,
two different versions of a host at one time, and an `observed_before` earlier than the version
before it.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path


from matcher.history import RobotsTableError, RobotsVersion, version_from_row, with_observations
from matcher.hosts import host_key
from matcher.records import rfc3339
from matcher.robots import MAX_BYTES
from matcher.timerange import parse_timestamp
from pipeline.evidence.json_table import json_rows, problem_list
from pipeline.evidence.captures import CAPTURE_NAME, OBSERVATIONS_LOG, capture_time
from pipeline.evidence.confined import NotReadable, inside, is_url, read_location, read_regular, relative_url

# What the parser reads of a body, and one byte more so that it knows the body was cut.
_BODY_LIMIT = MAX_BYTES + 1


def read_robots_table(location: str) -> list[RobotsVersion]:
    """All versions of a JSON Lines table or a captures folder; any problem raises one
    `RobotsTableError` listing each with its file and row."""
    if not is_url(location) and Path(location).is_dir():
        versions, problems = _read_captures(Path(location))
    else:
        versions, problems = _read_jsonl(location)
        if problems and not is_url(location) and _is_robots_txt(Path(location)):
            raise RobotsTableError(
                f"{location} is a robots.txt file, not a robots table: a table holds each version of a host's"
                " robots.txt with the moment it took effect (JSON Lines rows of host, effective_from, status,"
                f" body; or a captures folder); make one from this file with: crawl-audit history import-file"
                f" {location} --host HOST --effective-from WHEN --into robots/ (then --robots robots/)"
            )
    if problems:
        raise RobotsTableError(problem_list("robots table", location, problems))
    return versions


_ROBOTS_LINE = re.compile(r"(?i)\s*(user-agent|disallow|allow|sitemap|crawl-delay)\s*:")


def _is_robots_txt(path: Path) -> bool:
    """Whether the first line that is neither blank nor a comment is a robots.txt line."""
    try:
        head = read_regular(path, 4096).decode("utf-8", "replace").lstrip("\ufeff")
    except NotReadable:
        return False
    for line in head.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return _ROBOTS_LINE.match(line) is not None
    return False


def _read_jsonl(location: str) -> tuple[list[RobotsVersion], list[str]]:
    rows, problems = json_rows(
        "robots table", location, lambda row: version_from_row(row, _row_body(row, location)), RobotsTableError
    )
    origins = [(f"{location}:{number}", version) for number, version in rows]
    return [version for _, version in origins], problems + _history_problems(origins)


def _row_body(row: dict, location: str) -> bytes | None:
    if "body" in row:
        if not isinstance(row["body"], str):
            raise RobotsTableError("body must be a string (use body_file for exact bytes)")
        return row["body"].encode("utf-8")
    if "body_file" not in row:
        return None
    try:
        if is_url(location):
            return read_location(relative_url(location.rsplit("/", 1)[0], row["body_file"]), _BODY_LIMIT)
        return read_regular(inside(Path(location).parent, row["body_file"]), _BODY_LIMIT)
    except NotReadable as error:
        raise RobotsTableError(f"body_file: {error}") from None


def _read_captures(folder: Path) -> tuple[list[RobotsVersion], list[str]]:
    origins, problems = [], []
    for path in sorted(folder.glob("*/*")):
        if path.name.startswith(".") or path.name == OBSERVATIONS_LOG:
            continue
        match = CAPTURE_NAME.fullmatch(path.name)
        if match is None:
            problems.append(f"{path}: not a capture name (HOST/TIMESTAMP.txt|.NNN|.unreachable)")
            continue
        ext = match["ext"]
        status = 200 if ext == "txt" else None if ext == "unreachable" else int(ext)
        try:
            # A host folder or capture that is a symlink out of the folder is refused like a body_file.
            body = read_regular(inside(folder, f"{path.parent.name}/{path.name}"), _BODY_LIMIT)
            version = RobotsVersion(
                path.parent.name, capture_time(match["stamp"]), status, body if status is not None else None
            )
        except ValueError as error:
            problems.append(f"{path}: {error}")
            continue
        origins.append((str(path), version))
    problems += _history_problems(origins)
    fetches = {}
    for log in sorted(folder.glob(f"*/{OBSERVATIONS_LOG}")):
        fetches[host_key(log.parent.name)] = _observation_times(folder, log, problems)
    versions = [version for _, version in origins]
    if problems:
        return versions, problems
    for host, times in fetches.items():
        observed = with_observations([v for v in versions if v.host == host], times)
        versions = [v for v in versions if v.host != host] + observed
    return versions, problems


def _observation_times(folder: Path, log: Path, problems: list[str]) -> list[datetime]:
    """The fetch times an observations log lists, each bad line noted in `problems`."""
    try:
        text = read_regular(inside(folder, f"{log.parent.name}/{log.name}")).decode("utf-8")
    except (NotReadable, UnicodeDecodeError) as error:
        problems.append(f"{log}: {error}")
        return []
    times = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        stamp = line.split(maxsplit=1)[0]
        try:
            times.append(parse_timestamp(stamp))
        except ValueError:
            problems.append(f"{log}:{number}: not an RFC 3339 timestamp with an offset: {stamp!r}")
    return times


def _history_problems(origins: list[tuple[str, RobotsVersion]]) -> list[str]:
    """What would stop a host's history from being built on a worker, found here first: two
    different versions at one time (the audit could only pick one arbitrarily), and an
    `observed_before` earlier than the version before it. Equal repeats are one version."""
    by_host: dict[str, list[tuple[str, RobotsVersion]]] = {}
    for origin, version in origins:
        by_host.setdefault(version.host, []).append((origin, version))
    problems = []
    for host_origins in by_host.values():
        kept: list[tuple[str, RobotsVersion]] = []
        for origin, version in sorted(host_origins, key=lambda item: item[1].effective_from):
            if kept and kept[-1][1].effective_from == version.effective_from:
                seen, first = kept[-1]
                if (first.status, first.sha256) != (version.status, version.sha256):
                    problems.append(
                        f"{version.host} has two different versions at {rfc3339(version.effective_from)}:"
                        f" {seen} (status {first.status}) and {origin} (status {version.status})"
                    )
                continue
            if kept and version.observed_before is not None and version.observed_before < kept[-1][1].effective_from:
                seen, previous = kept[-1]
                problems.append(
                    f"{origin}: observed_before {rfc3339(version.observed_before)} is earlier than the"
                    f" version before it ({seen}, {rfc3339(previous.effective_from)})"
                )
            kept.append((origin, version))
    return problems
