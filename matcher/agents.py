"""User-Agent strings: the crawler a request claims to be and the robots.txt tokens it answers to.

A User-Agent header is read once into words (cached per distinct string); every question after
that is a dictionary lookup. Words are matched whole, case-insensitively, never as substrings:
`Googlebot-Image/1.0` names Googlebot-Image, and a crawler called `bot` never catches `Googlebot`.

Reading a header: text inside parentheses is a comment; comments split into items at `;` and `,`.
A word's name is its product token (`matcher.tokens`: `Baiduspider+` is `baiduspider`, `360Spider`
is `360spider`). URLs and e-mail addresses are contact references, not names. A word is a
*candidate* product when it carries a version (`name/1.0`), stands outside any comment, is the
only word of a comment item (`(Bytespider; …)`) or is in the item right after `compatible`, where
a crawler describes itself (`compatible; Yahoo! Slurp`). Other words inside longer comment items
(`CUBOT X30 Build/…`, `Windows NT 10.0`) describe a platform and are not candidates.

A header *claims a crawler* when a registry crawler is named (a word, or consecutive words for a
name like `Google Web Preview`), when it matches the registry's list of bot User-Agent patterns
(`config/bot_lists.py` gives it two maintained lists of bots as one compiled regex, asked once per
distinct header), when a candidate's name ends in a crawler word (`…bot`,
`…spider`, `…crawler`: `FooBot/1.0`, never the phone `CUBOT_P20`), or when it carries a contact
reference (`+http://…`, `bot@example.com`, `bot at example dot com`), which browsers never send.
`compatible; X` alone is no claim: old browsers write it too (`compatible; NetPositive/2.2.1`).

The product token of a header that is not a registry crawler is, in this order: the first
candidate with a crawler word; the word a maintained list matched; the name after `compatible`
(not a browser's, not the `U`/`I`/`N` security letter); the first word unless a browser's.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from matcher import tokens
from matcher.bounded import BoundedCache
from matcher.pattern_lists import PatternList
from matcher.referrals import Referrers

_PIECES = re.compile(r"[()]|[;,]|[^\s;,()]+")
# A crawler word ends the name or is followed by a version-like part: `mj12bot`, `spider2`,
# `googlebot-image`, `archive.org_bot`; device names go on with letters or `_` (`cubot_p20`).
_CRAWLER_WORD = re.compile(r"(?:bot|crawler|spider|fetcher|scraper|slurp|archiver)(?:$|[-.0-9])")
_BROWSER_NAMES = frozenset({"mozilla", "opera", "msie", "konqueror"})
# The old security-strength field (`compatible; U; Haiku x86`), never a product.
_SECURITY_LETTERS = frozenset({"u", "i", "n"})
_EMAIL = re.compile(r"[^@\s]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_WORD_END = re.compile(r"[\s;,()]")
_SEPARATORS = frozenset("();,")
# Words by which a person's client describes itself: an operating system, a device, a browser or
# its engine, a phone's profile. A header that names none of them (the `Mozilla/5.0` prefix aside)
# and is on no list of people's clients is a program's: `okhttp/4.9.0`, `Apache Ant/1.10.9`,
# `Mozilla/5.0 (compatible; Cloudinary/1.0)`. Text browsers name only themselves, so they are here.
_PLATFORM_WORDS = re.compile(
    r"windows|\bwin(?:nt|ce|\d)|macintosh|mac ?os|\bmac\b|linux|android|\bios\b|iphone|ipad|ipod|darwin|cfnetwork|"
    r"x11|x64|x86|bsd|solaris|sunos|haiku|qnx|beos|amiga|os/2|risc ?os|vms|inferno|\bos\d|"
    r"watch ?os|watch|tvos|tizen|kaios|webos|symbian|series ?[468]0|s60|blackberry|\bbb10\b|palm|brew|\brex\b|"
    r"mobile|phone|midp|cldc|\bmmp/|profile/|configuration/|up\.browser|up\.link|\bup/|wap|"
    r"docomo|kddi|j-phone|vodafone|softbank|portalmmm|nokia|samsung|sonyericsson|\bsie-|\bmot-|\blg[-/]|"
    r"teleca|obigo|netfront|polaris|"
    r"nintendo|playstation|xbox|hbbtv|smart-?tv|\btv\b|roku|ce-html|dlna|tpapi|wtos|wired|"
    r"screen|release/|model/|build/|dalvik|"
    r"browser|webkit|gecko|khtml|presto|trident|safari|chrome|firefox|msie|internet explorer|opera|konqueror|"
    r"mosaic|dillo|lynx|links|w3m|netsurf|amaya|offbyone",
    re.IGNORECASE,
)
# Words by which a program says what it does to a page, which no person's client says: checks,
# tests, monitors, scans, captures or converts pages, extracts from them, translates them, reads
# feeds, downloads; HTTP clients, headless browsers, language runtimes and package managers. Office
# applications and the Windows WebDAV client are here too: they fetch a link themselves before
# (or instead of) handing it to a browser. A header that claims no crawler and says one of these
# is an automated client, even behind a full browser header (`… Safari/537.36 Webthumb/2.0`).
_PROGRAM_WORDS = re.compile(
    r"check|monitor|tester\b|analy[sz]er|scan(?:ner)?\b|scraper|extractor|resolver|"
    r"thumb|screen ?shot|capture\b(?!\+)|html ?to ?(?:pdf|image)|2png|translat|"
    r"\brss\b|rss[-/]|feeds?\b|podcast|downloader|downloadmanager|"
    r"http ?client|fetch api|headless|node\.js|\bnode/v|\bnpm/|cpython|"
    r"\bmicrosoft office\b|microsoft-webdav|\b(?:word|excel|powerpoint)/\d",
    re.IGNORECASE,
)
# Words that stand in a header without naming any client: the prefix browsers share, the word
# `compatible`, and the placeholders a program leaves when it is told to send some User-Agent.
_NO_NAMES = frozenset(
    {"mozilla", "compatible", "default", "null", "nil", "none", "undefined", "unknown", "test", "agent",
     "user-agent", "useragent", "other", "empty"}
)
# A throw-away token sent as the whole header (`9ji5vyo`, `jhe8gdf`): lower-case letters and
# digits, a digit between letters, no version. A product names itself in words; a nonce names no one.
_NONCE = re.compile(r"(?=.{6})[a-z0-9]*[a-z][0-9]+[a-z][a-z0-9]*")
_LANGUAGE_TAG = re.compile(r"[a-z]{2}[-_][a-z]{2}")
_MOZILLA_PREFIX = re.compile(r"\s*(?:mozilla/[0-9.]*)?", re.IGNORECASE)
# An address spelled out against harvesters (`bot at example dot com`): a contact, as `bot@example.com`.
_SPELLED_EMAIL = re.compile(
    r"[\w.-]+ ?(?:\bat\b|\[at\]|\(at\)) ?[\w-]+(?: ?(?:\bdot\b|\[dot\]|\(dot\)) ?|\.)[a-z]{2,}\b", re.IGNORECASE
)
# Distinct User-Agents whose readings each cache keyed by headers remembers.
REMEMBERED_AGENTS = 1 << 14
_UNSEEN = object()
# Headers are cut here before reading, so a hostile, huge User-Agent costs no more to read than
# this; real crawler tokens come within the first few hundred characters.
MAX_USER_AGENT = 2048
# What each cache keyed by headers holds: at most this many characters of (cut) headers, so its
# bytes are bounded whatever the headers' lengths (docs/architecture.md § Memory). Room for a
# full cache of headers of 256 characters, longer than most real ones.
REMEMBERED_AGENT_CHARS = REMEMBERED_AGENTS * 256


# What a crawler's fetches are for (docs/semantics.md § Purpose). A client the registry does not
# list has the purpose `unknown`.
PURPOSES = (
    "search-engine",
    "ai-training",
    "ai-search",
    "ai-user-triggered",
    "user-triggered",
    "seo-tool",
    "advertising",
    "archiver",
    "preview",
    "monitor",
    "research",
)
UNKNOWN_PURPOSE = "unknown"


ClientKind = str  # "crawler" | "automated" | "agent" | "browser"
CRAWLER: ClientKind = "crawler"
AUTOMATED: ClientKind = "automated"
# A browser's User-Agent with the Signature-Agent of a registry key directory: an operator's agent
# acting for one of its users, which says who runs it only through its signature.
AGENT: ClientKind = "agent"
BROWSER: ClientKind = "browser"
# The purposes of fetches a user asked for: a signed agent's, taken from its operator's crawlers.
USER_TRIGGERED_PURPOSES = frozenset({"ai-user-triggered", "user-triggered"})


@dataclass(frozen=True)
class RangeSource:
    """A published file of crawler IP prefixes; snapshots of it live in a ranges folder."""

    name: str
    operator: str
    url: str


@dataclass(frozen=True)
class KeyDirectory:
    """An operator's published Web Bot Auth key directory (a JWKS); snapshots of it live in the
    ranges folder under key-directories/. Its keys prove requests of the operator's crawlers and
    of its signed agent `agent`, whose fetches are for `purposes`."""

    name: str
    operator: str
    url: str
    agent: str = ""
    purposes: tuple[str, ...] = (UNKNOWN_PURPOSE,)


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
    # The crawlers whose operator documents one robots.txt fetch for all of them share a family;
    # a crawler of no family is its own (its name).
    robots_fetch_family: str | None = None
    range_sources: tuple[str, ...] = ()
    rdns_suffixes: tuple[str, ...] = ()
    purposes: tuple[str, ...] = (UNKNOWN_PURPOSE,)  # `PURPOSES`, what its fetches are for


class Registry:
    """The known crawlers, indexed by User-Agent token for per-request lookup, the patterns of
    bot User-Agents that claim a crawler without being one of them, those of automated clients
    and those of people's clients: browsers, apps, media players, mail clients (None: no such list)."""

    def __init__(
        self,
        crawlers: Sequence[Crawler],
        range_sources: Mapping[str, RangeSource],
        bot_list: PatternList | None = None,
        automated_list: PatternList | None = None,
        key_directories: Mapping[str, KeyDirectory] | None = None,
        browser_list: PatternList | None = None,
        referrers: Referrers | None = None,
    ):
        self.crawlers = tuple(crawlers)
        self.referrers = referrers if referrers is not None else Referrers(())
        self.range_sources = dict(range_sources)
        self.key_directories = dict(key_directories or {})
        self.bot_list = bot_list
        self.automated_list = automated_list
        self.browser_list = browser_list
        self._by_token = {token: c for c in self.crawlers for token in c.ua_tokens}
        self._by_name = {c.name.lower(): c for c in self.crawlers}
        self._longest_phrase = max((t.count(" ") + 1 for t in self._by_token), default=1)
        # Asked once per log line; a log repeats few distinct User-Agents.
        # Keyed by the header as cut (`MAX_USER_AGENT`), all that is read of it.
        self._identified: BoundedCache[str, Crawler | None] = remembering_headers()
        self._scans: BoundedCache[str, _Scan] = remembering_headers()

    def __len__(self) -> int:
        return len(self.crawlers)

    def get(self, name: str) -> Crawler | None:
        """The crawler called `name` (case-insensitive), or None."""
        return self._by_name.get(name.lower())

    def identify(self, user_agent: str) -> Crawler | None:
        """The registry crawler this User-Agent claims; the longest (most specific) token wins.

        Candidate products are tried first, so a crawler describing itself in a comment
        (`Daumoa/4.0 (Following Mediapartners-Google)`) is not taken for the one it mentions.
        """
        header = user_agent[:MAX_USER_AGENT]
        crawler = self._identified.get(header, _UNSEEN)
        if crawler is _UNSEEN:
            scan = self._scanned(header)
            crawler = self._identified[header] = self._longest(scan.products) or self._longest(scan.names)
        return crawler

    def _scanned(self, user_agent: str) -> _Scan:
        # Remembered here, not in a cache keyed by the bot list: hashing a compiled pattern
        # hashes its whole program, tens of microseconds for lists this long.
        header = user_agent[:MAX_USER_AGENT]
        scan = self._scans.get(header)
        if scan is None:
            scan = self._scans[header] = _scan(header, self)
        return scan

    def _longest(self, names: tuple[str, ...]) -> Crawler | None:
        best: Crawler | None = None
        best_length = 0
        for size in range(1, self._longest_phrase + 1):
            for start in range(len(names) - size + 1):
                token = " ".join(names[start : start + size])
                crawler = self._by_token.get(token)
                if crawler is not None and len(token) > best_length:
                    best, best_length = crawler, len(token)
        return best


