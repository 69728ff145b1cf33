"""Differential test: our robots.txt decisions against Protego's on the real corpus.

Every robots.txt of the shared corpus is asked about every crawled URL of its host,
by our engine and by Protego. Protego parses text, so it gets the bytes decoded as
UTF-8 with undecodable bytes replaced; our engine reads the bytes themselves.

Where the two disagree, a classifier must explain why from the inputs. Each removes
one known difference and decides again, in one of two ways:

- it rewrites Protego's input so that Protego reads it as we do (docs/semantics.md
  § robots.txt, "the semantics" below); the rewrite
  must leave our own decision exactly as it was (same verdict, reason and rule line),
  or it was not neutral and explains nothing;
- it makes our engine do what Protego does; it first checks that our decision is the
  one the semantics prescribe, recomputed by a plain reference (`_reference_allowed`).

Only if Protego's and our answers then agree is the disagreement explained. One that
no classifier explains fails the test: a new kind of difference, or a bug of ours.
Run with `-rA` to see the counts per class.
"""
from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Iterator
from urllib.parse import urlsplit

import pytest

from config.registry import default_registry
from helpers import shared_path
from matcher import agents, robots

protego = pytest.importorskip("protego")
# Protego's own normalization of URLs and patterns, handed to our engine by the
# percent-encoding classifier. Private names: should a release move them, this
# import fails loudly rather than the classifier drifting.
from protego._utils import _quote_path, _quote_pattern  # noqa: E402

# Googlebot and Bingbot have groups of their own in many files; Applebot falls back
# to Googlebot's group (a registry token chain); no file names FooBot.
REGISTRY = default_registry()
AGENTS = ("googlebot", "bingbot", "applebot", "foobot")

_LINE_BREAK = re.compile(rb"(\r\n|\r|\n)")
_USER_AGENT_LINE = re.compile(
    rb"(?is)([ \t]*(?:user-agent|useragent|user agent)[ \t]*:[ \t]*)([^#]*?)([ \t]*(?:#.*)?)"
)
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")
# Every spelling of a field that the semantics read, Google's tolerated misspellings
# included: a line we report as an unknown field must use none of them.
_KNOWN_FIELDS = frozenset(
    {"user-agent", "useragent", "user agent", "allow", "disallow", "dissallow", "dissalow",
     "disalow", "diasllow", "disallaw", "crawl-delay", "crawl delay", "crawldelay",
     "sitemap", "site-map"}
)


@dataclass(frozen=True)
class Site:
    host: str
    body: bytes
    urls: tuple[str, ...]
    ours: robots.RobotsFile
    theirs: protego.Protego


@dataclass(frozen=True)
class Case:
    """One disagreement: our decision and Protego's answer to the same question."""

    host: str
    body: bytes
    agent: str
    url: str
    ours: robots.Decision
    theirs: bool


def _protego_parse(body: bytes) -> protego.Protego:
    return protego.Protego.parse(body.decode("utf-8", "replace"))


# Classifiers parse a file, or a rewrite of it, again for every disagreeing URL.
_ours = functools.lru_cache(maxsize=256)(robots.parse)
_protego = functools.lru_cache(maxsize=256)(_protego_parse)


def load_sites() -> list[Site]:
    """Every corpus host that has crawled links, parsed by both engines."""
    links_dir = shared_path("corpus", "links")
    sites = []
    for path in sorted(shared_path("corpus", "robots").iterdir()):
        links = links_dir / path.name
        if links.exists():
            body = path.read_bytes()
            urls = tuple(links.read_text("utf-8").splitlines())
            sites.append(Site(path.name, body, urls, robots.parse(body), _protego_parse(body)))
    return sites


def disagreements(sites: list[Site], agent: str) -> Iterator[Case]:
    for site in sites:
        for url in site.urls:
            decision = site.ours.decide(agent, url, REGISTRY)
            allowed = site.theirs.can_fetch(url, agent)
            if decision.allowed != allowed:
                yield Case(site.host, site.body, agent, url, decision, allowed)


# ------------------------------------------------------------ the semantics, plainly


def _reference_normalize(text: str) -> str:
    """The percent-normalization of the semantics, octet by octet."""
    data = text.encode("utf-8", "surrogateescape")
    out = []
    index = 0
    while index < len(data):
        octet, escape = data[index], data[index + 1 : index + 3]
        if octet == 0x25 and len(escape) == 2 and set(escape) <= _HEX_DIGITS:
            value = int(escape, 16)
            out.append(chr(value) if value in _UNRESERVED else "%" + escape.decode().upper())
            index += 3
            continue
        escaped = octet == 0x25 or octet <= 0x20 or octet >= 0x7F
        out.append(f"%{octet:02X}" if escaped else chr(octet))
        index += 1
    return "".join(out)


