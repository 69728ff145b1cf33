"""Reading files a table or a command line names, without reading what it must not.

A table names its bodies by relative path, and a captures folder is walked as it is found: a
name (or a symlink) that resolves outside the folder is refused, and so is anything that is not
a regular file. A FIFO would block the run and a device would never end, so neither is opened for
reading; only a regular file is, and at most `limit` bytes of it are read.
"""
from __future__ import annotations

import bz2
import gzip
import os
import stat
from pathlib import Path, PurePosixPath


class NotReadable(ValueError):
    """A name that resolves outside its folder, or a path that is not a regular file."""


def is_url(location: str) -> bool:
    """Whether `location` names a Beam filesystem other than the local one (gs://, s3://, ...)."""
    return "://" in location


def inside(folder: Path, name: object) -> Path:
    """The file `name` (relative, as a table writes it) names under `folder`, symlinks followed;
    NotReadable when it is not a relative path or resolves outside `folder`."""
    if not isinstance(name, str) or not name or "\0" in name:
        raise NotReadable(f"a file name must be a non-empty relative path, got {name!r}")
    if PurePosixPath(name).is_absolute() or Path(name).is_absolute():
        raise NotReadable(f"{name!r} is an absolute path; name a file under {folder}")
    root = folder.resolve()
    target = (root / name).resolve()
    if not target.is_relative_to(root):
        raise NotReadable(f"{name!r} resolves to {target}, outside {root}")
    return target


def relative_url(folder: str, name: object) -> str:
    """`name` joined to a remote `folder`; refused when absolute or when it climbs out with `..`."""
    if not isinstance(name, str) or not name or is_url(name) or name.startswith("/"):
        raise NotReadable(f"a file name must be a non-empty relative path, got {name!r}")
    if ".." in PurePosixPath(name).parts:
        raise NotReadable(f"{name!r} climbs out of {folder} with '..'")
    return f"{folder.rstrip('/')}/{name}"


def require_regular(location: str) -> None:
    """NotReadable when a local `location` exists but is not a regular file (a directory, FIFO,
    device or socket). Remote locations and missing files are left to the reader's own error."""
    if is_url(location):
        return
    try:
        mode = os.stat(location).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(mode):
        raise NotReadable(f"{location} is {_kind(mode)}, not a regular file")


def read_regular(path: Path, limit: int = -1) -> bytes:
    """At most `limit` bytes (-1: all) of the regular file at `path`. Opened without blocking
    (a FIFO's open waits for a writer) and checked on the open descriptor, so a swap after the
    check cannot slip a FIFO or device in."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise NotReadable(f"cannot read {path}: {error.strerror or error}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise NotReadable(f"{path} is {_kind(mode)}, not a regular file")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            return handle.read(limit)
        except OSError as error:
            raise NotReadable(f"cannot read {path}: {error.strerror or error}") from None


def read_location(location: str, limit: int = -1) -> bytes:
    """At most `limit` bytes (-1: all) of a table on local disk (a regular file only) or on any
    storage Beam reaches (`gs://`, `s3://`, ...), whose filesystems are loaded only for a URL;
    decompressed when its name ends in `.gz` or `.bz2`."""
    if is_url(location):
        from apache_beam.io.filesystems import FileSystems

        with FileSystems.open(location) as handle:  # decompresses by the name, as below
            return handle.read(limit)
    data = read_regular(Path(location))
    decompress = _DECOMPRESSORS.get(Path(location).suffix)
    if decompress is not None:
        try:
            data = decompress(data)
        except (OSError, EOFError, ValueError) as error:
            raise NotReadable(f"{location} does not decompress: {error}") from None
    return data if limit < 0 else data[:limit]


_DECOMPRESSORS = {".gz": gzip.decompress, ".bz2": bz2.decompress}


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"
