"""`crawl-audit update-ranges import-git`: a range source's past from a repository that tracks
its file, one dated snapshot per day the file changed.

The file's changes are read as `history import-git` reads them (`git_repository`): on the
branch's first-parent history, each dated in UTC when it reached the branch, renames followed back
from today's path; of several changes on one day the last one gives the day's snapshot. A mirror
commits only when the file changes, so the last content is also written as the snapshot of the
branch tip's day: the history is current up to the tip, not only to the last change. A version
larger than a download may be (`ranges_update.MAX_BYTES`) is reported, not read. The file is the operator's JSON
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from config.snapshots import SPAN_ENDS, read_span_ends, span_ends_document
from matcher.agents import RangeSource
from matcher.ip_ranges import parse_snapshot, plain_list_document
from pipeline.evidence.git_repository import BranchHistory, Change, Repository, branch_history
from pipeline.evidence.ranges_update import MAX_BYTES, write_atomically


@dataclass(frozen=True)
class RangeHistoryImport:
    """What an import found: the days with a usable snapshot, which of them were written now,
    how many were already there, the day the history is current to, what was wrong, and the
    branch and paths read."""

    source: str
    days: tuple[date, ...]
    written: tuple[Path, ...]
    already_there: int
    current_to: date | None
    problems: tuple[str, ...]
    history: BranchHistory


def import_range_history(
    repo: Path, paths: Sequence[str], source: RangeSource, directory: Path, branch: str | None = None
) -> RangeHistoryImport:
    """Write the daily versions of the file (`paths[0]` today, older paths after it) in `repo` as
    snapshots of `source` under `directory`."""
    repository = Repository(repo)
    history = branch_history(repository, paths, branch)
    problems: list[str] = []
    bodies: dict[date, bytes] = {}
    daily = _last_change_per_day(history.changes)
    files = repository.files_at([(change.commit, change.path) for _, change in daily])
    for (day, change), found in zip(daily, files):
        name = f"{change.path}@{change.commit[:12]}"
        if found.blob is None:
            problems.append(f"{change.path} does not exist in commit {change.commit[:12]} ({day.isoformat()}); no snapshot that day")
            continue
        if found.size > MAX_BYTES:
            problems.append(f"{name}: {found.size:,} bytes, more than the {MAX_BYTES:,} a range file may be; no snapshot for {day.isoformat()}")
            continue
        body = _snapshot_body(source, day, repository.read_blob(found.blob, MAX_BYTES), name, problems)
        if body is not None:
            bodies[day] = body
    current_to = _utc_day(history.tip_time) if bodies else None
    last = max(bodies, default=None)
    if last is not None and current_to is not None and current_to > last and files[-1].blob is not None:
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
    return RangeHistoryImport(
        source.name, tuple(sorted(bodies)), tuple(written), already, current_to, tuple(problems), history
    )


def _record_span_ends(path: Path, days: list[date], problems: list[str]) -> None:
    """Record that each version stood until the day before the next, the last for its own day
    (HEAD's, while the file is there). An earlier import's records outside these days are kept;
    inside them (its HEAD's day, before the mirror moved on) they are dropped, since this history
    says the version before them went on standing."""
    ends = {day: end for day, end in read_span_ends(path, problems).items() if not days[0] <= day <= days[-1]}
    ends.update(zip(days, [later - timedelta(days=1) for later in days[1:]] + [days[-1]]))
    write_atomically(path, span_ends_document(ends))


def _last_change_per_day(changes: Iterable[Change]) -> list[tuple[date, Change]]:
    """(UTC day, the day's last change on the branch), oldest day first."""
    by_day: dict[date, Change] = {}
    for change in changes:  # in branch order: a later one on the same day replaces it
        by_day[_utc_day(change.moment)] = change
    return sorted(by_day.items())


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
    except ValueError as error:  # an integer too long to read, say
        problems.append(f"{name}: unreadable JSON ({error}); no snapshot for {day.isoformat()}")
        return None
    snapshot, found = parse_snapshot(source.name, source.operator, day, document)
    problems.extend(found)
    return body if snapshot is not None else None


def _utc_day(moment: datetime) -> date:
    return moment.astimezone(timezone.utc).date()
