"""Audit a batch of log lines: the per-line work of the pipeline, as plain Python.

The Beam graph hands whole batches of lines to one DoFn call, because Beam's
cost per element per step is of the same order as auditing a line; and the
plain-loop baseline of `bench/` calls the very same code, so the two measure
the same work.
"""
from __future__ import annotations

import contextlib
import hashlib
import pickle
import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Iterable, Iterator, Mapping, Sequence
from urllib.parse import unquote

from matcher.agents import MAX_USER_AGENT, Registry, remembering_headers
from matcher.audit import (
    audit,
    claim_of,
    claimant,
    dns_control,
    dns_question,
    fetch_key,
    gets_verdict,
    gets_verdict_whatever_the_day,
    is_robots_fetch,
)
from matcher.dns_trust import CONTROLS_PER_BATCH, checked_dns
from matcher.clientip import NO_PROXIES, TrustedProxies
from matcher.directives import PageDirectivesTable
from matcher.history import HostHistory, RobotsVersion
from matcher.addresses import ADDRESS_TEXT_LIMIT, REMEMBERED_ADDRESSES, request_day
from matcher.ip_ranges import RangeIndex
from matcher.reverse_dns import DnsAnswer
from matcher.robots_fetches import FetchHistory, FetchKey, RobotsFetch
from matcher.bounded import BoundedCache, Lru
from matcher.hosts import host_key
from matcher.logformats import AUTO, LogParseError, Skim, encodable, is_not_request, parser_for
from matcher.logformats.inference import InferredFormat, detected_format
from matcher.referrals import REFERER, UTM_SOURCE

VERDICT, DEAD_LETTER, SKIPPED, NOT_REQUEST = "verdict", "dead_letter", "skipped", "not_request"
# What a skipped line referred by an operator's service carries: host, operator, UTC day, via.
Referral = tuple[str | None, str, str, str]
# The dead-letter reason of the lines of a file whose format `auto` could not tell.
UNKNOWN_FORMAT = "unknown-format"
# Parsed robots histories a worker keeps: one per host, so this is the number of hosts whose
# parsed robots.txt files stay warm; a host beyond it is parsed again when next seen.
MAX_HISTORIES = 1024
_UNKNOWN = object()
# Files whose detected format a worker remembers (`auto` on files not seen at launch).
MAX_DETECTED_FILES = 4096  # a cache miss where None is an answer


@dataclass(frozen=True)
class HostVersions:
    """One host's robots versions as the side input carries them; the fingerprint tells a
    worker whether the history it parsed for the host is still the table's."""

    fingerprint: str
    versions: tuple[RobotsVersion, ...]


def host_versions(versions: Sequence[RobotsVersion]) -> HostVersions:
    ordered = tuple(sorted(versions, key=lambda v: (v.effective_from, v.status or 0, v.sha256 or "")))
    digest = hashlib.sha256()
    for version in ordered:
        digest.update(f"{version.host}|{version.effective_from.isoformat()}|{version.status}|{version.sha256}\n".encode())
    return HostVersions(digest.hexdigest(), ordered)


class RobotsByHost(dict[str, HostVersions]):
    """The robots table as the audit reads it: host -> its versions.

    It pickles compressed: Beam pickles a graph's values several times over, each time through
    bz2 at its slowest setting, which robots.txt bodies make slow. It is compressed once, when
    first pickled (the table is not changed once read); bench/README.md has the figures."""

    def __reduce__(self):
        packed = self.__dict__.get("_packed")
        if packed is None:
            packed = self._packed = zlib.compress(pickle.dumps(dict(self), protocol=pickle.HIGHEST_PROTOCOL), 6)
        return _unpacked_robots, (packed,)

    def versions(self) -> Iterator[RobotsVersion]:
        for entry in self.values():
            yield from entry.versions


def _unpacked_robots(packed: bytes) -> RobotsByHost:
    return RobotsByHost(pickle.loads(zlib.decompress(packed)))


def robots_by_host(versions: Iterable[RobotsVersion]) -> RobotsByHost:
    by_host: dict[str, list[RobotsVersion]] = {}
    for version in versions:
        by_host.setdefault(version.host, []).append(version)
    return RobotsByHost({host: host_versions(host_list) for host, host_list in by_host.items()})


# Parts of crawler tokens, each cheap to look for in a line. `dns_claim_parts` keeps those that
# occur in a token of a crawler DNS can prove, and adds whole any such token that has none.
_COMMON_PARTS = ("bot", "spider", "slurp", "yandex", "preview", "google-", "-google", "googleother")


