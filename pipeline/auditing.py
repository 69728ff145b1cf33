"""Audit a batch of log lines: the per-line work of the pipeline, as plain Python.

The Beam graph hands whole batches of lines to one DoFn call, because Beam's
cost per element per step is of the same order as auditing a line; and the
plain-loop baseline of `bench/` calls the very same code, so the two measure
the same work.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Iterator, Mapping, Sequence

from matcher.agents import Registry
from matcher.audit import audit
from matcher.history import HostHistory, RobotsVersion, host_key
from matcher.identity import RangeIndex
from pipeline.logformats import LogParseError, parser_for

VERDICT, DEAD_LETTER, SKIPPED = "verdict", "dead_letter", "skipped"


@dataclass(frozen=True)
class HostVersions:
    """One host's robots versions as the side input carries them; the fingerprint lets a
    worker keep one parsed history per distinct table content."""

    fingerprint: str
    versions: tuple[RobotsVersion, ...]


def host_versions(versions: Sequence[RobotsVersion]) -> HostVersions:
    ordered = tuple(sorted(versions, key=lambda v: (v.effective_from, v.status or 0, v.sha256 or "")))
    digest = hashlib.sha256()
    for version in ordered:
        digest.update(f"{version.host}|{version.effective_from.isoformat()}|{version.status}|{version.sha256}\n".encode())
    return HostVersions(digest.hexdigest(), ordered)


def dead_letter(source: str, reason: str, message: str, raw: str) -> dict:
    return {"source": source, "reason": reason, "message": message, "raw": raw}


@dataclass
class LineAuditor:
    """Everything needed to turn log lines into verdicts; built once per worker."""

    log_format: str
    default_host: str | None
    field_map: Mapping[str, str] | None
    registry: Registry
    ranges: RangeIndex
    error_limit: timedelta
    grace: timedelta
    _histories: dict[str, HostHistory] = field(default_factory=dict, init=False, repr=False)
    _parse: object = field(default=None, init=False, repr=False)

    def __getstate__(self) -> dict:
        # Parsed histories and the compiled parser are rebuilt on each worker.
        state = dict(self.__dict__)
        state["_histories"], state["_parse"] = {}, None
        return state

    def audit_lines(
        self, path: str, first_number: int, lines: Sequence[str], robots_by_host: Mapping[str, HostVersions]
    ) -> Iterator[tuple[str, dict | None]]:
        """(kind, record) per line: a verdict, a dead letter, or skipped (None)."""
        parse = self._parse or self._make_parser()
        for offset, line in enumerate(lines):
            source = f"{path}:{first_number + offset}"
            try:
                request = parse(line)
            except LogParseError as error:
                yield DEAD_LETTER, dead_letter(source, error.reason, error.message, line)
                continue
            history = self._history(request.host, robots_by_host)
            verdict = audit(request, source, self.registry, self.ranges, history)
            yield (SKIPPED, None) if verdict is None else (VERDICT, verdict)

    def _make_parser(self):
        self._parse = parser_for(self.log_format, self.default_host, self.field_map)
        return self._parse

    def _history(self, host: str | None, robots_by_host: Mapping[str, HostVersions]) -> HostHistory | None:
        entry = robots_by_host.get(host_key(host)) if host else None
        if entry is None:
            return None
        history = self._histories.get(entry.fingerprint)
        if history is None:
            history = HostHistory(entry.versions, error_limit=self.error_limit, grace=self.grace)
            self._histories[entry.fingerprint] = history
        return history
