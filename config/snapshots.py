"""Read a folder of dated IP-range snapshots (RANGES_DIR/<source>/<YYYY-MM-DD>.json) and the
Web Bot Auth key-directory snapshots beside them (RANGES_DIR/key-directories/<name>/<day>.json).

Unless `--ranges` names one, the folder is the user's data folder (`default_ranges_dir`), which
`update-ranges` writes and every command reads: it outlives an upgrade and needs no root, unlike
the installed package, which holds no snapshot.

A source folder may hold `span-ends.json`, written by `update-ranges import-git`: for each imported
version's day, the last day it stood for (the day before the file changed again, or HEAD's day),
so a mirror that stopped speaks only up to its last commit, however long before the next snapshot.

Files that cannot be used (bad names, invalid JSON, folders no registry source owns) are listed in
the index's `problems` and skipped, so one broken download never hides the others.
"""
from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import platformdirs

from config.outside_json import OutsideJsonError, read_document
from config.registry import default_registry
from matcher.agents import Registry
from matcher.ip_ranges import RANGE_WINDOW, Document, RangeIndex, build_range_index
from matcher.web_bot_auth import KeyDirectories, parse_key_snapshot

KEY_DIRECTORIES = "key-directories"
SPAN_ENDS = "span-ends.json"
_IGNORED_FILES = frozenset({"README.md"})
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def default_ranges_dir() -> Path:
    """The user's range snapshots: `ranges` in crawl-audit's data folder (on Linux
    `$XDG_DATA_HOME/crawl-audit/ranges`, by default `~/.local/share/crawl-audit/ranges`)."""
    return platformdirs.user_data_path("crawl-audit") / "ranges"


def load_ranges(
    directory: str | Path | None = None, registry: Registry | None = None, window: int = RANGE_WINDOW
) -> RangeIndex:
    """All snapshots under `directory` (default: `default_ranges_dir()`) for `registry`'s range
    sources, speaking within `window` days of a request. A folder named that does not exist is
    an error; the default one not existing yet is no snapshot at all (`update-ranges` makes it)."""
    registry = registry or default_registry()
    operators = {name: source.operator for name, source in registry.range_sources.items()}
    root = Path(directory) if directory is not None else default_ranges_dir()
    if not root.is_dir():
        if directory is None and not root.exists():
            return build_range_index([], operators, [], window=window)
        raise FileNotFoundError(f"ranges folder not found: {root}")
    documents: list[Document] = []
    problems: list[str] = []
    ends: dict[tuple[str, date], date] = {}
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in _IGNORED_FILES or entry.name == KEY_DIRECTORIES:
            continue
        if not entry.is_dir():
            problems.append(f"{entry}: not a source folder; ignored")
        elif entry.name not in operators:
            problems.append(f"{entry}: '{entry.name}' is not a range source of the registry; ignored")
        else:
            documents.extend(_read_source(entry, problems))
            ends.update(((entry.name, day), end) for day, end in read_span_ends(entry / SPAN_ENDS, problems).items())
    keys = _key_directories(root / KEY_DIRECTORIES, registry, problems)
    return build_range_index(documents, operators, problems, keys, ends, window)


def read_span_ends(path: Path, problems: list[str]) -> dict[date, date]:
    """A source's recorded span ends (`SPAN_ENDS`): snapshot day -> the last day it stood for;
    none when the file is absent, and what cannot be read is reported and left out."""
    if not path.exists():
        return {}
    try:
        document = read_document(path)
    except (OSError, OutsideJsonError) as exc:
        problems.append(f"{path}: unreadable ({exc}); snapshots stand until the next one")
        return {}
    if not isinstance(document, dict):
        problems.append(f"{path}: not an object of day -> last day; snapshots stand until the next one")
        return {}
    ends = {}
    for day, end in document.items():
        try:
            ends[date.fromisoformat(day)] = date.fromisoformat(end)
        except (TypeError, ValueError):
            problems.append(f"{path}: {day!r}: {end!r} is not a day and its last day; ignored")
    return ends


def span_ends_document(ends: dict[date, date]) -> bytes:
    """`SPAN_ENDS` as written: day -> last day, oldest first."""
    return (json.dumps({day.isoformat(): ends[day].isoformat() for day in sorted(ends)}, indent=1) + "\n").encode()


def _key_directories(root: Path, registry: Registry, problems: list[str]) -> KeyDirectories:
    snapshots = []
    if root.is_dir():
        for entry in sorted(root.iterdir()):
            if entry.name.startswith("."):
                continue
            directory = registry.key_directories.get(entry.name)
            if directory is None or not entry.is_dir():
                problems.append(f"{entry}: '{entry.name}' is not a key directory of the registry; ignored")
                continue
            for name, taken, document in _read_source(entry, problems):
                snapshot, found = parse_key_snapshot(name, directory.operator, taken, document)
                problems.extend(found)
                if snapshot is not None:
                    snapshots.append(snapshot)
    directories = registry.key_directories.values()
    return KeyDirectories(snapshots, {d.name: d.url for d in directories}, {d.name: d.operator for d in directories})


def _read_source(folder: Path, problems: list[str]) -> list[Document]:
    documents = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name == SPAN_ENDS:
            continue
        taken = _snapshot_day(path)
        if taken is None:
            problems.append(f"{path}: expected a file named YYYY-MM-DD.json; ignored")
            continue
        try:
            document = read_document(path)
        except (OSError, OutsideJsonError) as exc:
            problems.append(f"{path}: unreadable JSON ({exc}); ignored")
            continue
        documents.append((folder.name, taken, document))
    return documents


def _snapshot_day(path: Path) -> date | None:
    if not path.is_file() or path.suffix != ".json" or not _DAY.fullmatch(path.stem):
        return None
    try:
        return date.fromisoformat(path.stem)
    except ValueError:
        return None