def dns_claim_parts(registry: Registry) -> tuple[str, ...]:
    """Lower-case strings one of which is in the lower-cased text of every log line whose
    User-Agent names a crawler with reverse-DNS suffixes.

    Why that holds: such a User-Agent contains one of the crawler's tokens, case aside, and no
    token has a letter whose lower case depends on its neighbours, so the lower-cased line contains
    the token, and every token contains one of these parts.
    """
    tokens = {t for c in registry.crawlers if c.rdns_suffixes and not c.robots_only for t in c.ua_tokens}
    parts = {part for part in _COMMON_PARTS if any(part in token for token in tokens)}
    return tuple(sorted(parts | {t for t in tokens if not _has_any(t, parts)}))


def _has_any(text: str, parts) -> bool:
    return any(part in text for part in parts)


def _may_ask_for_robots_txt(line: str) -> bool:
    """Whether a line can hold a request whose path normalizes to /robots.txt: it spells the name,
    or percent-escapes that decode to it (all of the name's characters are unreserved)."""
    return "robots.txt" in line or ("%" in line and "robots.txt" in unquote(line))


def _never(line: str) -> None:
    return None


def _visit(host: str | None, operator: str, ts: datetime, via: str) -> Referral:
    """A visit's `Referral`: its host as the audit keys hosts, its UTC day."""
    return (host_key(host) or None) if host else None, operator, request_day(ts).isoformat(), via


def dead_letter(source: str, reason: str, message: str, raw: str) -> dict:
    return {"source": source, "reason": reason, "message": message, "raw": raw}