def _reference_path(url: str) -> str:
    without_fragment = url.split("#", 1)[0]
    parts = urlsplit(without_fragment)
    return (parts.path or "/") + ("?" + parts.query if "?" in without_fragment else "")


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(piece) for piece in body.split("*"))
    return re.compile(regex + r"\Z" if anchored else regex, re.S)


def _reference_allowed(group: robots.Group | None, url: str) -> bool:
    """Matching as the semantics state it, within the group we chose: the longest matching pattern
    wins, `allow` on a tie; `/robots.txt` is always allowed."""
    path = _reference_normalize(_reference_path(url))
    if group is None or path.split("?", 1)[0] == "/robots.txt":
        return True
    best = (-1, True)
    for rule in group.rules:
        pattern = _reference_normalize(rule.pattern)
        if pattern and _pattern_regex(pattern).match(path):
            best = max(best, (len(pattern), rule.allows))
    return best[1]


def _design_token(value: str) -> str:
    """A user-agent value's token as the semantics state it; `*` for the catch-all."""
    if value == "*" or value[:1] == "*" and value[1:2] in (" ", "\t"):
        return "*"
    return re.match(r"[A-Za-z0-9_.-]*", value).group(0).lower()


# ------------------------------------------------------------- rewriting helpers


def _decision_key(decision: robots.Decision) -> tuple:
    return decision.allowed, decision.reason, decision.rule.line if decision.rule else None


def _rewrite_lines(body: bytes, rewrite: Callable[[int, bytes], bytes]) -> bytes:
    """Apply `rewrite(line_number, content)` to every line, keeping the line breaks."""
    parts = _LINE_BREAK.split(body)
    parts[::2] = [rewrite(number, line) for number, line in enumerate(parts[::2], start=1)]
    return b"".join(parts)


def _protego_agrees_after(case: Case, rewritten: bytes) -> bool:
    """Protego decides as we do on the rewritten file, and the rewrite is neutral for us."""
    if rewritten == case.body:
        return False
    ours = _ours(rewritten).decide(case.agent, case.url, REGISTRY)
    if _decision_key(ours) != _decision_key(case.ours):
        return False
    return _protego(rewritten).can_fetch(case.url, case.agent) == case.ours.allowed


def _our_group(case: Case) -> robots.Group | None:
    return _ours(case.body).decide(case.agent, "/", REGISTRY).group


def _we_follow_design(case: Case) -> bool:
    return case.ours.allowed == _reference_allowed(_our_group(case), case.url)


def _rules_by_line(body: bytes) -> dict[int, robots.Rule]:
    return {rule.line: rule for group in _ours(body).groups.values() for rule in group.rules}


# ------------------------------------------------- classifiers: Protego's input


def bom(case: Case) -> str | None:
    """Protego keeps a leading byte order mark, which spoils the first line's field."""
    stripped = re.sub(rb"\A\xef(?:\xbb\xbf?)?", b"", case.body)
    return "bom" if _protego_agrees_after(case, stripped) else None


def size_limit(case: Case) -> str | None:
    """Protego reads past the first 500 KiB, where the semantics stop (dropping the cut line)."""
    head = case.body[: 500 * 1024]
    if len(head) == len(case.body):
        return None
    head = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
    return "500-kib-limit" if _protego_agrees_after(case, head) else None


def unknown_field_ends_group(case: Case) -> str | None:
    """Protego ends a group at any field but Sitemap and Host (`Noindex:`,
    `Request-rate:`, ...); the semantics keep unknown fields for lint only. Lines we
    report as unknown fields are commented out when their field is indeed none that
    the semantics know, nor starts with one (`Disallow /a:b` is another difference:
    Protego reads it as a rule without a colon)."""
    unknown = {d.line for d in _ours(case.body).diagnostics if d.code == "unknown-field"}

    def comment_out(number: int, line: bytes) -> bytes:
        content = line.split(b"#", 1)[0]
        name = content.split(b":", 1)[0].decode("utf-8", "replace").lower()
        words = name.split() or [""]
        known = " ".join(words) in _KNOWN_FIELDS or words[0] in _KNOWN_FIELDS
        return b"#" + line if number in unknown and not known else line

    rewritten = _rewrite_lines(case.body, comment_out)
    return "unknown-field-ends-group" if _protego_agrees_after(case, rewritten) else None


