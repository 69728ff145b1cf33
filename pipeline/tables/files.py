"""The files of a run folder, reached the way a run wrote them and no other way.

A run folder may have been edited, damaged or planted with links since the run wrote it, so
nothing below the folder the user named is followed: every folder on the way to a file and the
file itself are opened with `O_NOFOLLOW`, one name at a time from the folder above. A symlink
anywhere below `OUT` (to another file, another folder, `/dev/zero`) is refused rather than
followed, and so is anything that is not a regular file (a FIFO is opened without blocking and
refused, so it never hangs a reader). Whole files are read up to a bound.

Writes go to a new file in the same folder, renamed over the old name once complete and synced:
a reader, or a disk that fills up halfway, never leaves a file that looks complete but is not.
A failed write names the file and why, and leaves nothing of itself behind.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

__all__ = ["RunFolderError", "MissingFile", "open_member", "read_member", "remove_member", "write_member", "write_whole"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC


class RunFolderError(ValueError):
    """An `--out` folder that a run may not use, or a folder that holds no complete run."""


class MissingFile(RunFolderError):
    """A file of a run folder that is not there."""


def _parts(name: str) -> tuple[str, ...]:
    parts = PurePosixPath(name).parts
    if not parts or PurePosixPath(name).is_absolute() or ".." in parts or "\0" in name:
        raise RunFolderError(f"{name!r} is not a file name inside a run folder")
    return parts


def _open_folder(out: Path, parts: tuple[str, ...], create: bool = False) -> int:
    """A descriptor of the folder `parts` names under `out` (the folder the user named, taken as
    named), each folder below it opened without following a link."""
    try:
        descriptor = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as error:
        raise _refusal(out, error) from None
    walked = out
    for part in parts:
        walked = walked / part
        try:
            if create:
                try:
                    os.mkdir(part, dir_fd=descriptor)
                except FileExistsError:
                    pass
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=descriptor)
        except OSError as error:
            raise _refusal(walked, error, descriptor, part) from None
        finally:
            os.close(descriptor)
        descriptor = inner
    return descriptor


def _refusal(path: Path, error: OSError, folder: int | None = None, name: str | None = None) -> RunFolderError:
    """What is wrong with `path`, found while opening it (named `name` in the folder `folder`)."""
    if folder is not None and name is not None:
        try:
            mode = os.lstat(name, dir_fd=folder).st_mode
        except OSError:
            mode = None
        if mode is not None and stat.S_ISLNK(mode):
            return RunFolderError(f"{path} is a symbolic link: nothing in a run folder is followed through a link")
        if mode is not None and error.errno in (errno.ENOTDIR, errno.ELOOP):
            return RunFolderError(f"{path} is {_kind(mode)}, not a folder")
    if error.errno == errno.ENOENT:
        return MissingFile(f"{path} is missing")
    return RunFolderError(f"{path}: {error.strerror or error}")


@contextmanager
def open_member(out: str | Path, name: str) -> Iterator[BinaryIO]:
    """The regular file `name` (relative, as a manifest lists it) of the run folder `out`, open for
    reading; RunFolderError when it, or a folder on the way, is a link or not what it should be."""
    out, parts = Path(out), _parts(name)
    folder = _open_folder(out, parts[:-1])
    try:
        descriptor = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
    except OSError as error:
        raise _refusal(out / name, error, folder, parts[-1]) from None
    finally:
        os.close(folder)
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise RunFolderError(f"{out / name} is {_kind(mode)}, not a regular file")
    os.set_blocking(descriptor, True)
    with os.fdopen(descriptor, "rb") as handle:
        yield handle


def read_member(out: str | Path, name: str, limit: int) -> bytes:
    """The whole regular file `name` of the run folder `out`, refused when larger than `limit` bytes."""
    with open_member(out, name) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            raise RunFolderError(f"{Path(out, name)}: {error.strerror or error}") from None
    if len(data) > limit:
        raise RunFolderError(f"{Path(out, name)} is larger than {limit:,} bytes, more than a run writes there")
    return data


def write_member(out: str | Path, name: str, data: bytes) -> Path:
    """Write `name` (relative, folders created as needed) of the run folder `out` whole, with no
    link followed on the way; returns its path."""
    out, parts = Path(out), _parts(name)
    folder = _open_folder(out, parts[:-1], create=True)
    try:
        _write_in(folder, parts[-1], data, out / name)
    finally:
        os.close(folder)
    return out / name


def remove_member(out: str | Path, name: str) -> None:
    """Remove the file `name` of the run folder `out` if it is there, no link followed on the way."""
    out, parts = Path(out), _parts(name)
    try:
        folder = _open_folder(out, parts[:-1])
    except MissingFile:
        return
    try:
        os.unlink(parts[-1], dir_fd=folder)
    except FileNotFoundError:
        pass
    except OSError as error:
        raise RunFolderError(f"cannot remove {out / name}: {error.strerror or error}") from None
    finally:
        os.close(folder)


def write_whole(path: Path, data: bytes) -> None:
    """Write `path` so that it is never seen half written: a new file beside it, renamed over it
    (which replaces a symlink there rather than writing through it)."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as error:
        raise _refusal(path.parent, error) from None
    try:
        _write_in(folder, path.name, data, path)
    finally:
        os.close(folder)


def _write_in(folder: int, name: str, data: bytes, shown: Path) -> None:
    temporary = f".{name}.{secrets.token_hex(4)}"
    try:
        descriptor = os.open(temporary, _CREATE_FLAGS, 0o644, dir_fd=folder)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            raise
    except OSError as error:
        raise RunFolderError(f"cannot write {shown}: {error.strerror or error}") from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"
