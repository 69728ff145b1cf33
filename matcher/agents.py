"""User-Agent strings: the crawler a request claims to be and the robots.txt tokens it answers to.

A User-Agent header is read once into words (cached per distinct string); every question after
that is a dictionary lookup. Words are matched whole, case-insensitively, never as substrings:
`Googlebot-Image/1.0` names Googlebot-Image, and a crawler called `bot` never catches `Googlebot`.

Reading a header: text inside parentheses is a comment; comments split into items at `;` and `,`.
A word's name is its text before `/`. URLs and e-mail addresses are contact references, not names.
A word is a *candidate* product when it carries a version (`name/1.0`), stands outside any comment,
is the only word of a comment item (`(Bytespider; …)`) or follows the word `compatible`, after
which a crawler describes itself (`compatible; Yahoo! Slurp`). Other words inside longer comment
items (`CUBOT X30 Build/…`, `Windows NT 10.0`) describe a platform and are not candidates.

The crawler product token of a header is, in this order:
1. the first candidate whose name looks like a crawler's (contains `bot`, `crawl`, `spider`,
   `fetch`, `scrap`, `slurp` or `archiv`);
2. the name right after `compatible` (`Mozilla/5.0 (compatible; Google-Site-Verification/1.0)`),
   unless it is a browser's (`compatible; MSIE 9.0`);
3. the first word, unless it is a browser's (`Mozilla`, `Opera`): `facebookexternalhit/1.1`.

A header *claims a crawler* when a registry crawler is named, when rule 1 or 2 finds a token, or
when it carries a contact reference (`+http://…`, `bot@example.com`), which browsers never send.
Rule 3 alone is no claim: `curl/8.0` has a product token but does not say it is a crawler.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

_PIECES = re.compile(r"[()]|[;,]|[^\s;,()]+")
_NAME = re.compile(r"[a-z][a-z0-9_.!-]*")
_BARE_TOKEN = re.compile(r"[A-Za-z0-9_.!-]+")
_CRAWLER_WORDS = ("bot", "crawl", "spider", "fetch", "scrap", "slurp", "archiv")
_BROWSER_NAMES = frozenset({"mozilla", "opera", "msie", "konqueror"})
_SEPARATORS = frozenset("();,")
_CACHE_SIZE = 1 << 14
# Headers are cut here before reading so that hostile, huge User-Agents cannot fill the caches;
# real crawler tokens come within the first few hundred characters.
MAX_USER_AGENT = 2048


@dataclass(frozen=True)
class RangeSource:
    """A published file of crawler IP prefixes; snapshots of it live in a ranges folder."""

    name: str
    operator: str
    url: str


@dataclass(frozen=True)
class Crawler:
    name: str
    operator: str
    crawler_class: str
    ua_tokens: tuple[str, ...]  # lower-case product tokens that name it in a User-Agent
    robots_tokens: tuple[str, ...]  # lower-case, most specific first
    honours_robots: bool
    honours_crawl_delay: bool
    robots_only: bool = False  # a robots.txt control token that never crawls under its own name
    ignores_catch_all: bool = False  # obeys only groups naming it, never `User-agent: *`
    range_sources: tuple[str, ...] = ()
    rdns_suffixes: tuple[str, ...] = ()


class Registry:
    """The known crawlers, indexed by User-Agent token for per-request lookup."""

    def __init__(self, crawlers: Sequence[Crawler], range_sources: Mapping[str, RangeSource]):
        self.crawlers = tuple(crawlers)
        self.range_sources = dict(range_sources)
        self._by_token = {token: c for c in self.crawlers for token in c.ua_tokens}
        self._by_name = {c.name.lower(): c for c in self.crawlers}

    def __len__(self) -> int:
        return len(self.crawlers)

    def get(self, name: str) -> Crawler | None:
        """The crawler called `name` (case-insensitive), or None."""
        return self._by_name.get(name.lower())

    def identify(self, user_agent: str) -> Crawler | None:
        """The registry crawler this User-Agent claims; the longest (most specific) token wins."""
        best: Crawler | None = None
        best_length = 0
        for name in _scan(user_agent[:MAX_USER_AGENT]).names:
            crawler = self._by_token.get(name)
            if crawler is not None and len(name) > best_length:
                best, best_length = crawler, len(name)
        return best


@dataclass(frozen=True)
class _Scan:
    names: tuple[str, ...]  # every product-token name, lower-case, in order
    product: str | None
    claims: bool


def product_token(user_agent: str) -> str | None:
    """The lower-case crawler product token of a User-Agent (rules in the module docstring)."""
    return _scan(user_agent[:MAX_USER_AGENT]).product


def claims_crawler(user_agent: str, registry: Registry | None = None) -> bool:
    """Whether the header says it is a crawler (registry name, crawler-like token or contact)."""
    scan = _scan(user_agent[:MAX_USER_AGENT])
    return scan.claims or (registry or default_registry()).identify(user_agent) is not None


def robots_tokens(agent: str, registry: Registry | None = None) -> tuple[str, ...]:
    """Ordered lower-case robots.txt tokens for a User-Agent header or a bare product token.

    A registry crawler answers with its chain (`Googlebot-Image` → googlebot-image, googlebot).
    Otherwise a header gives its product token and a bare name (no `/`, no comment) is taken
    whole, so `AB42bot` stays `ab42bot`; a bare name that is not one token (`Foo Bar`) gives ().
    """
    return _robots_tokens(agent[:MAX_USER_AGENT], registry or default_registry())


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _robots_tokens(agent: str, registry: Registry) -> tuple[str, ...]:
    crawler = registry.identify(agent)
    if crawler is not None:
        return crawler.robots_tokens
    text = agent.strip()
    if "/" in text or "(" in text:
        token = product_token(text)
        return (token,) if token else ()
    return (text.lower(),) if _BARE_TOKEN.fullmatch(text) else ()


@functools.cache
def default_registry() -> Registry:
    """The registry shipped in config/crawlers.yaml, loaded once."""
    from config.registry import load_registry  # config imports this module; load lazily

    return load_registry()


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _scan(user_agent: str) -> _Scan:
    words, has_contact = _words(user_agent)
    names = tuple(name for name, _ in words)
    by_keyword = next((n for n, candidate in words if candidate and _crawler_like(n)), None)
    by_compatible = _after_compatible(names)
    product = by_keyword or by_compatible
    claims = product is not None or has_contact
    if product is None and names and names[0] not in _BROWSER_NAMES:
        product = names[0]
    return _Scan(names, product, claims)


def _words(user_agent: str) -> tuple[list[tuple[str, bool]], bool]:
    """(name, is_candidate) for each named word, and whether a contact reference was seen."""
    words: list[tuple[str, bool]] = []
    has_contact = False
    after_compatible = False
    for in_comment, run in _runs(user_agent):
        for raw in run:
            if _is_contact(raw):
                has_contact = True
                continue
            name = raw.lstrip("+").split("/", 1)[0].lower()
            if not _NAME.fullmatch(name):
                continue
            candidate = after_compatible or not in_comment or len(run) == 1 or "/" in raw
            words.append((name, candidate))
            after_compatible = after_compatible or name == "compatible"
    return words, has_contact


def _runs(user_agent: str) -> Iterator[tuple[bool, list[str]]]:
    """Runs of words between separators, and whether they are inside a comment.

    Outside comments every word stands alone; inside, `;` and `,` end a run.
    """
    depth = 0
    run: list[str] = []
    for piece in _PIECES.findall(user_agent):
        if piece not in _SEPARATORS:
            if depth == 0:
                yield False, [piece]
            else:
                run.append(piece)
            continue
        if run:
            yield True, run
            run = []
        if piece == "(":
            depth += 1
        elif piece == ")":
            depth = max(depth - 1, 0)
    if run:
        yield True, run


def _is_contact(raw: str) -> bool:
    lowered = raw.lower()
    return "://" in lowered or lowered.lstrip("+").startswith("www.") or "@" in lowered


def _crawler_like(name: str) -> bool:
    return any(word in name for word in _CRAWLER_WORDS)


def _after_compatible(names: tuple[str, ...]) -> str | None:
    for index, name in enumerate(names[:-1]):
        if name == "compatible" and names[index + 1] not in _BROWSER_NAMES:
            return names[index + 1]
    return None