def _value_shape(value: str, token: str) -> str:
    if "*" in value:
        return "star-in-value"  # `*MJ12bot*`: Protego also reads it without the stars
    rest = value[len(token) :]
    if not rest:
        return "protego-prefix-match"  # `Baidu`: Protego finds it in `baiduspider`
    if rest[0] == "/":
        return "version-in-value"  # `Twitterbot/1.0`: we read the token before `/`
    return "value-not-a-token"  # `Bot mailto:...` reads `bot`


@functools.lru_cache(maxsize=4096)
def _protego_selects(value: str, agent: str) -> bool:
    probe = protego.Protego.parse(f"User-agent: {value}\nDisallow: /\n")
    return not probe.can_fetch("https://example.com/x", agent)


@functools.lru_cache(maxsize=64)
def _tokenized_user_agents(body: bytes, agent: str) -> tuple[bytes, frozenset[str]]:
    """The file with user-agent values Protego would read differently made plain,
    and the shapes of the values changed.

    A value whose token we select for `agent` becomes that bare token (`*` for the
    catch-all). A value whose token we do not select but Protego does becomes empty:
    a group nobody selects, in both readings.
    """
    tokens = agents.robots_tokens(agent, REGISTRY)
    shapes: set[str] = set()

    def rewrite(number: int, line: bytes) -> bytes:
        match = _USER_AGENT_LINE.fullmatch(line)
        if match is None:
            return line
        value = match.group(2).decode("utf-8", "surrogateescape")
        token = _design_token(value)
        if token in tokens or token == "*":
            plain = token
        elif _protego_selects(value, agent):
            plain = ""
        else:
            return line
        if plain == value:
            return line
        shapes.add(_value_shape(value, "" if token == "*" else token))
        return match.group(1) + plain.encode() + match.group(3)

    return _rewrite_lines(body, rewrite), frozenset(shapes)


def user_agent_values(case: Case) -> str | None:
    """Protego matches a user-agent value, lower-cased whole, anywhere in the crawler
    name at a word start and keeps the longest; the semantics compare the value's
    leading token whole. Values are rewritten so that only the groups we select
    remain selectable by Protego."""
    rewritten, shapes = _tokenized_user_agents(case.body, case.agent)
    if shapes and _protego_agrees_after(case, rewritten):
        return "ua-" + "+".join(sorted(shapes))
    return None


_RULE_FIELDS = frozenset({"allow", "disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw"})
_FIELD_NAME = re.compile(rb"[ \t]*([A-Za-z][A-Za-z -]*?)[ \t]*:")


def crawl_delay_ends_group(case: Case) -> str | None:
    """Protego ends a run of user-agent lines at a `Crawl-delay`; RFC 9309 §2.2.4 and
    the semantics do not (`User-agent: a`, `Crawl-delay: 1`, `User-agent: b` is one group).
    Crawl-delay lines that sit between user-agent lines, before the group's first rule,
    are commented out, which leaves our rules where they were."""
    lines = _LINE_BREAK.split(case.body)[::2]
    between: set[int] = set()
    pending: list[int] = []
    in_run = False  # user-agent lines are still opening the current group
    for number, line in enumerate(lines, start=1):
        field = _FIELD_NAME.match(line.split(b"#", 1)[0])
        name = b" ".join(field.group(1).lower().split()) if field else b""
        if name in (b"user-agent", b"useragent", b"user agent"):
            if in_run:
                between.update(pending)
            in_run, pending = True, []
        elif name in (b"crawl-delay", b"crawl delay", b"crawldelay"):
            if in_run:
                pending.append(number)
        elif name.decode() in _RULE_FIELDS:
            in_run, pending = False, []
    if not between:
        return None
    rewritten = _rewrite_lines(case.body, lambda number, line: b"#" + line if number in between else line)
    return "crawl-delay-ends-group" if _protego_agrees_after(case, rewritten) else None


# ------------------------------------------ classifiers: Protego's habits, ours


def registry_token_chain(case: Case) -> str | None:
    """Our registry gives a crawler fallback tokens (Applebot obeys Googlebot's
    group); Protego knows only the name asked about. Protego asked as the fallback
    token must decide as we do, and we, deciding on the first token alone, as
    Protego did."""
    rf, tokens = _ours(case.body), agents.robots_tokens(case.agent, REGISTRY)
    named = rf.groups
    chosen = next((token for token in tokens if token in named), None)
    if chosen is None or chosen == tokens[0] or not _we_follow_design(case):
        return None
    as_fallback = _protego(case.body).can_fetch(case.url, chosen)
    alone = rf.decide_tokens(tokens[:1], case.url)
    if as_fallback == case.ours.allowed and alone.allowed == case.theirs:
        return "registry-token-chain"
    return None