@dataclass(frozen=True)
class _Scan:
    names: tuple[str, ...]  # every word's product token, lower-case, in order
    products: tuple[str, ...]  # the names of candidate products, in order
    product: str | None
    claims: bool
    # an automated client's product token ("" when it names none); None: not an automated client
    automated: str | None


def product_token(user_agent: str, registry: Registry) -> str | None:
    """The lower-case crawler product token of a User-Agent (rules in the module docstring)."""
    return registry._scanned(user_agent).product


def claims_crawler(user_agent: str, registry: Registry) -> bool:
    """Whether the header claims a crawler: registry name, listed bot, crawler word or contact."""
    return registry._scanned(user_agent).claims or registry.identify(user_agent) is not None


def client_kind(user_agent: str, registry: Registry) -> ClientKind:
    """`crawler`, `automated` or `browser`, by the rules of docs/semantics.md § Client kinds."""
    if registry.identify(user_agent) is not None:
        return CRAWLER
    return AUTOMATED if registry._scanned(user_agent).automated is not None else (
        CRAWLER if claims_crawler(user_agent, registry) else BROWSER
    )


def automated_token(user_agent: str, registry: Registry) -> str | None:
    """The lower-case product token of an automated client's header, None when it names none."""
    return registry._scanned(user_agent).automated or None


