"""Visits an operator's services sent: which operator a request's `Referer` or `utm_source` names.

A visit is a request that gets no verdict (neither a crawler, an automated client nor undeclared
crawler traffic: what the audit counts as a non-crawler and does not write). It was referred by
an operator when its Referer's host is one of the operator's service hosts, at a label boundary
and with `www.` removed (`chat.openai.com`, `www.perplexity.ai`), or any country domain of a
search engine the operator runs (`google.de`, `www.google.co.uk`, `bing.com`); or when its
`utm_source` value, compared case-insensitively, is one the operator's links carry, or such a
host. A request that matches both counts once, by its Referer (docs/semantics.md § Referrals).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "REFERER",
    "UTM_SOURCE",
    "SEARCH_ENGINES",
    "Referrer",
    "Referrers",
    "referer_host",
]

REFERER, UTM_SOURCE = "referer", "utm_source"
# A search engine's result pages live under one name in every country: google.de, google.co.uk,
# google.com.au, bing.com.
SEARCH_ENGINES = frozenset({"google", "bing"})
_COUNTRY_DOMAIN = r"(?:^|\.)({names})\.(?:com?\.)?[a-z]{{2,3}}$"


@dataclass(frozen=True)
class Referrer:
    """One operator's services, as the registry lists them with the page that documents them."""

    operator: str
    hosts: tuple[str, ...]  # lower case, without www.
    utm_sources: tuple[str, ...]  # lower case
    search_engine: str | None  # one of SEARCH_ENGINES: all of its country domains
    source: str


def referer_host(referer: str | None) -> str | None:
    """The host a Referer names, lower case, without a final dot or a leading `www.`; None when it
    names none."""
    if not referer:
        return None
    text = referer.strip()
    if "//" not in text:
        text = "//" + text  # a bare host, as some logs write it
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = host.rstrip(".")
    return host[4:] if host.startswith("www.") else host


class Referrers:
    """The registry's referrers, indexed once: which operator a request's Referer or utm_source
    names."""

    def __init__(self, referrers: Iterable[Referrer]):
        self.referrers = tuple(referrers)
        self._hosts = {host: r.operator for r in self.referrers for host in r.hosts}
        self._utm = {value: r.operator for r in self.referrers for value in r.utm_sources}
        engines = {r.search_engine: r.operator for r in self.referrers if r.search_engine}
        self._engines = engines
        self._engine_pattern = (
            re.compile(_COUNTRY_DOMAIN.format(names="|".join(map(re.escape, sorted(engines))))) if engines else None
        )
        # Every line a referral can be read from holds one of these, case aside: a cheap test
        # before a line the audit skipped is parsed in full. A utm_source match needs the key; a
        # Referer match its host's first label, or an engine's name, which a host under the
        # engine's domain holds already. Few needles: each is a scan of the line.
        parts = {UTM_SOURCE, *engines}
        parts |= {host.split(".")[0] for host in self._hosts if not any(engine in host for engine in engines)}
        self.needles = tuple(sorted(p for p in parts if p and not any(o != p and o in p for o in parts)))

    def __bool__(self) -> bool:
        return bool(self.referrers)

    def may_refer(self, line: str) -> bool:
        """False when a log line surely names no referrer."""
        lowered = line.lower()
        for needle in self.needles:
            if needle in lowered:
                return True
        return False

    def of_host(self, host: str | None) -> str | None:
        """The operator whose service `host` (a host form of `referer_host`) is, or None."""
        if not host:
            return None
        probe = host
        while True:
            operator = self._hosts.get(probe)
            if operator is not None:
                return operator
            dot = probe.find(".")
            if dot < 0:
                break
            probe = probe[dot + 1:]
        if self._engine_pattern is not None:
            found = self._engine_pattern.search(host)
            if found is not None:
                return self._engines[found.group(1)]
        return None

    def of_utm(self, path: str | None) -> str | None:
        """The operator the request's first `utm_source` value names, or None."""
        if not path or UTM_SOURCE not in path:
            return None
        query = path.partition("?")[2]
        value = next((v for k, v in parse_qsl(query, keep_blank_values=True) if k == UTM_SOURCE), None)
        if value is None:
            return None
        value = value.strip().lower()
        operator = self._utm.get(value)
        if operator is not None:
            return operator
        return self.of_host(referer_host(value))

    def referral(self, referer: str | None, path: str | None) -> tuple[str, str] | None:
        """(operator, via) of a visit, its Referer first; None when neither names an operator."""
        operator = self.of_host(referer_host(referer))
        if operator is not None:
            return operator, REFERER
        operator = self.of_utm(path)
        if operator is not None:
            return operator, UTM_SOURCE
        return None

