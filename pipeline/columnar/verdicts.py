"""A block of one log file's lines audited column by column: the rules of `matcher` run once per
distinct key, never per line, and the verdict columns are gathered from their answers.

The keys, each holding every input its rule reads (docs/architecture.md § The columnar audit):

- claim: the User-Agent (`claim_of`), remembered across blocks like the line auditor's;
- client: the connecting address and X-Forwarded-For (`TrustedProxies.client`);
- identity: (claim, client, UTC day) (`gets_verdict`, `identity_of`): a text layout logs no
  signature, so nothing finer than the day is read;
- decision: (host, claim, path, X-Robots-Tag, what the crawler held, and the span of time between
  two of the host's turning points, `HostHistory.turning_points`, with the end of each held run of
  errors) (`decision_columns`), called with a time that stands for the span; how long a change
  went unread is the one column that follows the request's own time, and is computed from it;
- referral of a visit (a line whose identity key gets no verdict): the Referer
  (`Referrers.of_referer`), else the target, for one that carries a utm_source (`Referrers.of_utm`).

Each rule is called with its key's fields alone. Lines the plain reader leaves (escapes, absolute
targets, lines that do not parse, times it cannot read), formats it has no RE2 pattern for, and
runs with a page-directives table go through `LineAuditor.audit_lines`, counted as it counts them.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from matcher import records
from matcher.agents import remembering_headers
from matcher.audit import (
    UNCLAIMED, Claim, claim_of, decision_columns, fetch_key, gets_verdict, held_columns, identity_of, written_address,
)
from matcher.bounded import BoundedCache
from matcher.dns_trust import checked_dns
from matcher.history import HostHistory
from matcher.hosts import host_key
from matcher.identity import IdentityResult
from matcher.line_auditor import DEAD_LETTER, NOT_REQUEST, SKIPPED, VERDICT, HostVersions, LineAuditor, Referral
from matcher.logformats import LogParseError, TextParser, clf_timestamp
from matcher.logformats.fields import request_host
from matcher.logformats.record import logged_size, logged_status
from matcher.referrals import REFERER, UTM_SOURCE, Referrers
from matcher.reverse_dns import DnsAnswer
from matcher.robots_fetches import FetchHistory, FetchKey, Held, may_revise
from matcher.timerange import EPOCH, micros
from pipeline.columnar.keys import distinct, groups, row_keys
from pipeline.columnar.reading import read_plain
from pipeline.tables.schema import arrow_schema

__all__ = ["AuditedBlock", "BlockAuditor"]

_VERDICT_SCHEMA = arrow_schema(records.VERDICTS)
_CLAIM_NAMES = ("crawler", "client_kind", "purpose", "tokens", "honours_robots", "honours_crawl_delay")
_IDENTITY_NAMES = ("client_ip", "operator", "identity", "identity_method", "identity_evidence")
_FIRST_DECISION_COLUMN = [column.name for column in records.VERDICTS].index("robots_version")
_DECISION_COLUMNS = records.VERDICTS[_FIRST_DECISION_COLUMN:]
_DECISION_SCHEMA = arrow_schema(_DECISION_COLUMNS)
_FETCH_COLUMNS = tuple(column for column in records.VERDICTS if column.name == "robots_fetch")
_FETCH_SCHEMA = arrow_schema(_FETCH_COLUMNS)
_CLAIM_SCHEMA = pa.schema([_VERDICT_SCHEMA.field(name) for name in _CLAIM_NAMES])
_IDENTITY_SCHEMA = pa.schema([_VERDICT_SCHEMA.field(name) for name in _IDENTITY_NAMES])
_MICROS_PER_DAY = 86_400_000_000
_EPOCH_DAY = EPOCH.date()


@dataclass
class AuditedBlock:
    """What the lines of a block became: verdict rows (the `verdicts` table's columns), dead
    letters, the reasons of the not-requests, how many lines got no verdict and the visits among
    them an operator's service referred, per `Referral`; `left` counts the lines the columns left
    to the per-line audit."""

    verdicts: pa.Table
    dead_letters: list[dict] = field(default_factory=list)
    not_requests: list[str] = field(default_factory=list)
    skipped: int = 0
    referrals: Counter[Referral] = field(default_factory=Counter)
    left: int = 0


@dataclass
class BlockAuditor:
    """The columnar audit of blocks of lines, with the settings, parsers and robots histories of
    `auditor`, whose per-line audit takes the lines this one leaves."""

    auditor: LineAuditor
    _claims: BoundedCache[str, Claim | None] = field(default_factory=remembering_headers, init=False, repr=False)
    _dns: tuple[object, Mapping[str, DnsAnswer]] | None = field(default=None, init=False, repr=False)
    _fetches: tuple[object, dict] | None = field(default=None, init=False, repr=False)

    def audit_block(
        self,
        path: str,
        first_number: int,
        lines: Sequence[str],
        robots_by_host: Mapping[str, HostVersions],
        dns_answers: Mapping[str, DnsAnswer] | None = None,
        fetches: Mapping[FetchKey, FetchHistory] | None = None,
    ) -> AuditedBlock:
        """The lines `first_number`, `first_number + 1`, ... of `path` audited; the arguments mean
        what they mean to `LineAuditor.audit_lines`, whose rows these are, row for row."""
        parse = self.auditor.parser(path, lines)
        text = _text(lines) if isinstance(parse, TextParser) and self.auditor.pages is None else None
        if text is None:
            audited, left = AuditedBlock(_empty()), np.arange(len(lines))
        else:
            plain = read_plain(text, parse.layout)
            ts, readable = _times(plain.field("time"))
            left = np.sort(np.concatenate([plain.left, plain.taken[~readable]]))
            block = _Block(plain.fields.filter(pa.array(readable)), plain.taken[readable], ts[readable])
            who = self._identified(block, dns_answers)
            judged = who.judged[who.identity_of_line] if len(block.offsets) else np.zeros(0, bool)
            visits = np.flatnonzero(~judged)
            audited = AuditedBlock(
                self._verdicts(block, who, np.flatnonzero(judged), path, first_number, parse, robots_by_host, fetches),
                skipped=len(visits),
                referrals=self._referrals(block, visits, parse),
            )
        return self._line_by_line(audited, path, first_number, lines, left, robots_by_host, dns_answers, fetches)

    def _verdicts(
        self, block: _Block, who: _Identified, rows: np.ndarray, path: str, first_number: int, parse: TextParser,
        robots_by_host: Mapping[str, HostVersions], fetches,
    ) -> pa.Table:
        """The verdict rows of the block's `rows` (those whose identity key is judged)."""
        if not len(rows):
            return _empty()
        fields = block.fields.take(pa.array(rows))
        ts, claim_of_row, identity_of_row = block.ts[rows], who.claim_of_line[rows], who.identity_of_line[rows]
        # hosts: as the parser names them (`--default-host` for none), with their histories
        logged, host_of_row = distinct(fields.field("host"))
        named = [request_host(text, parse.default_host) for text in logged]
        hosts = [(host_key(name) or None) if name else None for name in named]
        decided = self._decided(
            fields, ts, who, claim_of_row, identity_of_row, named, hosts, host_of_row, robots_by_host, fetches
        )
        claimed = _table([_claim_columns(claim or UNCLAIMED) for claim in who.claims], (), _CLAIM_SCHEMA).take(
            pa.array(claim_of_row)
        )
        identified = _table(
            [_identity_columns(who.clients[chain], who.identities[index], self.auditor.truncate_addresses)
             for index, (_, chain, _) in enumerate(who.identity_keys)],
            (), _IDENTITY_SCHEMA,
        ).take(pa.array(identity_of_row))
        statuses, status_of_row = distinct(fields.field("status"))
        columns = {
            "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
            "host": pa.array(hosts, pa.string()).take(pa.array(host_of_row)),
            "method": fields.field("method"),
            "path": fields.field("target"),
            "target_host": pa.nulls(len(rows), pa.string()),
            "status": pa.array([logged_status(text) for text in statuses], pa.int64()).take(
                pa.array(status_of_row)
            ),
            "bytes": _sizes(fields, len(rows)),
            "retry_after": pa.nulls(len(rows), pa.string()),
            "user_agent": pa.array(["" if agent == "-" else agent for agent in who.agents], pa.string()).take(
                pa.array(who.agent_of_line[rows])
            ),
            "source": pc.binary_join_element_wise(f"{path}:", pa.array(block.offsets[rows] + first_number).cast(pa.string()), ""),
            "signature": pa.nulls(len(rows), pa.string()),
            "signature_input": pa.nulls(len(rows), pa.string()),
            **{name: claimed.column(name) for name in _CLAIM_NAMES},
            **{name: identified.column(name) for name in _IDENTITY_NAMES},
            **{name: decided.column(name) for name in decided.column_names},
        }
        return pa.Table.from_arrays([columns[name] for name in _VERDICT_SCHEMA.names], schema=_VERDICT_SCHEMA)

    def _referrals(self, block: _Block, visits: np.ndarray, parse: TextParser) -> Counter[Referral]:
        """The referrals of the block's `visits` (rows that get no verdict): the operator per
        distinct Referer, else per distinct target that carries a utm_source; host and UTC day as
        the verdicts name them."""
        referrers = self.auditor.registry.referrers
        if not referrers or not len(visits):
            return Counter()
        fields = block.fields.take(pa.array(visits))
        found: list[tuple[str, str]] = []  # (operator, via), indexed by the rows' referral ids
        referral_of_row = _referred_by_referer(referrers, fields.field("referer"), found)
        unnamed = np.flatnonzero(referral_of_row < 0)
        if len(unnamed):
            targets = fields.field("target").take(pa.array(unnamed))
            carry = np.flatnonzero(pc.match_substring(targets, UTM_SOURCE).to_numpy(zero_copy_only=False))
            referral_of_row[unnamed[carry]] = _referred_by_utm(referrers, targets.take(pa.array(carry)), found)
        referred = np.flatnonzero(referral_of_row >= 0)
        if not len(referred):
            return Counter()
        logged, host_of_row = distinct(fields.field("host").take(pa.array(referred)))
        named = [request_host(text, parse.default_host) for text in logged]
        hosts = [(host_key(name) or None) if name else None for name in named]
        days = block.ts[visits[referred]] // _MICROS_PER_DAY
        keys, key_of_row = row_keys(host_of_row, days, referral_of_row[referred])
        referrals: Counter[Referral] = Counter()
        for (host, day, referral), count in zip(keys, np.bincount(key_of_row, minlength=len(keys)).tolist()):
            operator, via = found[referral]
            referrals[hosts[host], operator, (_EPOCH_DAY + timedelta(days=day)).isoformat(), via] = count
        return referrals

    def _identified(self, block: _Block, dns_answers) -> _Identified:
        """Claims per User-Agent, clients per address and forwarded chain, identities per (claim,
        client, day); which identity keys get a verdict."""
        auditor = self.auditor
        if dns_answers is not None:
            dns_answers = self._checked(dns_answers)
        # 0 stands for no claim, u + 1 for the claim of agent u
        agents, agent_of = distinct(block.fields.field("user_agent"))
        agent_claims = [self._claim("" if agent == "-" else agent) for agent in agents]
        claim_ids = np.array([0 if claim is None else index + 1 for index, claim in enumerate(agent_claims)], np.int64)
        claim_of_line = claim_ids[agent_of] if len(agent_of) else np.zeros(0, np.int64)
        claims: list[Claim | None] = [None, *agent_claims]
        # an address holds no blank, so one joins it to its chain
        chains, chain_of = distinct(_joined(block.fields.field("client_ip"), block.fields.field("forwarded_for")))
        clients = [auditor.proxies.client(*_chain(text)) for text in chains]
        identity_keys, identity_of_line = row_keys(claim_of_line, chain_of, block.ts // _MICROS_PER_DAY)
        identities = []
        for claim_id, chain, day in identity_keys:
            claim, client, on = claims[claim_id], clients[chain], _EPOCH_DAY + timedelta(days=int(day))
            judged = gets_verdict(claim is not None, client, on, auditor.ranges)
            identities.append(identity_of(claim, client, on, auditor.ranges, dns_answers, None) if judged else None)
        judged = np.array([who is not None for who in identities], bool)
        return _Identified(
            agents, agent_of, claims, claim_of_line, clients, identity_keys, identities, identity_of_line, judged
        )

    def _decided(
        self, fields: pa.StructArray, ts: np.ndarray, who: _Identified, claim_of_row, identity_of_row,
        named: list[str | None], hosts: list[str | None], host_of_row, robots_by_host, fetches,
    ) -> pa.Table:
        """The decision columns of each row (`_DECISION_COLUMNS`), decided once per key."""
        histories = [self.auditor.history(name, robots_by_host) for name in named]
        claims = who.claims
        held_of_row, helds = self._held(fetches, claims, who.identities, hosts, claim_of_row, identity_of_row, host_of_row, ts)
        span_of_row, spans = _spans(histories, helds, host_of_row, held_of_row, ts, self.auditor.error_limit)
        paths, path_of_row = distinct(fields.field("target"))
        tags, tag_of_row = distinct(fields.field("x_robots_tag"))
        decision_keys, decision_of_row = row_keys(host_of_row, claim_of_row, path_of_row, tag_of_row, span_of_row)

        def decided(key: tuple[int, ...], held: Held | None) -> dict:
            host, claim_id, path_id, tag, span = key
            return decision_columns(
                histories[host], spans[span], paths[path_id], claims[claim_id] or UNCLAIMED, bool(named[host]),
                () if tags[tag] in ("", "-") else (tags[tag],), None, None, held,
            )

        decisions = [decided(key, None) for key in decision_keys]
        # What a crawler held changes only a decision it may revise; elsewhere it fills robots_fetch.
        revisable = np.array(
            [may_revise(histories[key[0]], columns["decision"]) for key, columns in zip(decision_keys, decisions)], bool
        )
        held_rows = held_of_row >= 0
        revised = held_rows & revisable[decision_of_row]
        revised_keys, revised_of_row = row_keys(decision_of_row[revised], held_of_row[revised])
        decision_of_row = decision_of_row.copy()
        decision_of_row[revised] = len(decisions) + revised_of_row
        decisions += [decided(decision_keys[key], helds[held]) for key, held in revised_keys]
        table = _table(decisions, _DECISION_COLUMNS, _DECISION_SCHEMA).take(pa.array(decision_of_row))
        filled = held_rows & ~revised
        fill_keys, fill_of_row = row_keys(host_of_row[filled], held_of_row[filled])
        fetched = _table(
            [{"robots_fetch": held_columns(histories[host], helds[held])} for host, held in fill_keys],
            _FETCH_COLUMNS, _FETCH_SCHEMA,
        ).column("robots_fetch")
        robots_fetch = pa.concat_arrays([*table.column("robots_fetch").chunks, *fetched.chunks])
        from_fill = np.arange(len(ts))
        from_fill[filled] = len(ts) + fill_of_row
        table = table.set_column(
            table.schema.get_field_index("robots_fetch"), _DECISION_SCHEMA.field("robots_fetch"),
            robots_fetch.take(pa.array(from_fill)),
        )
        return table.set_column(
            table.schema.get_field_index("unread_for_s"), _DECISION_SCHEMA.field("unread_for_s"),
            _unread_for(ts, table.column("unread_change")),
        )

    def _held(self, fetches, claims, identities, hosts, claim_of_row, identity_of_row, host_of_row, ts):
        """Per row, the index in `helds` of what its crawler held at it (-1: no fetch seen)."""
        held_of_row = np.full(len(ts), -1, np.int64)
        helds: list[Held] = []
        if not fetches:
            return held_of_row, helds
        # a fetch key is made of the claim, the identity's status and the host: few distinct ones
        statuses = sorted({who.status for who in identities if who is not None})
        status_ids = np.array([-1 if who is None else statuses.index(who.status) for who in identities], np.int64)
        keys, key_of_row = row_keys(claim_of_row, status_ids[identity_of_row], host_of_row)
        first_held: dict[int, int] = {}  # id of a fetch history -> the index of its first in `helds`
        for index, rows in groups(key_of_row):
            claim_id, status, host = keys[index]
            found = self._fetch_times(fetches, fetch_key(claims[claim_id], statuses[status], hosts[host]))
            if found is None:
                continue
            history, times = found
            if id(history) not in first_held:
                first_held[id(history)] = len(helds)
                helds.extend(history.held)
            # what it held after its latest fetch at or before the request (`FetchHistory.held_at`)
            latest = np.searchsorted(times, ts[rows], side="right") - 1
            seen = latest >= 0
            held_of_row[rows[seen]] = latest[seen] + first_held[id(history)]
        return held_of_row, helds

    def _fetch_times(self, fetches: Mapping[FetchKey, FetchHistory], key: FetchKey | None):
        """The fetch history of `key` and its fetch times in microseconds, read once per run."""
        if self._fetches is None or self._fetches[0] is not fetches:
            self._fetches = (fetches, {})
        known = self._fetches[1]
        if key not in known:
            history = fetches.get(key) if key is not None else None
            known[key] = None if history is None or not history.held else (
                history, np.array([micros(held.fetch.ts) for held in history.held], np.int64)
            )
        return known[key]

    def _claim(self, agent: str) -> Claim | None:
        claim = self._claims.get(agent, self)
        if claim is self:
            claim = self._claims[agent] = claim_of(agent, self.auditor.registry)
        return claim

    def _checked(self, dns_answers: Mapping[str, DnsAnswer]) -> Mapping[str, DnsAnswer]:
        if self._dns is None or self._dns[0] is not dns_answers:
            self._dns = (dns_answers, checked_dns(dns_answers, self.auditor.ranges))
        return self._dns[1]

    def _line_by_line(
        self, audited: AuditedBlock, path: str, first_number: int, lines: Sequence[str], offsets: np.ndarray,
        robots_by_host, dns_answers, fetches,
    ) -> AuditedBlock:
        """`audited` with the lines at `offsets` audited one by one, in runs of consecutive lines."""
        verdicts = []
        audited.left += len(offsets)
        for start, end in _runs(offsets):
            for kind, record in self.auditor.audit_lines(
                path, first_number + start, lines[start:end], robots_by_host, dns_answers, fetches
            ):
                if kind == VERDICT:
                    verdicts.append(record)
                elif kind == DEAD_LETTER:
                    audited.dead_letters.append(record)
                elif kind == NOT_REQUEST:
                    audited.not_requests.append(record)
                else:
                    assert kind == SKIPPED
                    audited.skipped += 1
                    if record is not None:
                        audited.referrals[record] += 1
        if verdicts:
            audited.verdicts = pa.concat_tables([audited.verdicts, _table(verdicts, records.VERDICTS, _VERDICT_SCHEMA)])
        return audited


@dataclass(frozen=True)
class _Identified:
    """Who the lines of a block are: each distinct User-Agent (`agents`) and its claim, clients,
    identity keys (claim, client, day) and their identities (None: no verdict), with each line's
    index into them."""

    agents: list[str]
    agent_of_line: np.ndarray
    claims: list[Claim | None]  # 0: no claim
    claim_of_line: np.ndarray
    clients: list[str]
    identity_keys: list[tuple[int, ...]]
    identities: list[IdentityResult | None]
    identity_of_line: np.ndarray
    judged: np.ndarray  # per identity key


@dataclass(frozen=True)
class _Block:
    fields: pa.StructArray
    offsets: np.ndarray  # of each row's line within the block
    ts: np.ndarray  # microseconds since the epoch, UTC


def _referred_by_referer(referrers: Referrers, referers: pa.Array, found: list[tuple[str, str]]) -> np.ndarray:
    """Per row, the index in `found` of the operator its Referer names (-1: none), read once per
    distinct Referer; `-` and an empty field name none, as the parser reads them."""
    texts, text_of_row = distinct(referers)
    ids = np.array(
        [_referral_id(found, referrers.of_referer(None if text in ("", "-") else text), REFERER) for text in texts],
        np.int64,
    )
    return ids[text_of_row]


def _referred_by_utm(referrers: Referrers, targets: pa.Array, found: list[tuple[str, str]]) -> np.ndarray:
    """Per row, the index in `found` of the operator its target's utm_source names (-1: none),
    read once per distinct target (origin-form: the path the parser records)."""
    texts, text_of_row = distinct(targets)
    ids = np.array([_referral_id(found, referrers.of_utm(text), UTM_SOURCE) for text in texts], np.int64)
    return ids[text_of_row]


def _referral_id(found: list[tuple[str, str]], operator: str | None, via: str) -> int:
    if operator is None:
        return -1
    if (operator, via) not in found:
        found.append((operator, via))
    return found.index((operator, via))


def _text(lines: Sequence[str]) -> pa.Array | None:
    """The lines as one Arrow column; None when one holds a lone surrogate, which no UTF-8 spells."""
    try:
        return pa.array(lines, pa.string())
    except (pa.ArrowException, UnicodeEncodeError):
        return None


def _times(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each line's time in microseconds, and whether it could be read; each distinct text is read
    once, by the parser's own reader."""
    values, inverse = distinct(texts)
    read = np.zeros(len(values), np.int64)
    good = np.ones(len(values), bool)
    for index, text in enumerate(values):
        try:
            read[index] = micros(clf_timestamp(text))
        except LogParseError:
            good[index] = False
    return read[inverse], good[inverse]


def _spans(histories: list[HostHistory | None], helds: list[Held], host_of_row, held_of_row, ts, error_limit):
    """Per row, the index of the span of time that no turning point of its host's history, nor
    the end of the run of errors its crawler held, if any, cuts (equal rows share it), and for each
    span a time inside it that stands for it."""
    error_end = np.array(
        [-1 if held.kind != "error" or (end := _limit_end(held.error_since, error_limit)) is None else end
         for held in helds] + [-1], np.int64,
    )[held_of_row]  # held_of_row -1 picks the last: none
    span_keys = np.zeros((len(ts), 2), np.int64)
    stand_ins: dict[tuple[int, int, int, int], datetime] = {}
    host_points = {}
    host_ends, group_of_row = row_keys(host_of_row, error_end)
    for group, rows in groups(group_of_row):
        host, end = host_ends[group]
        if host not in host_points:
            history = histories[host]
            host_points[host] = [micros(point) for point in history.turning_points()] if history is not None else []
        points = np.unique(np.array(host_points[host] + ([end] if end >= 0 else []), np.int64))
        before = np.searchsorted(points, ts[rows], side="left")
        through = np.searchsorted(points, ts[rows], side="right")
        span_keys[rows, 0], span_keys[rows, 1] = before, through
        for first, last in set(zip(before.tolist(), through.tolist())):
            stand_ins[group, first, last] = _stand_in(points, first, last)
    keys, span_of_row = row_keys(group_of_row, span_keys[:, 0], span_keys[:, 1])
    return span_of_row, [stand_ins[group, first, last] for group, first, last in keys]


def _limit_end(error_since: datetime, error_limit: timedelta) -> int | None:
    """The moment a run of errors begun at `error_since` passes the limit, in microseconds; None
    when no time can be that late."""
    try:
        return micros(error_since + error_limit)
    except OverflowError:
        return None


def _stand_in(points: np.ndarray, first: int, last: int) -> datetime:
    """A time in the span of the rows with `first` points before them and `last` at or before them:
    the point itself, or a microsecond after the point before (before the first point: one before it)."""
    if last > first:
        moment = int(points[first])
    elif first > 0:
        moment = int(points[first - 1]) + 1
    elif len(points):
        moment = int(points[0]) - 1
    else:
        moment = 0
    return EPOCH + timedelta(microseconds=moment)


def _unread_for(ts: np.ndarray, unread_change: pa.ChunkedArray) -> pa.Array:
    """How long the change a row's crawler had not fetched had been in effect at the row's time."""
    change = unread_change.combine_chunks() if isinstance(unread_change, pa.ChunkedArray) else unread_change
    valid = change.is_valid().to_numpy(zero_copy_only=False)
    since = change.cast(pa.int64()).fill_null(0).to_numpy()
    return pa.array((ts - since) / 1e6, pa.float64(), mask=~valid)


def _claim_columns(claim: Claim) -> dict:
    registered = claim.registered
    return {
        "crawler": claim.crawler,
        "client_kind": claim.kind,
        "purpose": list(claim.purposes),
        "tokens": list(claim.tokens),
        "honours_robots": None if registered is None else registered.honours_robots,
        "honours_crawl_delay": None if registered is None else registered.honours_crawl_delay,
    }


def _identity_columns(client: str, who: IdentityResult | None, truncate_addresses: bool) -> dict:
    if who is None:  # a key of lines that get no verdict: no row takes it
        return {"client_ip": client, "operator": None, "identity": "", "identity_method": None, "identity_evidence": None}
    return {
        "client_ip": written_address(client, who.status, truncate_addresses),
        "operator": who.operator,
        "identity": who.status,
        "identity_method": who.method,
        "identity_evidence": who.evidence,
    }


def _table(rows: list[dict], columns, schema: pa.Schema) -> pa.Table:
    """The rows as a table of `schema`: Arrow takes a record's values as they are (it leaves out a
    struct's other keys and reads a tuple as a list) but for the `json` columns' objects, which
    become their text as `records.shaped` makes it."""
    texts = [column.name for column in columns if column.type == "json"]
    if texts:
        rows = [_with_json_text(row, texts) for row in rows]
    return pa.Table.from_pylist(rows, schema=schema)


def _with_json_text(row: dict, names: list[str]) -> dict:
    objects = [name for name in names if row.get(name) is not None]
    return {**row, **{name: records.json_text(row[name]) for name in objects}} if objects else row


def _empty() -> pa.Table:
    return _VERDICT_SCHEMA.empty_table()


def _joined(addresses: pa.Array, chains: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(addresses, chains, " ")


def _chain(text: str) -> tuple[str, str | None]:
    address, _, forwarded = text.partition(" ")
    return address, None if forwarded in ("", "-") else forwarded


def _runs(offsets: np.ndarray):
    """(start, end) of each run of consecutive offsets."""
    if not len(offsets):
        return
    breaks = np.flatnonzero(np.diff(offsets) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(offsets) - 1]])
    for start, end in zip(offsets[starts].tolist(), offsets[ends].tolist()):
        yield start, end + 1


def _sizes(fields: pa.StructArray, rows: int) -> pa.Array:
    """The logged response sizes, read as the per-line reader reads them."""
    if fields.type.get_field_index("size") < 0:
        return pa.nulls(rows, pa.int64())
    sizes, size_of_row = distinct(fields.field("size"))
    return pa.array([logged_size(text) for text in sizes], pa.int64()).take(
        pa.array(size_of_row)
    )
