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

from matcher.bounded import BoundedCache

__all__ = [
    "REFERER",
    "UTM_SOURCE",
    "SEARCH_ENGINES",
    "REMEMBERED_REFERERS",
    "REMEMBERED_REFERER_CHARS",
    "Referrer",
    "Referrers",
    "referer_host",
]

REFERER, UTM_SOURCE = "referer", "utm_source"
# A search engine's result pages live under one name in every country: google.de, google.co.uk,
# google.com.au, bing.com.
SEARCH_ENGINES = frozenset({"google", "bing"})
_COUNTRY_DOMAIN = r"(?:^|\.)({names})\.(?:com?\.)?[a-z]{{2,3}}$"
# The Referers whose operator a worker remembers: a log repeats a few (a search engine's front
# page) among any number of others, so the entries are bounded, and a Referer longer than a page
# address usually is is read again each time (at most 2 MiB of keys).
REMEMBERED_REFERERS = 4_096
REMEMBERED_REFERER_CHARS = 512
_UNSEEN = object()


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
        self._by_referer: BoundedCache[str | None, str | None] = BoundedCache(
            REMEMBERED_REFERERS, longest_key=REMEMBERED_REFERER_CHARS
        )

    def __bool__(self) -> bool:
        return bool(self.referrers)

    def of_referer(self, referer: str | None) -> str | None:
        """The operator whose service a Referer as logged names (`of_host` of its host), or None."""
        operator = self._by_referer.get(referer, _UNSEEN)
        if operator is _UNSEEN:
            operator = self._by_referer[referer] = self.of_host(referer_host(referer))
        return operator

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
        operator = self.of_referer(referer)
        if operator is not None:
            return operator, REFERER
        operator = self.of_utm(path)
        if operator is not None:
            return operator, UTM_SOURCE
        return None