def robots_tokens(agent: str, registry: Registry) -> tuple[str, ...]:
    """Ordered lower-case robots.txt tokens for a User-Agent header or a bare product token.

    A registry crawler answers with its chain (`Googlebot-Image` → googlebot-image, googlebot).
    Otherwise a header gives its product token and a bare name (no `/`, no comment) is taken
    whole, so `AB42bot` stays `ab42bot`; a bare name that is not one token (`Foo Bar`) gives ().
    """
    key = (agent[:MAX_USER_AGENT], registry)
    tokens = _ROBOTS_TOKENS.get(key)
    if tokens is None:
        tokens = _ROBOTS_TOKENS[key] = _robots_tokens(*key)
    return tokens


def remembering_headers() -> BoundedCache:
    """A cache keyed by cut headers, within the budget of docs/architecture.md § Memory."""
    return BoundedCache(REMEMBERED_AGENTS, key_chars=REMEMBERED_AGENT_CHARS)


_ROBOTS_TOKENS: BoundedCache[tuple[str, Registry], tuple[str, ...]] = remembering_headers()


def _robots_tokens(agent: str, registry: Registry) -> tuple[str, ...]:
    crawler = registry.identify(agent)
    if crawler is not None:
        return crawler.robots_tokens
    text = agent.strip()
    if "/" in text or "(" in text:
        token = product_token(text, registry)
        return (token,) if token else ()
    token = tokens.product_token(text)
    return (token,) if token and len(token) == len(text) else ()


