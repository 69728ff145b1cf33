"""`crawl-audit update-ranges import-git`: a range source's past from a repository that tracks
its file, one dated snapshot per day the file changed.

Every commit that changed the file counts at its committer date in UTC (when it entered the
branch); of several commits on one day the last one gives the day's snapshot. A mirror commits
only when the file changes, so the last content is also written as the snapshot of HEAD's day:
the history is current up to HEAD, not only to the last change. The file is the operator's JSON
(kept byte for byte) or a plain list of one prefix a line (written as the operator's JSON of the
prefixes the audit accepts). Each version is read as the audit reads it: one without a usable
prefix is reported and not saved, prefixes broader than the range limit are reported. Days that
already have a snapshot are left as they are, so a second import writes nothing and an
interrupted one finishes when run again. Each imported version's span is recorded beside the
snapshots (`config.snapshots.SPAN_ENDS`): it stood until the day before the next change, the last
one for HEAD's day, so a mirror that stopped speaks for no day after its HEAD, whatever snapshot
comes next.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from config.snapshots import SPAN_ENDS, read_span_ends, span_ends_document
from matcher.agents import RangeSource
from matcher.ip_ranges import parse_snapshot, plain_list_document
from pipeline.evidence.git_history import commit_times, head_time, outcome_at
from pipeline.evidence.ranges_update import write_atomically


@dataclass(frozen=True)
class RangeHistoryImport:
    """What an import found: the days with a usable snapshot, which of them were written now,
    how many were already there, the day the history is current to, and what was wrong."""

    source: str
    days: tuple[date, ...]
    written: tuple[Path, ...]
    already_there: int
    current_to: date | None
    problems: tuple[str, ...]


def import_range_history(repo: Path, path: str, source: RangeSource, directory: Path) -> RangeHistoryImport:
    """Write the daily versions of `path` in `repo` as snapshots of `source` under `directory`."""
    problems: list[str] = []
    bodies: dict[date, bytes] = {}
    for day, commit in _last_commit_per_day(commit_times(repo, path)):
        outcome = outcome_at(repo, commit, path)
        if outcome.status != 200:
            problems.append(f"{path} does not exist in commit {commit[:12]} ({day.isoformat()}); no snapshot that day")
            continue
        body = _snapshot_body(source, day, outcome.body, f"{path}@{commit[:12]}", problems)
        if body is not None:
            bodies[day] = body
    current_to = _utc_day(head_time(repo)) if bodies else None
    last = max(bodies, default=None)
    if last is not None and current_to is not None and current_to > last and _still_there(repo, path):
        bodies[current_to] = bodies[last]
    written = []
    already = 0
    for day in sorted(bodies):
        target = directory / source.name / f"{day.isoformat()}.json"
        if target.exists():
            already += 1
        else:
            write_atomically(target, bodies[day])
            written.append(target)
    if bodies:
        _record_span_ends(directory / source.name / SPAN_ENDS, sorted(bodies), problems)
    return RangeHistoryImport(source.name, tuple(sorted(bodies)), tuple(written), already, current_to, tuple(problems))


def _record_span_ends(path: Path, days: list[date], problems: list[str]) -> None:
    """Record that each version stood until the day before the next, the last for its own day
    (HEAD's, while the file is there). An earlier import's records outside these days are kept;
    inside them (its HEAD's day, before the mirror moved on) they are dropped, since this history
    says the version before them went on standing."""
    ends = {day: end for day, end in read_span_ends(path, problems).items() if not days[0] <= day <= days[-1]}
    ends.update(zip(days, [later - timedelta(days=1) for later in days[1:]] + [days[-1]]))
    write_atomically(path, span_ends_document(ends))


def _last_commit_per_day(commits: Iterable[tuple[str, datetime]]) -> list[tuple[date, str]]:
    """(UTC day, the last commit of that day by committer time), oldest day first."""
    by_day: dict[date, tuple[datetime, str]] = {}
    for commit, moment in commits:
        day = _utc_day(moment)
        if day not in by_day or moment >= by_day[day][0]:
            by_day[day] = (moment, commit)
    return [(day, by_day[day][1]) for day in sorted(by_day)]


def _snapshot_body(source: RangeSource, day: date, body: bytes, name: str, problems: list[str]) -> bytes | None:
    """The bytes to save for one version, or None (reported) when the audit could not use it."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(f"{name}: not UTF-8 text; no snapshot for {day.isoformat()}")
        return None
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document, found = plain_list_document(text, name)
        problems.extend(found)
        body = (json.dumps(document, indent=1) + "\n").encode()
    except RecursionError:
        problems.append(f"{name}: JSON nested too deeply; no snapshot for {day.isoformat()}")
        return None
    snapshot, found = parse_snapshot(source.name, source.operator, day, document)
    problems.extend(found)
    return body if snapshot is not None else None


def _still_there(repo: Path, path: str) -> bool:
    return outcome_at(repo, "HEAD", path).status == 200


def _utc_day(moment: datetime) -> date:
    return moment.astimezone(timezone.utc).date()
