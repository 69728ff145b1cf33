"""`crawl-audit history import-wayback`: a host's robots.txt history from the Internet
Archive's captures.

The CDX API lists the captures of `HOST/robots.txt` (JSON, collapsed by digest, with the
timestamp of the last capture each collapsed run skipped, every status code kept). Captures
in a row with the same outcome (status class, and for a 2xx the same digest) are one
version: `effective_from` is its first capture, and the last one is written to the
observations log, so the next version's `observed_before` is exact. Redirect (3xx) captures
are left out: the archive keeps the redirect's target as a capture of its own, and the
http:// and https:// captures of one file interleave in the index. Each 2xx version's bytes
come from the archive's raw (`id_`) URL.

Polite by construction: one request at a time, a delay between requests, retries with
exponential back-off on 429, 5xx and network errors. Resumable: a version whose capture file
exists is not fetched again, and the import stops at the first version it cannot fetch, so
no later version is written over a gap.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlencode

from pipeline.evidence.captures import HostFolder, Outcome, observation_line, stamp
from pipeline.evidence.http_client import Client, FetchError, Response

DEFAULT_ARCHIVE = "https://web.archive.org"
DEFAULT_DELAY = 1.0
DEFAULT_RETRIES = 4
USER_AGENT = "crawl-audit-history/0.1 (robots.txt history import)"
_CDX_FIELDS = "timestamp,original,statuscode,digest"
# A site's robots.txt has thousands of captures at most; redirect captures keep the
# index from collapsing them all, so its answer can run to megabytes.
_CDX_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ArchivedVersion:
    """A run of captures with one outcome: first and last capture time, and where to fetch it."""

    first: datetime
    last: datetime
    status: int
    digest: str
    original: str
    first_stamp: str  # the archive's 14-digit timestamp of the first capture


@dataclass(frozen=True)
class ImportResult:
    versions: int
    written: tuple[Path, ...]
    already_there: int
    skipped: tuple[str, ...]  # captures left out, and why
    failed: str | None  # why the import stopped early


class Archive:
    """The archive's CDX and raw-capture endpoints, fetched one at a time, politely."""

    def __init__(
        self,
        client: Client,
        base: str = DEFAULT_ARCHIVE,
        delay: float = DEFAULT_DELAY,
        retries: int = DEFAULT_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self._base = base.rstrip("/")
        self._delay = delay
        self._retries = retries
        self._sleep = sleep
        self._requested = False

    def captures(self, host: str, start: str | None = None, end: str | None = None) -> list[list[str]]:
        """The CDX rows (header first) of `HOST/robots.txt`."""
        query = {
            "url": f"{host}/robots.txt",
            "output": "json",
            "fl": _CDX_FIELDS,
            "collapse": "digest",
            "showSkipCount": "true",
            "lastSkipTimestamp": "true",
        }
        query.update({key: value for key, value in (("from", start), ("to", end)) if value})
        response = self._get(f"{self._base}/cdx/search/cdx?{urlencode(query)}", "application/json", _CDX_MAX_BYTES)
        if response.status != 200:
            raise FetchError(f"CDX answered HTTP {response.status}")
        if response.truncated:
            raise FetchError(f"CDX answer larger than {_CDX_MAX_BYTES} bytes; narrow it with --from and --to")
        try:
            rows = json.loads(response.body or b"[]")
        except ValueError as error:
            raise FetchError(f"CDX answer is not JSON: {error}") from None
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise FetchError("CDX answer is not a JSON array of rows")
        return rows

    def raw(self, version: ArchivedVersion) -> bytes:
        """The bytes the archive holds for the version's first capture (up to the client's cap)."""
        response = self._get(f"{self._base}/web/{version.first_stamp}id_/{version.original}", "*/*")
        if not 200 <= response.status < 300:
            raise FetchError(f"raw capture {version.first_stamp} answered HTTP {response.status}")
        return response.body

    def _get(self, url: str, accept: str, max_bytes: int | None = None) -> Response:
        attempt = 0
        while True:
            if self._requested:
                self._sleep(self._delay)
            self._requested = True
            retry_after = None
            try:
                response = self._client.get(url, accept=accept, max_bytes=max_bytes)
                if response.status != 429 and response.status < 500:
                    return response
                problem = f"HTTP {response.status} from {url}"
                retry_after = response.retry_after
            except FetchError as error:
                problem = str(error)
            if attempt == self._retries:
                raise FetchError(f"{problem} (gave up after {attempt + 1} attempts)")
            attempt += 1
            self._sleep(_backoff(self._delay, attempt, retry_after))


def versions_of(rows: Sequence[Sequence[str]]) -> tuple[list[ArchivedVersion], list[str]]:
    """CDX rows (header first) -> versions in time order, and the captures left out, with why."""
    if not rows:
        return [], []
    header, *body = rows
    column = {name: index for index, name in enumerate(header)}
    missing = {"timestamp", "original", "statuscode", "digest"} - set(column)
    if missing:
        raise ValueError(f"CDX answer lacks the field(s) {', '.join(sorted(missing))}")
    versions: list[ArchivedVersion] = []
    skipped: list[str] = []
    needed = max(column[name] for name in ("timestamp", "original", "statuscode", "digest")) + 1
    end_index = column.get("endtimestamp")
    usable = []
    for row in body:
        if len(row) >= needed and all(isinstance(cell, str) for cell in row):
            usable.append(row)
        elif row:  # the API separates a resume key with an empty row; anything else is reported
            skipped.append(f"malformed CDX row {row!r}")
    for row in sorted(usable, key=lambda row: row[column["timestamp"]]):
        first_stamp, original, status_text, digest = (
            row[column[name]] for name in ("timestamp", "original", "statuscode", "digest")
        )
        last_stamp = row[end_index] if end_index is not None and end_index < len(row) else ""
        try:
            first = _cdx_time(first_stamp)
            last = _cdx_time(last_stamp) if last_stamp not in ("", "-") else first
            status = int(status_text)
        except ValueError:
            status = 0
        if not 200 <= status <= 599:
            skipped.append(f"{first_stamp}: no usable time or status ({status_text!r})")
            continue
        if 300 <= status < 400:
            skipped.append(
                f"{first_stamp}: HTTP {status} capture left out (a redirect's target is captured on its own)"
            )
            continue
        if versions and _outcome_key(versions[-1].status, versions[-1].digest) == _outcome_key(status, digest):
            versions[-1] = replace(versions[-1], last=max(versions[-1].last, last))
        else:
            versions.append(ArchivedVersion(first, max(first, last), status, digest, original, first_stamp))
    return versions, skipped


def import_wayback(
    archive: Archive, host: str, into: Path, start: str | None = None, end: str | None = None
) -> ImportResult:
    """Write every archived version of the host's robots.txt into the captures folder `into`."""
    folder = HostFolder(into, host)
    versions, skipped = versions_of(archive.captures(folder.host, start, end))
    written: list[Path] = []
    already = 0
    with folder.locked():
        present = {stamp(moment): path for moment, path in folder.captures()}
        logged = folder.observed()
        for version in versions:
            path = present.get(stamp(version.first))
            if path is not None:
                already += 1
            else:
                try:
                    body = archive.raw(version) if version.status // 100 == 2 else None
                except FetchError as error:
                    return ImportResult(len(versions), tuple(written), already, tuple(skipped), str(error))
                path = folder.write(version.first, Outcome(version.status, body))
                written.append(path)
            for moment, what in ((version.first, "archived"), (version.last, "archived-last")):
                line = observation_line(moment, what, path)
                if line not in logged:
                    folder.observe(moment, what, path)
                    logged.add(line)
    return ImportResult(len(versions), tuple(written), already, tuple(skipped), None)


def _backoff(delay: float, attempt: int, retry_after: str | None) -> float:
    """Exponential back-off, or the server's Retry-After in seconds when it asks for longer
    (at most ten minutes)."""
    wait = delay * 2**attempt
    if retry_after is not None and retry_after.strip().isdigit():
        wait = max(wait, min(float(retry_after), 600.0))
    return wait


def _outcome_key(status: int, digest: str) -> tuple:
    return (status // 100, digest) if status // 100 == 2 else (status // 100,)


def _cdx_time(text: str) -> datetime:
    if len(text) != 14 or not text.isdigit():
        raise ValueError(text)
    return datetime.strptime(text, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
