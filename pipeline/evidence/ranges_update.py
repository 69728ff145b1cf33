"""Download the registry's published IP-range files into dated snapshots.

Each file is saved exactly as served, as RANGES_DIR/<source>/<YYYY-MM-DD>.json for the UTC day of
the download, but only after it has been read the way the audit will read it: a file without one
usable prefix (an error page, a truncated download) is reported and not saved, so the snapshot
before it stays in force. Prefixes the audit would skip are reported; invisible characters inside
prefixes are not a problem, the audit drops them when it reads the file.

Downloads go through `pipeline.evidence.http_client`: HTTPS only (redirects too), an overall deadline per
download however slowly the server answers, and a size cap.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from matcher.agents import RangeSource, Registry
from matcher.ip_ranges import parse_snapshot
from pipeline.evidence.http_client import Client, FetchError

DEFAULT_TIMEOUT = 30.0
# Operators' files are tens of kilobytes; anything near this is not a range file.
MAX_BYTES = 16 * 1024 * 1024
USER_AGENT = "crawl-audit-update-ranges/0.1"


@dataclass(frozen=True)
class Download:
    """What became of one source: where it was saved (None: not saved), and what was wrong."""

    source: str
    url: str
    saved: Path | None
    prefixes: int
    problems: tuple[str, ...]


def fetch_body(client: Client, url: str) -> bytes:
    """The body of a 2xx answer (same-scheme redirects followed), at most the client's cap."""
    response = client.get(url, accept="application/json")
    if response.stopped is not None:
        raise FetchError(f"HTTP {response.status} from {response.url}: {response.stopped}")
    if not 200 <= response.status < 300:
        raise FetchError(f"HTTP {response.status} from {response.url}")
    if response.truncated:
        raise FetchError(f"{url} is larger than {client.max_bytes} bytes")
    return response.body


def update_ranges(
    registry: Registry,
    directory: Path,
    day: date,
    sources: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    ca_file: str | None = None,
) -> list[Download]:
    """Download `sources` (default: every range source of the registry) into `directory`.

    `timeout` bounds each download as a whole; `ca_file` replaces the system's CAs.
    """
    client = Client(user_agent=USER_AGENT, timeout=timeout, max_bytes=MAX_BYTES, ca_file=ca_file)
    return [_download(source, directory, day, client) for source in select_sources(registry, sources)]


def select_sources(registry: Registry, names: Sequence[str]) -> list[RangeSource]:
    """The named sources, or all of them; ValueError lists names the registry does not know."""
    if not names:
        return list(registry.range_sources.values())
    unknown = [name for name in names if name not in registry.range_sources]
    if unknown:
        known = ", ".join(sorted(registry.range_sources))
        raise ValueError(f"unknown range source {', '.join(unknown)} (known: {known})")
    return [registry.range_sources[name] for name in dict.fromkeys(names)]


def _download(source: RangeSource, directory: Path, day: date, client: Client) -> Download:
    try:
        body = fetch_body(client, source.url)
    except FetchError as error:
        return Download(source.name, source.url, None, 0, (str(error),))
    try:
        document = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return Download(source.name, source.url, None, 0, (f"{source.url} is not JSON: {error}",))
    snapshot, problems = parse_snapshot(source.name, source.operator, day, document)
    if snapshot is None:
        return Download(source.name, source.url, None, 0, problems)
    target = directory / source.name / f"{day.isoformat()}.json"
    write_atomically(target, body)
    return Download(source.name, source.url, target, snapshot.size, problems)


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