@dataclass(kw_only=True)
class LineAuditor:
    """Everything needed to turn log lines into verdicts; built once per worker."""

    log_format: str
    default_host: str | None = None
    field_map: Mapping[str, str] | None = None
    # path -> the format detected for it at launch (`log_format` "auto"); a file not named here
    # (one that arrived later in a stream) has its format detected from its first batch seen.
    file_formats: Mapping[str, str] | None = None
    # path -> the field map inferred for a JSON file whose layout no preset reads (`inference`)
    file_field_maps: Mapping[str, Mapping[str, str]] | None = None
    # the zone of times logged without one (`--log-timezone`)
    zone: tzinfo = timezone.utc
    registry: Registry
    ranges: RangeIndex
    error_limit: timedelta
    grace: timedelta
    proxies: TrustedProxies = NO_PROXIES
    pages: PageDirectivesTable | None = None
    max_histories: int = MAX_HISTORIES
    # Lines that surely get no verdict are told apart from their sender, time and User-Agent
    # alone (`_surely_not_crawler`); off, every line is parsed and audited in full.
    skim: bool = True
    # Write the client addresses of requests that may be a person's as their /24 or /48 (`audit`).
    truncate_addresses: bool = False
    # host -> (fingerprint of its versions, their parsed history): a refresh that changes a
    # host's versions replaces its entry, and the least recently audited host goes first.
    _histories: Lru[str, tuple[str, HostHistory]] = field(init=False, repr=False)
    _parsers: dict = field(default_factory=dict, init=False, repr=False)
    _detected: Lru[str, tuple[str, Mapping[str, str] | None]] = field(init=False, repr=False)
    _file_parsers: Lru[str, object] = field(init=False, repr=False)
    _dns_parts: tuple[str, ...] = field(default=(), init=False, repr=False)
    _claims: BoundedCache[str, bool] = field(init=False, repr=False)
    _verdict_every_day: tuple[BoundedCache[str, bool | None], ...] = field(init=False, repr=False)
    _verdict_on_day: BoundedCache[tuple[bool, str, date], bool] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._histories = Lru(self.max_histories)
        self._detected = Lru(MAX_DETECTED_FILES)
        self._file_parsers = Lru(MAX_DETECTED_FILES)
        self._claims = remembering_headers()
        self._verdict_every_day = tuple(BoundedCache(REMEMBERED_ADDRESSES, longest_key=ADDRESS_TEXT_LIMIT) for _ in range(2))
        self._verdict_on_day = BoundedCache(REMEMBERED_ADDRESSES, longest_key=ADDRESS_TEXT_LIMIT)
        self._checked_dns = None

    def __getstate__(self) -> dict:
        # Parsed histories and the compiled parsers are rebuilt on each worker.
        state = dict(self.__dict__)
        state["_histories"], state["_parsers"] = Lru(self.max_histories), {}
        state["_detected"], state["_file_parsers"] = Lru(MAX_DETECTED_FILES), Lru(MAX_DETECTED_FILES)
        state["_checked_dns"] = None
        return state

    @property
    def cached_histories(self) -> int:
        return len(self._histories)

    def audit_lines(
        self,
        path: str,
        first_number: int,
        lines: Sequence[str],
        robots_by_host: Mapping[str, HostVersions],
        dns_answers: Mapping[str, DnsAnswer] | None = None,
        fetches: Mapping[FetchKey, FetchHistory] | None = None,
    ) -> Iterator[tuple[str, dict | None]]:
        """(kind, record) per line: a verdict, a dead letter, a not-request (its reason), or
        skipped (None, or its `Referral` when an operator's service referred it).

        `dns_answers` holds the reverse DNS of the addresses `dns_questions` names; None: DNS off.
        `fetches` the run's robots.txt fetches by key (`robots_fetches` of every batch, in a
        `FetchHistory` each); None: not followed.
        """
        if dns_answers is not None:
            dns_answers = self._checked(dns_answers)
        parse = self.parser(path, lines)
        if parse is None:
            for offset, line in enumerate(lines):
                yield DEAD_LETTER, dead_letter(
                    f"{path}:{first_number + offset}", UNKNOWN_FORMAT,
                    "no log format reads enough of this file's lines; give --log-format", encodable(line),
                )
            return
        skim = parse.skim if self.skim else _never
        for offset, line in enumerate(lines):
            skimmed = skim(line)
            if skimmed is not None and self._surely_not_crawler(skimmed):
                yield SKIPPED, self._skimmed_referral(parse, skimmed, line)
                continue
            source = f"{path}:{first_number + offset}"
            if skimmed is not None:
                request = parse.record(skimmed.match)
            else:
                try:
                    request = parse(line)
                except LogParseError as error:
                    if is_not_request(error.reason):
                        yield NOT_REQUEST, error.reason
                    else:
                        yield DEAD_LETTER, dead_letter(source, error.reason, error.message, encodable(line))
                    continue
            history = self.history(request.host, robots_by_host)
            verdict = audit(
                request, source, self.registry, self.ranges, history, self.proxies, dns_answers, self.pages, fetches,
                self.truncate_addresses,
            )
            if verdict is None:
                yield SKIPPED, self._referral(request)
            else:
                yield VERDICT, verdict

    def robots_fetches(
        self, batch: tuple[str, int, Sequence[str]], dns_answers: Mapping[str, DnsAnswer] | None = None
    ) -> list[tuple[FetchKey, RobotsFetch]]:
        """The crawler requests for /robots.txt of a (path, first line, lines) batch, each with the
        key whose history it joins; the identity is the one the line's verdict gets. Only lines
        that may spell the path are parsed; lines that do not parse are the audit's dead letters."""
        path, first_number, lines = batch
        parse = self.parser(path, lines)
        if parse is None:
            return []
        if dns_answers is not None:
            dns_answers = self._checked(dns_answers)
        found = []
        for offset, line in enumerate(lines):
            if not _may_ask_for_robots_txt(line):
                continue
            try:
                request = parse(line)
            except LogParseError:
                continue
            if not is_robots_fetch(request.path):
                continue
            claimed = claimant(request, self.registry, self.ranges, self.proxies, dns_answers)
            if claimed is None:
                continue
            claim, _, who = claimed
            key = fetch_key(claim, who.status, host_key(request.host) or None if request.host else None)
            if key is not None:
                source = f"{path}:{first_number + offset}"
                found.append((key, RobotsFetch(request.ts, request.status, source, claim.crawler)))
        return found

    def _skimmed_referral(self, parse, skimmed: Skim, line: str) -> Referral | None:
        """`_referral` of a skimmed line, read from the skim where its Referer decides (a
        Referer names the operator before a utm_source does); its record is built only for a
        utm_source."""
        referrers = self.registry.referrers
        if not referrers:
            return None
        operator = referrers.of_referer(skimmed.referer)
        if operator is not None:
            return _visit(parse.audited_host(skimmed.match), operator, skimmed.ts, REFERER)
        return self._referral(parse.record(skimmed.match)) if UTM_SOURCE in line else None

    def _referral(self, request) -> Referral | None:
        """The referral of a visit (a request that gets no verdict), or None."""
        referrers = self.registry.referrers
        found = referrers.referral(request.referer, request.path) if referrers else None
        if found is None:
            return None
        operator, via = found
        return _visit(request.host, operator, request.ts, via)

    def _checked(self, dns_answers: Mapping[str, DnsAnswer]):
        """The answers with their trust judged once per answers object (a batch run's side input
        is the same dict for every batch)."""
        if self._checked_dns is None or self._checked_dns[0] is not dns_answers:
            self._checked_dns = (dns_answers, checked_dns(dns_answers, self.ranges))
        return self._checked_dns[1]

    def _surely_not_crawler(self, skimmed: Skim) -> bool:
        """What `audit` answers with None (`gets_verdict`), remembered per User-Agent, per (claim,
        address) and per (claim, address, day)."""
        header = skimmed.user_agent[:MAX_USER_AGENT]
        claims = self._claims.get(header)
        if claims is None:
            claims = self._claims[header] = claim_of(header, self.registry) is not None
        client = self.proxies.client(skimmed.client_ip, skimmed.forwarded_for)
        # one cache per claim (False, True), so a line costs a lookup by address alone
        known = self._verdict_every_day[claims]
        every_day = known.get(client, _UNKNOWN)
        if every_day is _UNKNOWN:
            every_day = known[client] = gets_verdict_whatever_the_day(claims, client, self.ranges)
        if every_day is not None:
            return not every_day
        key = (claims, client, request_day(skimmed.ts))
        verdict = self._verdict_on_day.get(key)
        if verdict is None:
            verdict = self._verdict_on_day[key] = gets_verdict(*key, self.ranges)
        return not verdict

    def dns_questions(self, batch: tuple[str, int, Sequence[str]]) -> set[str]:
        """The distinct addresses of a (path, first line, lines) batch whose verdicts need reverse
        DNS, and a few the published ranges prove, which check the resolver (`matcher.dns_trust`). Only lines that may name a crawler DNS can prove are parsed (see `dns_claim_parts`);
        lines that do not parse are the audit's dead letters, not asked about here."""
        parse = self.parser(batch[0], batch[2])
        if parse is None:
            return set()
        parts = self._dns_parts or self._make_dns_parts()
        questions = set()
        controls = 0
        for line in batch[2]:
            # an escape (\xHH, \uHHHH) can spell a token the raw text does not show
            if "\\" not in line and not _has_any(line.lower(), parts):
                continue
            try:
                request = parse(line)
            except LogParseError:
                continue
            address = dns_question(request, self.registry, self.ranges, self.proxies)
            if address is not None:
                questions.add(address)
            elif controls < CONTROLS_PER_BATCH:
                control = dns_control(request, self.registry, self.ranges, self.proxies)
                if control is not None and control not in questions:
                    questions.add(control)
                    controls += 1
        return questions

    def _make_dns_parts(self) -> tuple[str, ...]:
        self._dns_parts = dns_claim_parts(self.registry)
        return self._dns_parts

    def parser(self, path: str, lines: Sequence[str] = ()):
        """The parser for the lines of `path`; None when its format is `auto` and no format reads
        most of `lines` (the first batch of the file this worker sees)."""
        name, mapping = self.log_format, self.field_map
        if name == AUTO:
            if path in (self.file_formats or {}):
                name, mapping = self.file_formats[path], (self.file_field_maps or {}).get(path)
            else:
                detected = self._detected.get(path)
                if detected is None:
                    candidate = detected_format(lines)
                    # ("", None): none reads the file
                    detected = ("", None) if candidate is None else (
                        candidate.name, candidate.field_map if isinstance(candidate, InferredFormat) else None)
                    self._detected.put(path, detected)
                name, mapping = detected
            if not name:
                return None
        if mapping is not self.field_map:
            # a field map inferred for this file alone: its own parser
            own = self._file_parsers.get(path)
            if own is None:
                own = parser_for(name, self.default_host, mapping, self.zone)
                self._file_parsers.put(path, own)
            return own
        parse = self._parsers.get(name)
        if parse is None:
            parse = self._parsers[name] = parser_for(name, self.default_host, self.field_map, self.zone)
        if getattr(parse, "per_file", False):
            # a format whose directives steer the lines after them: each file has its own parser
            own = self._file_parsers.get(path)
            if own is None:
                own = parser_for(name, self.default_host, self.field_map, self.zone)
                self._file_parsers.put(path, own)
            return own
        return parse

    def take_fields(self, path: str, line: str) -> None:
        """The W3C `#Fields:` line in force where a piece of `path` starts, read before the
        piece's lines by the parser of that file (formats without directives ignore it)."""
        parse = self.parser(path, (line,)) if self._format_known(path) else None
        if getattr(parse, "per_file", False):
            with contextlib.suppress(LogParseError):
                parse(line)

    def _format_known(self, path: str) -> bool:
        return self.log_format != AUTO or path in (self.file_formats or {}) or self._detected.get(path) is not None

    def history(self, host: str | None, robots_by_host: Mapping[str, HostVersions]) -> HostHistory | None:
        """The host's parsed history from the robots table, kept while its versions stay the same."""
        entry = robots_by_host.get(host) if host else None
        if entry is None:
            return None
        cached = self._histories.get(host)
        if cached is not None and cached[0] == entry.fingerprint:
            return cached[1]
        history = HostHistory(entry.versions, error_limit=self.error_limit, grace=self.grace)
        self._histories.put(host, (entry.fingerprint, history))
        return history
