"""One crawler request in, one explained verdict out.

The claim comes from the User-Agent (a registry crawler, an unlisted client
that calls itself a bot, or an automated client such as an HTTP library), the identity from the client address (behind trusted
proxies, from X-Forwarded-For) and its reverse DNS when given, and the robots
decision from the host's history at the request's time. A request that claims
no crawler is audited only when it comes from a crawler range (`undeclared`),
or when its Signature-Agent names a key directory of the registry (a signed
agent, proved by its signature alone); it is then judged by the `User-agent: *`
group, the rules every unnamed crawler must follow. Anything else is a
browser's request and gets no verdict.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from matcher import agents, identity
from matcher.addresses import address_text, parse_ip, truncated
from matcher.agents import AGENT, AUTOMATED, CRAWLER, UNKNOWN_PURPOSE, ClientKind, Crawler, KeyDirectory, Registry
from matcher.clientip import NO_PROXIES, TrustedProxies
from matcher.directives import PageDirectives, PageDirectivesTable, effective_indexing, indexing_unseen
from matcher.history import HostHistory, Judgement, RobotsVersion, UNKNOWN
from matcher.hosts import host_key
from matcher.identity import IdentityResult
from matcher.ip_ranges import RangeIndex
from matcher.web_bot_auth import LoggedRequest, SignedRequest, signature_agent_urls
from matcher.logformats import LogRecord
from matcher.preferences import conflicts as preference_conflicts
from matcher.preferences import parse_usage_header
from matcher.reverse_dns import DnsAnswer
from matcher.robots import is_robots_txt
from matcher.normalize import normalize
from matcher.robots_fetches import FetchHistory, FetchKey, Held, Revised, RobotsFetch, held_version, revise

__all__ = [
    "Claim",
    "UNCLAIMED",
    "agent_claim",
    "audit",
    "claim_of",
    "claimant",
    "decision_columns",
    "dns_control",
    "dns_question",
    "fetch_key",
    "fetch_key_of",
    "fetch_of",
    "gets_verdict",
    "gets_verdict_whatever_the_day",
    "held_columns",
    "identity_of",
    "is_robots_fetch",
    "judged_by_what_was_held",
    "signed_request",
    "written_address",
]

# Identity of an unlisted crawler: nobody publishes a way to check it.
_UNLISTED = IdentityResult("unverifiable", "none", "crawler not in the registry", None)
# An HTTP library or tool fetches for whoever runs it: nothing names, let alone proves, who that is.
_AUTOMATED = IdentityResult("unverifiable", "none", "automated client: nothing says who runs it", None)
_UNKNOWN_PURPOSES = (UNKNOWN_PURPOSE,)
# Identities whose address may be a person's: nobody can prove a crawler sent them (automated
# clients and unlisted bots are unverifiable, browsers from crawler ranges undeclared).
_MAYBE_A_PERSON = frozenset({"unverifiable", "undeclared"})


@dataclass(frozen=True)
class Claim:
    """Who a request says it is, and the robots.txt groups it answers to."""

    crawler: str | None
    tokens: tuple[str, ...]
    catch_all: bool
    registered: Crawler | None = None
    kind: ClientKind = CRAWLER
    signer: KeyDirectory | None = None  # a signed agent's key directory

    @property
    def purposes(self) -> tuple[str, ...]:
        if self.signer is not None:
            return self.signer.purposes
        return _UNKNOWN_PURPOSES if self.registered is None else self.registered.purposes


# How `audit` judges a request that claims no crawler: by the `*` group, with no token of its own.
UNCLAIMED = Claim(None, (), True)


def claim_of(user_agent: str, registry: Registry) -> Claim | None:
    """The crawler or automated client a User-Agent claims, or None for a browser.

    An automated client answers to the group of its own product token (`User-agent: curl`)
    and else to `*`, like an unlisted crawler."""
    crawler = registry.identify(user_agent)
    if crawler is not None:
        return Claim(crawler.name, crawler.robots_tokens, not crawler.ignores_catch_all, crawler)
    kind = agents.client_kind(user_agent, registry)
    if kind == AUTOMATED:
        token = agents.automated_token(user_agent, registry)
        return Claim(token, (token,) if token else (), True, kind=AUTOMATED)
    if kind != CRAWLER:
        return None
    token = agents.product_token(user_agent, registry)
    return Claim(token, (token,) if token else (), True)


def agent_claim(agent: str | None, registry: Registry) -> Claim | None:
    """The signed agent a request's Signature-Agent names: a registry key directory's agent,
    answering to the `*` group like any unnamed client; None when it names no such directory."""
    if agent is None or not registry.key_directories:
        return None
    named = set(signature_agent_urls(agent).values())
    for directory in registry.key_directories.values():
        if directory.url in named:
            return Claim(directory.agent, (), True, kind=AGENT, signer=directory)
    return None


def gets_verdict(claims_crawler: bool, client_ip: str, at: date | datetime, ranges: RangeIndex) -> bool:
    """Whether `audit` gives a request a verdict: always when it claims a crawler; when it claims
    none, only from an address in a crawler range on its day."""
    every_day = gets_verdict_whatever_the_day(claims_crawler, client_ip, ranges)
    return identity.undeclared(client_ip, at, ranges) is not None if every_day is None else every_day


def gets_verdict_whatever_the_day(claims_crawler: bool, client_ip: str, ranges: RangeIndex) -> bool | None:
    """`gets_verdict` where the request's day does not change it; None where it may. Most clients
    claim no crawler from an address no crawler range ever held: one answer for all their days."""
    if claims_crawler:
        return True
    address = parse_ip(client_ip)
    return None if address is not None and ranges.ever_holds(address) else False


def identity_of(
    claim: Claim | None,
    client_ip: str,
    at: datetime,
    ranges: RangeIndex,
    dns: Mapping[str, DnsAnswer] | None = None,
    signed: SignedRequest | None = None,
) -> IdentityResult | None:
    """The identity verdict; None for an unclaimed request from outside every crawler range."""
    if claim is None:
        return identity.undeclared(client_ip, at, ranges)
    if claim.signer is not None:
        return identity.verify_signed_agent(claim.signer, at, ranges, signed)
    if claim.registered is None:
        return _AUTOMATED if claim.kind == AUTOMATED else _UNLISTED
    return identity.verify(claim.registered, client_ip, at, ranges, dns, signed)


def signed_request(request: LogRecord) -> SignedRequest | None:
    """The request's signature headers with the components a signature may cover, as logged;
    None when it carries no signature. The scheme is the absolute-form target's, else https:
    a signed request comes over TLS."""
    signed = request.signed
    if signed is None or signed.signature_input is None or signed.signature is None:
        return None
    fields = {"signature-agent": signed.signature_agent} if signed.signature_agent is not None else {}
    scheme = request.target.partition("://")[0].lower()
    scheme = scheme if scheme in ("http", "https") else "https"
    logged = LoggedRequest(request.method, signed.authority, request.path, fields, scheme, signed.agent_logged)
    return SignedRequest(logged, signed.signature_input, signed.signature)


def claimant(
    request: LogRecord,
    registry: Registry,
    ranges: RangeIndex,
    proxies: TrustedProxies = NO_PROXIES,
    dns: Mapping[str, DnsAnswer] | None = None,
) -> tuple[Claim | None, str, IdentityResult] | None:
    """Who made a request, as `audit` says: its claim, client address and identity; None when it
    gets no verdict."""
    claim = claim_of(request.user_agent, registry)
    if claim is None or claim.kind == AUTOMATED:
        claim = agent_claim(request.signed.signature_agent if request.signed is not None else None, registry) or claim
    client_ip = proxies.client(request.client_ip, request.forwarded_for)
    if not gets_verdict(claim is not None, client_ip, request.ts, ranges):
        return None
    return claim, client_ip, identity_of(claim, client_ip, request.ts, ranges, dns, signed_request(request))


def fetch_key(claim: Claim | None, identity_status: str, host: str | None) -> FetchKey | None:
    """Whose robots.txt fetches a request of this claim, identity and host is judged by: its fetch
    family's (the registry's, or the unlisted crawler's token), of its identity class, on its host.
    A request that claims no crawler has none, nor does a signed agent's: it fetches for a user."""
    if claim is None or claim.crawler is None or claim.kind == AGENT:
        return None
    registered = claim.registered
    family = claim.crawler if registered is None else registered.robots_fetch_family or registered.name
    return host, family, identity_status