def _scan(user_agent: str, lists: Registry) -> _Scan:
    words, has_contact = _words(user_agent)
    names = tuple(name for name, _ in words)
    products = tuple(name for name, candidate in words if candidate)
    by_word = next((n for n, candidate in words if candidate and _CRAWLER_WORD.search(n)), None)
    # the costliest question: only if needed
    listed = None if by_word or lists.bot_list is None else _listed_name(user_agent, lists.bot_list)
    by_compatible = _after_compatible(names)
    has_contact = has_contact or _SPELLED_EMAIL.search(user_agent) is not None
    claims = listed is not None or by_word is not None or has_contact
    product = by_word or listed or by_compatible
    if product is None and names and names[0] not in _BROWSER_NAMES:
        product = names[0]
    return _Scan(names, products, product, claims, _automated(user_agent, names, product, claims, lists))


def _automated(
    user_agent: str, names: tuple[str, ...], product: str | None, claims: bool, lists: Registry
) -> str | None:
    """The product token of an automated client ("" without one), None for any other header.

    A header a list of automated clients matches is one, whatever else it says (`HeadlessChrome`
    inside a browser's header, `UptimeRobot`); so is a header that claims no crawler and says what
    a program does (`_PROGRAM_WORDS`: `… Safari/537.36 Webthumb/2.0`), or names no
    platform (`lwp-trivial/6.03`, `Java/1.8.0_151`, `Mozilla/5.0 (compatible; Cloudinary/1.0)`)
    unless a list of people's clients has it: browsers and phones describe their platform, and
    apps and players that do not are on those lists (`Spotify/8.8`, `VLC/3.0.20`). A header
    that names no client (no word `_is_name` takes, or a nonce alone) is read as an empty one.
    """
    listed = None if lists.automated_list is None else _listed_name(user_agent, lists.automated_list)
    if listed is not None:
        return listed or product or ""
    if claims or _NONCE.fullmatch(user_agent.strip()) or not any(map(_is_name, names)):
        return None
    named = _listed_name(user_agent, _PROGRAM_WORDS)
    if named is not None:
        return product or named or ""
    if _PLATFORM_WORDS.search(user_agent, _MOZILLA_PREFIX.match(user_agent).end()):
        return None
    if lists.browser_list is not None and lists.browser_list.search(user_agent):
        return None
    return product or ""


