"""A batch run's `--out` folder: written aside, moved into place complete, described by its manifest.

The sinks write into a sibling folder (`OUT.partial-XXXXXXXX`, same parent, so the same file
system). When the pipeline has finished, `manifest.json` is written there last and the folder is
renamed to `OUT`. So `OUT` only ever holds a complete run or nothing: a run that fails or is
stopped by a signal removes its `.partial-` sibling on the way out (only `kill -9` leaves one), and
part files of an earlier run (another format,
another shard count) can never mix with a new run's.

An existing `OUT` must be empty, or be replaced on purpose with `--overwrite`; even then only a
folder holding exactly what a run wrote (its manifest lists every file) is replaced, so a
mistyped `--out $HOME` never deletes anything.

A manifest lists each table's files; readers (the closing report) read those files and only
those, and refuse a folder without one.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Sequence

from matcher.logformats.inference import InferredFormat
from matcher.records import SCHEMA_VERSION
from matcher.timerange import duration_text
from pipeline.tables.files import MissingFile, RunFolderError, read_member, write_whole


MANIFEST = "manifest.json"
MANIFEST_FORMAT = "crawl-audit-run"
MANIFEST_VERSION = 1
# What `report` and `whatif` add to a complete run afterwards: drawn from its tables, so they
# belong to the run and `--overwrite` replaces them with it.
DERIVED_FILES = frozenset({"report.html"})
DERIVED_FOLDER = "whatif/"
# A manifest lists a run's files, a few per table and worker: far below this.
MAX_MANIFEST_BYTES = 64 << 20


@dataclass(frozen=True)
class RunFolder:
    """Where a batch run writes (`staging`) and where its output lands when complete (`out`)."""

    out: Path
    staging: Path
    overwrite: bool

    @classmethod
    def prepare(cls, out: str, overwrite: bool) -> RunFolder:
        """Check `out` and create the staging folder beside it, before any work is done."""
        if "://" in out:
            raise RunFolderError(
                f"--out {out}: a batch run writes a local folder (moved into place when complete);"
                " copy it to remote storage afterwards"
            )
        target = Path(out).resolve()  # a symlinked --out: the folder it points to is replaced
        _check_replaceable(target, overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f"{target.name}.partial-{secrets.token_hex(4)}")
        staging.mkdir()
        return cls(target, staging, overwrite)

    def commit(self, manifest: dict) -> None:
        """Write the manifest last, then move the complete run into place."""
        _write_json(self.staging / MANIFEST, manifest)
        if _has_entries(self.out):
            # checked again: another run may have finished into `out` meanwhile
            _check_replaceable(self.out, self.overwrite)
            replaced = self.out.with_name(f"{self.out.name}.replaced-{secrets.token_hex(4)}")
            self.out.rename(replaced)
            self.staging.rename(self.out)
            shutil.rmtree(replaced)
        else:
            os.replace(self.staging, self.out)  # an empty directory is replaced in one step

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _check_replaceable(target: Path, overwrite: bool) -> None:
    if target.exists() and not target.is_dir():
        raise RunFolderError(f"--out {target} is a file, not a folder")
    if not _has_entries(target):
        return
    if not overwrite:
        raise RunFolderError(
            f"--out {target} is not empty: give --overwrite to replace the run in it, or choose another folder"
        )
    try:
        listed = set(manifest_files(read_manifest(target)))
    except RunFolderError as error:
        raise RunFolderError(f"--overwrite replaces only a complete run: {error}") from None
    stray = sorted(
        relative
        for relative in (path.relative_to(target).as_posix() for path in target.rglob("*") if not path.is_dir())
        if relative not in listed | DERIVED_FILES and relative != MANIFEST and not relative.startswith(DERIVED_FOLDER)
    )
    if stray:
        raise RunFolderError(
            f"--overwrite replaces only what a run wrote, and {target / stray[0]} is not listed in its"
            f" {MANIFEST} ({len(stray)} such files); move them away or choose another folder"
        )


def _has_entries(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def read_manifest(out: str | Path) -> dict:
    """The manifest of a complete run; RunFolderError for a folder that holds none, or whose
    manifest is not one a run writes."""
    path = Path(out) / MANIFEST
    try:
        manifest = json.loads(read_member(out, MANIFEST, MAX_MANIFEST_BYTES))
    except MissingFile:
        raise RunFolderError(
            f"{out} holds no complete run: no {MANIFEST} (a run still going, killed, or a streaming output)"
        ) from None
    except ValueError as error:
        if isinstance(error, RunFolderError):
            raise
        raise RunFolderError(f"{path}: unreadable manifest: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise RunFolderError(f"{path} is not a crawl-audit run manifest")
    if manifest.get("format_version") != MANIFEST_VERSION:
        raise RunFolderError(
            f"{path}: manifest format_version {manifest.get('format_version')!r}, this crawl-audit reads"
            f" {MANIFEST_VERSION}"
        )
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or not all(_is_table(table) for table in tables.values()):
        raise RunFolderError(f"{path}: tables must map names to a format and files inside the run's folder")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or not _are_counts(counts):
        raise RunFolderError(f"{path}: counts must map names to counts of lines, got {_short(counts)}")
    return manifest


def _are_counts(counts: dict, by_reason: bool = False) -> bool:
    """Names mapped to counts; a `..._reasons` name to counts by reason."""
    return all(
        isinstance(name, str)
        and (
            _are_counts(n, True) if name.endswith("_reasons") and not by_reason and isinstance(n, dict)
            else isinstance(n, int) and not isinstance(n, bool) and n >= 0
        )
        for name, n in counts.items()
    )


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_table(table: object) -> bool:
    if not isinstance(table, dict) or not isinstance(table.get("files"), list):
        return False
    return all(
        isinstance(name, str) and name and not Path(name).is_absolute() and ".." not in Path(name).parts
        for name in table["files"]
    )


def manifest_files(manifest: dict) -> list[str]:
    """Every file a run wrote, relative to its folder, as its manifest lists them."""
    return [name for table in manifest["tables"].values() for name in table["files"]]


@dataclass(frozen=True)
class LogFile:
    """A log file a run read, as its manifest names it."""

    path: str
    size_in_bytes: int
    # the format `--log-format auto` detected in it (None: the run named one, or the file was empty)
    log_format: str | None = None
    # the layout inferred from its lines when no known format read them (`inference.InferredFormat`)
    inferred: InferredFormat | None = None


def manifest(
    staging: Path, settings, log_files: Sequence[LogFile], formats: dict[str, str], worker_processes: int | None,
    range_problems: Sequence[str] = (),
) -> dict:
    """The manifest of the run written under `staging`: what it read, how, what it counted, and
    each table (a folder, or a file such as `counts.json`) with its format and files.
    `settings` are the run's (`pipeline.graph.settings.RunSettings`); `worker_processes` how many
    processes a local runner read and audited in (None for other runners); `range_problems` the
    range and key files, or parts of them, the run could not use."""
    inputs, identity, history = settings.inputs, settings.identity, settings.history
    files: dict[str, list[str]] = {}
    for path in sorted(staging.rglob("*")):
        if path.is_file():
            relative = path.relative_to(staging)
            table = relative.parts[0] if len(relative.parts) > 1 else relative.stem
            files.setdefault(table, []).append(relative.as_posix())
    return {
        "format": MANIFEST_FORMAT,
        "format_version": MANIFEST_VERSION,
        "schema_version": SCHEMA_VERSION,
        "crawl_audit_version": crawl_audit_version(),
        "completed": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "inputs": {
            "logs": inputs.logs,
            "log_files": [_log_file_entry(f) for f in sorted(log_files, key=lambda f: f.path)],
            "robots": inputs.robots,
            "page_directives": inputs.page_directives,
            "registry": inputs.registry,
            "ranges": inputs.ranges,
            "range_problems": list(range_problems),
            "prior_run": inputs.prior_run,
            "dns": identity.dns,
            "dns_server": identity.dns_server,
        },
        "options": {
            "log_format": inputs.log_format,
            "log_timezone": inputs.log_timezone,
            "default_host": inputs.default_host,
            "field_map": inputs.field_map,
            "range_window": identity.range_window,
            "trusted_proxies": ",".join(str(network) for network in identity.proxies.networks) or None,
            "cache_grace": duration_text(history.cache_grace),
            "error_limit": duration_text(history.error_limit),
            "window": duration_text(settings.crawl_delay.window),
            "format": settings.outputs.format,
            "runner": settings.runner,
            "worker_processes": worker_processes,
        },
        "counts": json.loads((staging / "counts.json").read_text(encoding="utf-8")),
        "tables": {table: {"format": formats.get(table, "unknown"), "files": names} for table, names in files.items()},
    }


def _log_file_entry(log_file: LogFile) -> dict:
    entry = {"path": log_file.path, "bytes": log_file.size_in_bytes}
    if log_file.log_format is not None:
        entry["log_format"] = log_file.log_format
    if log_file.inferred is not None:
        entry["log_format_inferred"] = {
            "option": log_file.inferred.option(), "read": log_file.inferred.read, "sample": log_file.inferred.sample,
        }
        if log_file.inferred.field_map is not None:
            entry["field_map"] = dict(log_file.inferred.field_map)
    return entry


def crawl_audit_version() -> str:
    try:
        return metadata.version("crawl-audit")
    except metadata.PackageNotFoundError:
        return "unknown"


def _write_json(path: Path, value: dict) -> None:
    write_whole(path, (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