def is_robots_fetch(path: str | None) -> bool:
    """A request for /robots.txt itself, in any spelling the normalization maps to it."""
    return path is not None and is_robots_txt(normalize(path))


def dns_question(request: LogRecord, registry: Registry, ranges: RangeIndex, proxies: TrustedProxies) -> str | None:
    """The address whose reverse DNS `audit` will look up for this request, if any."""
    crawler = registry.identify(request.user_agent)
    if crawler is None:
        return None
    client_ip = proxies.client(request.client_ip, request.forwarded_for)
    return identity.reverse_dns_address(crawler, client_ip, request.ts, ranges)


def dns_control(request: LogRecord, registry: Registry, ranges: RangeIndex, proxies: TrustedProxies) -> str | None:
    """An address the published ranges prove for this request's claim, whose reverse DNS tells
    whether the resolver's NXDOMAINs can be trusted (`matcher.dns_trust`); None for most requests."""
    crawler = registry.identify(request.user_agent)
    if crawler is None or crawler.robots_only or not crawler.rdns_suffixes:
        return None
    client_ip = proxies.client(request.client_ip, request.forwarded_for)
    address = parse_ip(client_ip)
    if address is None:
        return None
    # with suffixes and a valid address, no question for reverse DNS means a range proves it
    return str(address) if identity.reverse_dns_address(crawler, client_ip, request.ts, ranges) is None else None