def _is_name(word: str) -> bool:
    """Whether a header's word can name a client: three letters at least, not one letter over and
    over (`21`, `000000` and `DDDDDD` name nothing; `www` may), neither a placeholder nor a
    language tag (`en-us`). A header none of whose words is a name says no more than an empty one."""
    letters = [c for c in word if c.isalpha()]
    return (
        len(letters) >= 3
        and (len(letters) == 3 or len(set(letters)) > 1)
        and word not in _NO_NAMES
        and not _LANGUAGE_TAG.fullmatch(word)
    )


def _listed_name(user_agent: str, bot_list: PatternList) -> str | None:
    """The name of the word where the bot list matches, or "" when it matches elsewhere
    (inside a URL, across words); None when it does not match."""
    match = bot_list.search(user_agent)
    if match is None:
        return None
    start = match.start()
    while start < match.end() and _WORD_END.match(user_agent, start):
        start += 1  # Matomo's patterns begin with the character before the word
    while start > 0 and not _WORD_END.match(user_agent, start - 1):
        start -= 1
    end = _WORD_END.search(user_agent, start)
    raw = user_agent[start : end.start() if end else len(user_agent)]
    return "" if _is_contact(raw) else tokens.product_token(raw.lstrip("+"))


def _words(user_agent: str) -> tuple[list[tuple[str, bool]], bool]:
    """(name, is_candidate) for each named word, and whether a contact reference was seen."""
    words: list[tuple[str, bool]] = []
    has_contact = False
    after_compatible = False  # the run right after `compatible` describes the product
    for in_comment, run in _runs(user_agent):
        saw_compatible = False
        for raw in run:
            if _is_contact(raw):
                has_contact = True
                continue
            name = tokens.product_token(raw.lstrip("+\"'"))
            if not name:
                continue
            candidate = after_compatible or not in_comment or len(run) == 1 or "/" in raw
            words.append((name, candidate))
            saw_compatible = saw_compatible or name == "compatible"
        after_compatible = saw_compatible
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
    lowered = raw.lower().lstrip("+")
    return "://" in lowered or lowered.startswith("www.") or _EMAIL.search(raw) is not None


def _after_compatible(names: tuple[str, ...]) -> str | None:
    for index, name in enumerate(names[:-1]):
        after = names[index + 1]
        if name == "compatible" and after not in _BROWSER_NAMES and after not in _SECURITY_LETTERS:
            return after
    return None
