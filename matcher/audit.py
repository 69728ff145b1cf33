"""One crawler request in, one explained verdict out.

The claim comes from the User-Agent (a registry crawler, or an unlisted client
that calls itself a bot), the identity from the client address, and the robots
decision from the host's history at the request's time. A request that claims
no crawler is audited only when it comes from a crawler range (`undeclared`);
it is then judged by the `User-agent: *` group, the rules every unnamed crawler
must follow. Anything else is not a crawler request and gets no verdict.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from matcher import agents, identity
from matcher.agents import Crawler, Registry
from matcher.history import HostHistory, Judgement, UNKNOWN
from matcher.identity import IdentityResult, RangeIndex

# Identity of an unlisted crawler: nobody publishes a way to check it.
_UNLISTED = IdentityResult("unverifiable", "none", "crawler not in the registry", None)


class Request(Protocol):
    ts: datetime
    host: str | None
    client_ip: str
    method: str
    path: str
    status: int | None
    user_agent: str


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
    token = agents.product_token(user_agent)
    return Claim(token, (token,) if token else (), True)


def identity_of(claim: Claim | None, request: Request, ranges: RangeIndex) -> IdentityResult | None:
    """The identity verdict; None for an unclaimed request from outside every crawler range."""
    if claim is None:
        return identity.undeclared(request.client_ip, request.ts, ranges)
    if claim.registered is None:
        return _UNLISTED
    return identity.verify(claim.registered, request.client_ip, request.ts, ranges)


def audit(
    request: Request,
    source: str,
    registry: Registry,
    ranges: RangeIndex,
    history: HostHistory | None,
) -> dict | None:
    """The verdict record (columns of `records.VERDICTS`), or None for a non-crawler."""
    claim = claim_of(request.user_agent, registry)
    who = identity_of(claim, request, ranges)
    if who is None:
        return None
    claim = claim or Claim(None, (), True)
    judgement = _judge(history, request, claim)
    return {
        "ts": request.ts,
        "host": request.host,
        "client_ip": request.client_ip,
        "method": request.method,
        "path": request.path,
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
    }


def _judge(history: HostHistory | None, request: Request, claim: Claim) -> Judgement:
    if history is None:
        return Judgement(UNKNOWN, "unknown-host" if request.host else "no-host")
    return history.judge(request.ts, claim.tokens, request.path, claim.catch_all)


def _robots_columns(judgement: Judgement) -> dict:
    version, match = judgement.version, judgement.match
    rule = match.rule if match is not None else None
    group = match.group if match is not None else None
    grace = judgement.grace_version
    return {
        "robots_version": None
        if version is None
        else {
            "effective_from": version.effective_from,
            "status": "unreachable" if version.status is None else str(version.status),
            "sha256": version.sha256,
        },
        "group": None if group is None else group.agents,
        "rule_kind": None if rule is None else rule.kind,
        "rule_pattern": None if rule is None else rule.pattern,
        "rule_line": None if rule is None else rule.line,
        "rule_normalized": None if rule is None else rule.normalized,
        "decision": judgement.decision,
        "reason": judgement.reason,
        "grace_from": None if grace is None else grace.effective_from,
        "crawl_delay": judgement.crawl_delay,
        "crawl_delay_line": judgement.crawl_delay_line,
    }
