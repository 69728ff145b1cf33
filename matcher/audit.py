"""One crawler request in, one explained verdict out.

The claim comes from the User-Agent (a registry crawler, or an unlisted client
that calls itself a bot), the identity from the client address (behind trusted
proxies, from X-Forwarded-For) and its reverse DNS when given, and the robots
decision from the host's history at the request's time. A request that claims
no crawler is audited only when it comes from a crawler range (`undeclared`);
it is then judged by the `User-agent: *` group, the rules every unnamed crawler
must follow. Anything else is not a crawler request and gets no verdict.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime

from matcher import agents, identity
from matcher.addresses import parse_ip
from matcher.agents import Crawler, Registry
from matcher.clientip import NO_PROXIES, TrustedProxies
from matcher.directives import PageDirectivesTable, effective_indexing, indexing_unseen
from matcher.history import HostHistory, Judgement, RobotsVersion, UNKNOWN
from matcher.hosts import host_key
from matcher.identity import IdentityResult
from matcher.ip_ranges import RangeIndex
from matcher.logformats import LogRecord
from matcher.reverse_dns import DnsAnswer

__all__ = ["Claim", "audit", "claim_of", "dns_question", "gets_verdict", "gets_verdict_whatever_the_day", "identity_of"]

# Identity of an unlisted crawler: nobody publishes a way to check it.
_UNLISTED = IdentityResult("unverifiable", "none", "crawler not in the registry", None)


@dataclass(frozen=True)
class Claim:
    """Who a request says it is, and the robots.txt groups it answers to."""

    crawler: str | None
    tokens: tuple[str, ...]
    catch_all: bool
    registered: Crawler | None = None


def claim_of(user_agent: str, registry: Registry) -> Claim | None:
    """The crawler a User-Agent claims, or None for a client that claims none."""
    crawler = registry.identify(user_agent)
    if crawler is not None:
        return Claim(crawler.name, crawler.robots_tokens, not crawler.ignores_catch_all, crawler)
    if not agents.claims_crawler(user_agent, registry):
        return None
    token = agents.product_token(user_agent, registry)
    return Claim(token, (token,) if token else (), True)


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
) -> IdentityResult | None:
    """The identity verdict; None for an unclaimed request from outside every crawler range."""
    if claim is None:
        return identity.undeclared(client_ip, at, ranges)
    if claim.registered is None:
        return _UNLISTED
    return identity.verify(claim.registered, client_ip, at, ranges, dns)


def dns_question(request: LogRecord, registry: Registry, ranges: RangeIndex, proxies: TrustedProxies) -> str | None:
    """The address whose reverse DNS `audit` will look up for this request, if any."""
    crawler = registry.identify(request.user_agent)
    if crawler is None:
        return None
    client_ip = proxies.client(request.client_ip, request.forwarded_for)
    return identity.reverse_dns_address(crawler, client_ip, request.ts, ranges)


def audit(
    request: LogRecord,
    source: str,
    registry: Registry,
    ranges: RangeIndex,
    history: HostHistory | None,
    proxies: TrustedProxies = NO_PROXIES,
    dns: Mapping[str, DnsAnswer] | None = None,
    pages: PageDirectivesTable | None = None,
) -> dict | None:
    """The verdict record (columns of `records.VERDICTS`), or None for a non-crawler.

    `proxies` picks the client address of an X-Forwarded-For chain; `dns` holds the reverse DNS
    of the addresses `dns_question` names (None: DNS off); `pages` is the page-directives table,
    read with the request's own X-Robots-Tag values for the separate indexing facet. The host
    is written in its one form (`hosts.host_key`), however the record spells it.
    """
    claim = claim_of(request.user_agent, registry)
    client_ip = proxies.client(request.client_ip, request.forwarded_for)
    if not gets_verdict(claim is not None, client_ip, request.ts, ranges):
        return None
    who = identity_of(claim, client_ip, request.ts, ranges, dns)
    claim = claim or Claim(None, (), True)
    host = (host_key(request.host) or None) if request.host else None
    judgement = _judge(history, request, claim)
    page = pages.lookup(host, request.path, request.ts) if pages is not None else None
    indexing = effective_indexing(request.x_robots_tag, page, claim.tokens)
    return {
        "ts": request.ts,
        "host": host,
        "client_ip": client_ip,
        "method": request.method,
        "path": request.path,
        "target_host": request.target_host if request.target_host != host else None,
        "status": request.status,
        "user_agent": request.user_agent,
        "source": source,
        "crawler": claim.crawler,
        "operator": who.operator,
        "tokens": claim.tokens,
        "identity": who.status,
        "identity_method": who.method,
        "identity_evidence": who.evidence,
        "honours_robots": None if claim.registered is None else claim.registered.honours_robots,
        "honours_crawl_delay": None if claim.registered is None else claim.registered.honours_crawl_delay,
        **_robots_columns(judgement),
        "indexing": indexing,
        "indexing_unseen": indexing_unseen(judgement.decision, indexing),
    }


def _judge(history: HostHistory | None, request: LogRecord, claim: Claim) -> Judgement:
    if history is None:
        return Judgement(UNKNOWN, "unknown-host" if request.host else "no-host")
    return history.judge(request.ts, claim.tokens, request.path, claim.catch_all)


def _robots_columns(judgement: Judgement) -> dict:
    version, match = judgement.version, judgement.match
    rule = match.rule if match is not None else None
    group = match.group if match is not None else None
    grace, later = judgement.grace_version, judgement.later_version
    return {
        "robots_version": None if version is None else _version_columns(version),
        "group": None if group is None else group.agents,
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


def _version_columns(version: RobotsVersion) -> dict:
    return {
        "effective_from": version.effective_from,
        "status": "unreachable" if version.status is None else str(version.status),
        "sha256": version.sha256,
    }