def audit(
    request: LogRecord,
    source: str,
    registry: Registry,
    ranges: RangeIndex,
    history: HostHistory | None,
    proxies: TrustedProxies = NO_PROXIES,
    dns: Mapping[str, DnsAnswer] | None = None,
    pages: PageDirectivesTable | None = None,
    fetches: Mapping[FetchKey, FetchHistory] | None = None,
    truncate_addresses: bool = False,
) -> dict | None:
    """The verdict record (columns of `records.VERDICTS`), or None for a browser.

    With `truncate_addresses` the client address of a request that may be a person's (an
    automated client, an unverifiable claim, a browser's User-Agent from a crawler range) is
    written as its /24 or /48 network: the audit needs it whole, the record does not.

    `proxies` picks the client address of an X-Forwarded-For chain; `dns` holds the reverse DNS
    of the addresses `dns_question` names (None: DNS off); `pages` is the page-directives table,
    read with the request's own X-Robots-Tag values for the separate indexing facet; `fetches`
    the robots.txt fetches of the run by `FetchKey` (None: not followed, every verdict judged
    with the fixed grace as when no fetch was seen). The host is written in its one form
    (`hosts.host_key`), however the record spells it.
    """
    claimed = claimant(request, registry, ranges, proxies, dns)
    if claimed is None:
        return None
    claim, client_ip, who = claimed
    host = (host_key(request.host) or None) if request.host else None
    key = fetch_key(claim, who.status, host) if fetches else None
    of_key = fetches.get(key) if key is not None else None
    held = of_key.held_at(request.ts) if of_key is not None else None
    claim = claim or UNCLAIMED
    page = pages.lookup(host, request.path, request.ts) if pages is not None else None
    return {
        "ts": request.ts,
        "host": host,
        "client_ip": written_address(client_ip, who.status, truncate_addresses),
        "method": request.method,
        "path": request.path,
        "target_host": request.target_host if request.target_host != host else None,
        "status": request.status,
        "bytes": request.size,
        "retry_after": request.retry_after,
        "user_agent": request.user_agent,
        "source": source,
        "crawler": claim.crawler,
        "client_kind": claim.kind,
        "purpose": claim.purposes,
        "operator": who.operator,
        "tokens": claim.tokens,
        "identity": who.status,
        "identity_method": who.method,
        "identity_evidence": who.evidence,
        "signature": request.signed.signature if request.signed is not None else None,
        "signature_input": request.signed.signature_input if request.signed is not None else None,
        "honours_robots": None if claim.registered is None else claim.registered.honours_robots,
        "honours_crawl_delay": None if claim.registered is None else claim.registered.honours_crawl_delay,
        **decision_columns(
            history, request.ts, request.path, claim, bool(request.host), request.x_robots_tag, request.content_usage,
            page, held,
        ),
    }


def written_address(client_ip: str, identity_status: str, truncate_addresses: bool) -> str:
    """The client address as a verdict writes it: with `truncate_addresses`, the /24 or /48 network
    of a request that may be a person's, else the address alone."""
    if truncate_addresses and identity_status in _MAYBE_A_PERSON:
        return truncated(client_ip)
    # in its one spelling (`::ffff:a.b.c.d` as `a.b.c.d`, no port), as every table counts it; what
    # is remembered before this point is keyed by the text as logged
    return address_text(client_ip)


def decision_columns(
    history: HostHistory | None,
    ts: datetime,
    path: str,
    claim: Claim,
    host_named: bool,
    x_robots_tag: tuple[str, ...],
    content_usage: str | None,
    page: PageDirectives | None = None,
    held: Held | None = None,
) -> dict:
    """The columns of `audit` from `robots_version` on: the host history's judgement of `path` at
    `ts` for `claim` (`UNCLAIMED` for a request that claims none) as what its crawler held revises
    it, and the indexing facet of the request's X-Robots-Tag values and the page directives row in
    effect (`page`). `host_named`: the line named a host (else no robots.txt can be chosen)."""
    indexing = effective_indexing(x_robots_tag, page, claim.tokens, _header_usage(content_usage))
    judgement = _judge(history, ts, path, claim, "unknown-host" if host_named else "no-host")
    return _judged_columns(history, judgement, held, ts, path, claim, indexing, content_usage)


