"""Download the registry's published IP-range files into dated snapshots.

Each file is saved exactly as served, as RANGES_DIR/<source>/<YYYY-MM-DD>.json for the UTC day of
the download, but only after it has been read the way the audit will read it: a file without one
usable prefix (an error page, a truncated download) is reported and not saved, so the snapshot
before it stays in force. Prefixes the audit would skip are reported; invisible characters inside
prefixes are not a problem, the audit drops them when it reads the file.

The operators' Web Bot Auth key directories (JWKS) are saved the same way, as
RANGES_DIR/key-directories/<name>/<YYYY-MM-DD>.json, when they hold at least one Ed25519 key.

Downloads go through `pipeline.evidence.http_client`: HTTPS only (redirects too), an overall deadline per
download however slowly the server answers, and a size cap (a smaller one for key directories).
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from config.outside_json import MAX_DOCUMENT_BYTES, OutsideJsonError, parse_document
from config.snapshots import KEY_DIRECTORIES
from matcher.agents import KeyDirectory, RangeSource, Registry
from matcher.ip_ranges import parse_snapshot
from matcher.web_bot_auth import parse_key_snapshot
from pipeline.evidence.http_client import Client, FetchError

DEFAULT_TIMEOUT = 30.0
# Operators' files are tens of kilobytes; anything near this is not a range file.
MAX_BYTES = MAX_DOCUMENT_BYTES  # what reading a saved file accepts
# A directory holds a handful of keys, well under a kilobyte each.
MAX_KEY_DIRECTORY_BYTES = 64 * 1024
KEY_DIRECTORY_TYPES = "application/http-message-signatures-directory+json, application/json"
USER_AGENT = "crawl-audit-update-ranges/0.1"


@dataclass(frozen=True)
class Download:
    """What became of one source: where it was saved (None: not saved), and what was wrong."""

    source: str
    url: str
    saved: Path | None
    prefixes: int
    problems: tuple[str, ...]


def fetch_body(client: Client, url: str, accept: str = "application/json", max_bytes: int | None = None) -> bytes:
    """The body of a 2xx answer (same-scheme redirects followed), at most `max_bytes` (default:
    the client's cap)."""
    response = client.get(url, accept=accept, max_bytes=max_bytes)
    if response.stopped is not None:
        raise FetchError(f"HTTP {response.status} from {response.url}: {response.stopped}")
    if not 200 <= response.status < 300:
        raise FetchError(f"HTTP {response.status} from {response.url}")
    if response.truncated:
        raise FetchError(f"{url} is larger than {max_bytes or client.max_bytes} bytes")
    return response.body


def update_ranges(
    registry: Registry,
    directory: Path,
    day: date,
    sources: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    ca_file: str | None = None,
) -> list[Download]:
    """Download `sources` (range sources or key directories; default: every one of the registry)
    into `directory`.

    `timeout` bounds each download as a whole; `ca_file` replaces the system's CAs.
    """
    client = Client(user_agent=USER_AGENT, timeout=timeout, max_bytes=MAX_BYTES, ca_file=ca_file)
    ranges = [_download(source, directory, day, client) for source in select_sources(registry, sources)]
    keys = [_download_keys(known, directory, day, client) for known in _select_directories(registry, sources)]
    return ranges + keys


def select_sources(registry: Registry, names: Sequence[str]) -> list[RangeSource]:
    """The named range sources, or all of them; ValueError lists names the registry does not
    know as a range source or a key directory."""
    if not names:
        return list(registry.range_sources.values())
    unknown = [name for name in names if name not in registry.range_sources and name not in registry.key_directories]
    if unknown:
        known = ", ".join(sorted(registry.range_sources))
        raise ValueError(f"unknown range source {', '.join(unknown)} (known: {known})")
    return [registry.range_sources[name] for name in dict.fromkeys(names) if name in registry.range_sources]


def _select_directories(registry: Registry, names: Sequence[str]) -> list[KeyDirectory]:
    if not names:
        return list(registry.key_directories.values())
    return [registry.key_directories[name] for name in dict.fromkeys(names) if name in registry.key_directories]


def _download(source: RangeSource, directory: Path, day: date, client: Client) -> Download:
    try:
        body = fetch_body(client, source.url)
    except FetchError as error:
        return Download(source.name, source.url, None, 0, (str(error),))
    try:
        document = parse_document(body)
    except OutsideJsonError as error:
        return Download(source.name, source.url, None, 0, (f"{source.url} is not JSON: {error}",))
    snapshot, problems = parse_snapshot(source.name, source.operator, day, document)
    if snapshot is None:
        return Download(source.name, source.url, None, 0, problems)
    target = directory / source.name / f"{day.isoformat()}.json"
    write_atomically(target, body)
    return Download(source.name, source.url, target, snapshot.size, problems)


def _download_keys(known: KeyDirectory, directory: Path, day: date, client: Client) -> Download:
    try:
        body = fetch_body(client, known.url, KEY_DIRECTORY_TYPES, MAX_KEY_DIRECTORY_BYTES)
    except FetchError as error:
        return Download(known.name, known.url, None, 0, (str(error),))
    try:
        document = parse_document(body)
    except OutsideJsonError as error:
        return Download(known.name, known.url, None, 0, (f"{known.url} is not JSON: {error}",))
    snapshot, problems = parse_key_snapshot(known.name, known.operator, day, document)
    if snapshot is None:
        return Download(known.name, known.url, None, 0, problems)
    target = directory / KEY_DIRECTORIES / known.name / f"{day.isoformat()}.json"
    write_atomically(target, body)
    return Download(known.name, known.url, target, len(document["keys"]), problems)


def write_atomically(target: Path, body: bytes) -> None:
    """Readers see the old file or the new one, never half of one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(body)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