def _replace_pattern(line: bytes, pattern: str, new: str) -> bytes:
    head, hash_, comment = line.partition(b"#")
    value = head.rstrip(b" \t")
    written = pattern.encode("utf-8", "surrogateescape")
    cut = len(value) - len(written)
    assert value[cut:] == written, f"rule pattern {pattern!r} is not as written in {line!r}"
    return value[:cut] + new.encode() + head[len(value) :] + hash_ + comment


def percent_encoding(case: Case) -> str | None:
    """Protego decodes every escape but `%2F` and `%25`, then escapes everything but
    unreserved characters, `/` and `=` (and `*`, `$` in patterns): `|` and `%7C`,
    `?` and `%3F` are the same to it, while RFC 9309 keeps them apart. Our engine is
    given Protego's normalized patterns and path instead of the written ones."""
    if not _we_follow_design(case):
        return None
    rules = _rules_by_line(case.body)

    def requote(number: int, line: bytes) -> bytes:
        rule = rules.get(number)
        if rule is None:
            return line
        return _replace_pattern(line, rule.pattern, _quote_pattern(rule.pattern))

    requoted = _ours(_rewrite_lines(case.body, requote))
    decision = requoted.decide(case.agent, _quote_path(case.url), REGISTRY)
    return "percent-encoding" if decision.allowed == case.theirs else None


def index_html(case: Case) -> str | None:
    """Protego reads `Allow: /d/index.html` as allowing `/d/` exactly too (its
    `_RuleSet.allow`). That extra rule is added to our input."""
    extra = {
        line: rule.normalized.removesuffix("index.html") + "$"
        for line, rule in _rules_by_line(case.body).items()
        if rule.allows and rule.normalized.endswith("/index.html")
    }
    if not extra or not _we_follow_design(case):
        return None

    def add(number: int, line: bytes) -> bytes:
        return line + b"\nAllow: " + extra[number].encode() if number in extra else line

    decision = _ours(_rewrite_lines(case.body, add)).decide(case.agent, case.url, REGISTRY)
    return "protego-index-html" if decision.allowed == case.theirs else None


CLASSIFIERS: tuple[Callable[[Case], str | None], ...] = (
    bom,
    size_limit,
    unknown_field_ends_group,
    crawl_delay_ends_group,
    user_agent_values,
    registry_token_chain,
    percent_encoding,
    index_html,
)


def classify(case: Case) -> str | None:
    """The label of the first classifier that explains the disagreement, or None."""
    for classifier in CLASSIFIERS:
        label = classifier(case)
        if label is not None:
            return label
    return None


# ----------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def sites() -> list[Site]:
    return load_sites()


def _describe(case: Case) -> str:
    rule, group = case.ours.rule, case.ours.group
    deciding = f"{rule.kind}: {rule.pattern} (line {rule.line})" if rule else case.ours.reason
    within = f" in the group of {', '.join(group.agents[:3])}" if group else ""
    verdict = {True: "allow", False: "disallow"}
    return (
        f"{case.host} {case.agent!r} {case.url}\n"
        f"    ours: {verdict[case.ours.allowed]} by {deciding}{within}; "
        f"protego: {verdict[case.theirs]}"
    )


def _listing(cases: list[Case], per_host: int = 3, most: int = 30) -> str:
    shown: Counter[str] = Counter()
    lines = []
    for case in cases:
        shown[case.host] += 1
        if shown[case.host] <= per_host and len(lines) < most:
            lines.append(_describe(case))
    return "\n".join(lines)


@pytest.mark.parametrize("agent", AGENTS)
def test_every_disagreement_with_protego_is_explained(sites, agent):
    counts: Counter[str] = Counter()
    unexplained = []
    for case in disagreements(sites, agent):
        label = classify(case)
        counts[label or "UNEXPLAINED"] += 1
        if label is None:
            unexplained.append(case)
    decided = sum(len(site.urls) for site in sites)
    summary = ", ".join(f"{label} {n}" for label, n in counts.most_common()) or "none"
    print(f"\n{agent}: {decided} decisions, {sum(counts.values())} disagreements: {summary}")
    assert not unexplained, (
        f"{len(unexplained)} unexplained disagreements ({summary}):\n{_listing(unexplained)}"
    )