def fetch_key_of(verdict: Mapping, registry: Registry) -> FetchKey | None:
    """The `fetch_key` of the request a verdict record was made of."""
    return fetch_key(claim_of(verdict["user_agent"], registry), verdict["identity"], verdict["host"])


def fetch_of(verdict: Mapping) -> RobotsFetch | None:
    """The robots.txt fetch a verdict record is of; None when its request is for another path."""
    if not is_robots_fetch(verdict["path"]):
        return None
    return RobotsFetch(verdict["ts"], verdict["status"], verdict["source"], verdict["crawler"])


def judged_by_what_was_held(
    verdict: dict, history: HostHistory | None, held: Held | None, registry: Registry
) -> dict:
    """The record `audit` makes of a request when its crawler held `held` at it, from the record
    it made with no fetch seen (`verdict`, a claim's: only claims have fetch keys); `history` is
    the host's."""
    if held is None:
        return verdict
    claim = claim_of(verdict["user_agent"], registry)
    ts, path = verdict["ts"], verdict["path"]
    judgement = _judge(history, ts, path, claim, verdict["reason"])
    return {
        **verdict,
        **_judged_columns(history, judgement, held, ts, path, claim, verdict["indexing"], verdict["content_usage"]),
    }


def held_columns(history: HostHistory | None, held: Held | None) -> dict | None:
    """The `robots_fetch` column of a request whose crawler held `held` (None: no fetch seen)."""
    return _held_columns(held, held_version(history, held))


def _judge(history: HostHistory | None, ts: datetime, path: str, claim: Claim, unknown_reason: str) -> Judgement:
    if history is None:
        return Judgement(UNKNOWN, unknown_reason)
    return history.judge(ts, claim.tokens, path, claim.catch_all)


def _judged_columns(
    history: HostHistory | None,
    judgement: Judgement,
    held: Held | None,
    ts: datetime,
    path: str,
    claim: Claim,
    indexing: dict | None,
    content_usage: str | None,
) -> dict:
    """The columns that follow from the history's judgement as what the crawler held revises it;
    `content_usage` is the response's Content-Usage header as logged."""
    revised = revise(history, judgement, held, ts, claim.tokens, path, claim.catch_all)
    judgement = revised.judgement
    return {
        **_robots_columns(judgement),
        "indexing": indexing,
        "indexing_unseen": indexing_unseen(judgement.decision, indexing),
        **_fetch_columns(revised),
        "preferences": judgement.preferences.record() if judgement.preferences else None,
        "preference_conflicts": preference_conflicts(
            claim.purposes, judgement.preferences, _header_usage(content_usage)
        ),
        "content_usage": content_usage,
    }


def _header_usage(content_usage: str | None) -> tuple[tuple[str, str], ...]:
    """The (category, y|n) pairs of a logged Content-Usage header; none when it is absent or unreadable."""
    return parse_usage_header(content_usage).pairs if content_usage else ()


def _robots_columns(judgement: Judgement) -> dict:
    version, match = judgement.version, judgement.match
    rule = match.rule if match is not None else None
    group = match.group if match is not None else None
    grace, later = judgement.grace_version, judgement.later_version
    return {
        "robots_version": None if version is None else _version_columns(version),
        "robots_group": None if group is None else group.agents,
        "rule_kind": None if rule is None else rule.kind,
        "rule_pattern": None if rule is None else rule.pattern,
        "rule_line": None if rule is None else rule.line,
        "rule_normalized": None if rule is None else rule.normalized,
        "decision": judgement.decision,
        "reason": judgement.reason,
        "grace_from": None if grace is None else grace.effective_from,
        "later_version": None
        if later is None
        else {**_version_columns(later), "observed_before": later.observed_before},
        "crawl_delay": judgement.crawl_delay,
        "crawl_delay_line": judgement.crawl_delay_line,
    }


def _fetch_columns(revised: Revised) -> dict:
    change = revised.unread_change
    return {
        "robots_fetch": _held_columns(revised.held, revised.held_version),
        "grace_assumed": revised.grace_assumed,
        "unread_change": None if change is None else change.effective_from,
        "unread_for_s": None if revised.unread_for is None else revised.unread_for.total_seconds(),
    }


def _held_columns(held: Held | None, version: RobotsVersion | None) -> dict | None:
    if held is None:
        return None
    return {
        "ts": held.fetch.ts,
        "status": held.fetch.status,
        "source": held.fetch.source,
        "held": held.kind,
        "served_at": held.served_at,
        "version": None if version is None else _version_columns(version),
    }


def _version_columns(version: RobotsVersion) -> dict:
    return {
        "effective_from": version.effective_from,
        "status": "unreachable" if version.status is None else str(version.status),
        "sha256": version.sha256,
    }