def _registry_chain_example() -> tuple[bytes, str]:
    """A registry crawler and a file naming only its fallback token, one that is not
    part of its own name (Protego finds `googlebot` inside `googlebot-image`)."""
    crawler = next(
        c for c in REGISTRY.crawlers
        if len(c.robots_tokens) > 1 and c.robots_tokens[1] not in c.robots_tokens[0]
    )
    first, fallback = crawler.robots_tokens[:2]
    return f"User-agent: {fallback}\nDisallow: /\n".encode(), first


_CHAIN_FILE, _CHAIN_AGENT = _registry_chain_example()
_KIB_500 = 500 * 1024

# Each known difference on a small file, asked about /x: the classifier names it.
_EXAMPLES = {
    "bom": (b"\xef\xbb\xbfUser-agent: *\nDisallow: /\n", "googlebot"),
    "500-kib-limit": (b"User-agent: *\n" + b"#" * _KIB_500 + b"\nDisallow: /\n", "googlebot"),
    "unknown-field-ends-group": (
        b"User-agent: foobot\nNoindex: /x\nUser-agent: other\nDisallow: /\n", "foobot"
    ),
    "crawl-delay-ends-group": (
        b"User-agent: googlebot\nCrawl-delay: 5\nUser-agent: other\nDisallow: /\n", "googlebot"
    ),
    "ua-version-in-value": (b"User-agent: Googlebot/2.1\nDisallow: /\n", "googlebot"),
    "ua-protego-prefix-match": (b"User-agent: Google\nDisallow: /\n", "googlebot"),
    "ua-star-in-value": (b"User-agent: *FooBot*\nDisallow: /\n", "foobot"),
    "registry-token-chain": (_CHAIN_FILE, _CHAIN_AGENT),
    "percent-encoding": (b"User-agent: *\nDisallow: /x|y\n", "googlebot", "/x%7Cy"),
    "protego-index-html": (
        b"User-agent: *\nDisallow: /x/\nAllow: /x/index.html\n", "googlebot", "/x/"
    ),
}

# Per classifier, a file carrying the difference it knows and a question about
# /private that both engines answer alike.
_AGREEMENTS = {
    "bom": (b"\xef\xbb\xbf# rules\nUser-agent: *\nDisallow: /private\n", "googlebot"),
    "size_limit": (
        b"User-agent: *\nDisallow: /private\n" + b"#" * _KIB_500 + b"\nAllow: /\n", "googlebot"
    ),
    "unknown_field_ends_group": (
        b"User-agent: foobot\nNoindex: /x\nDisallow: /private\n", "foobot"
    ),
    "crawl_delay_ends_group": (
        b"User-agent: other\nCrawl-delay: 5\nUser-agent: googlebot\nDisallow: /private\n", "googlebot"
    ),
    "user_agent_values": (
        b"User-agent: Googlebot/2.1\nUser-agent: Google\nDisallow: /private\n", "googlebot"
    ),
    "registry_token_chain": (_CHAIN_FILE + b"User-agent: *\nDisallow: /private\n", _CHAIN_AGENT),
    "percent_encoding": (b"User-agent: *\nDisallow: /x|y\nDisallow: /private\n", "googlebot"),
    "index_html": (b"User-agent: *\nDisallow: /\nAllow: /x/index.html\n", "googlebot"),
}


def _case(body: bytes, agent: str, path: str = "/x") -> Case:
    url = "https://example.com" + path
    ours = robots.parse(body).decide(agent, url, REGISTRY)
    return Case("example.com", body, agent, url, ours, _protego_parse(body).can_fetch(url, agent))


@pytest.mark.parametrize("label", sorted(_EXAMPLES))
def test_each_known_difference_is_named(label):
    case = _case(*_EXAMPLES[label])
    assert case.ours.allowed != case.theirs
    assert classify(case) == label


def test_every_classifier_is_checked_against_a_wrong_decision():
    assert set(_AGREEMENTS) == {classifier.__name__ for classifier in CLASSIFIERS}


@pytest.mark.parametrize("body, agent", _AGREEMENTS.values(), ids=_AGREEMENTS)
def test_a_wrong_decision_of_ours_is_never_explained(body, agent):
    """Flip our decision where both engines agree, as a bug would: no classifier may
    account for the disagreement, though the file carries the difference it knows."""
    honest = _case(body, agent, "/private")
    assert honest.ours.allowed == honest.theirs
    bug = replace(honest, ours=replace(honest.ours, allowed=not honest.ours.allowed))
    assert classify(bug) is None
