"""Differential test: our robots.txt decisions against Protego's on the real corpus.

Every robots.txt of the shared corpus is asked about every crawled URL of its host,
by our engine and by Protego (`Protego.parse` takes text: the bytes are decoded as
UTF-8 with undecodable bytes replaced, while our engine reads the bytes).

Where the two disagree, a classifier must explain why from the inputs. Each one
removes a single known difference and re-runs the decision: either it rewrites
Protego's input so that Protego reads it as DESIGN §4 does (and the rewrite must
leave our own decision exactly as it was, or it was not neutral), or it makes our
engine do what Protego does (and first checks that our engine did the DESIGN thing
there). The disagreement must vanish. A disagreement that no classifier explains
fails the test: it is a new kind of difference to understand, or a bug of ours.
"""
from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator
from urllib.parse import urlsplit

import pytest

from conftest import shared_path
from matcher import agents, robots
from matcher.normalize import normalize, request_path

protego = pytest.importorskip("protego")
# Protego's own normalization of paths and patterns; the percent-encoding
# classifier hands exactly these to our engine.
from protego._utils import _quote_path, _quote_pattern  # noqa: E402

AGENTS = ("googlebot", "bingbot", "foobot")

_LINE_BREAK = re.compile(rb"(\r\n|\r|\n)")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")
_USER_AGENT_LINE = re.compile(
    rb"(?i)([ \t]*(?:user-agent|useragent|user agent)[ \t]*:[ \t]*)([^#]*?)([ \t]*(?:#.*)?)", re.S
)
_DESIGN_TOKEN = re.compile(r"[A-Za-z_-]*")
# Every spelling of a rule or user-agent field that either parser accepts; a
# line whose field is none of these can be dropped without losing a rule.
_RULE_OR_AGENT_FIELDS = frozenset(
    {"user-agent", "useragent", "user agent", "allow", "disallow",
     "dissallow", "dissalow", "disalow", "diasllow", "disallaw"}
)


# ------------------------------------------------------------------ the corpus


@dataclass(frozen=True)
class Site:
    host: str
    body: bytes
    urls: tuple[str, ...]
    ours: robots.RobotsFile
    theirs: protego.Protego


@dataclass(frozen=True)
class Case:
    """One disagreement: our decision and Protego's answer for the same question."""

    host: str
    body: bytes
    agent: str
    url: str
    ours: robots.Decision
    theirs: bool


def _sites() -> list[Site]:
    robots_dir = shared_path("corpus", "robots")
    links_dir = shared_path("corpus", "links")
    sites = []
    for path in sorted(robots_dir.iterdir()):
        links = links_dir / path.name
        urls = tuple(links.read_text("utf-8").splitlines()) if links.exists() else ()
        if urls:
            body = path.read_bytes()
            sites.append(Site(path.name, body, urls, robots.parse(body), _protego_parse(body)))
    return sites


def _protego_parse(body: bytes) -> protego.Protego:
    return protego.Protego.parse(body.decode("utf-8", "replace"))


# Classifiers parse the same file (or its rewrites) again for every disagreeing URL.
_ours = functools.lru_cache(maxsize=256)(robots.parse)
_protego = functools.lru_cache(maxsize=256)(_protego_parse)


def disagreements(sites: list[Site], agent: str) -> Iterator[Case]:
    for site in sites:
        for url in site.urls:
            decision = site.ours.decide(agent, url)
            allowed = site.theirs.can_fetch(url, agent)
            if decision.allowed != allowed:
                yield Case(site.host, site.body, agent, url, decision, allowed)


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
    ours = _ours(rewritten).decide(case.agent, case.url)
    if _decision_key(ours) != _decision_key(case.ours):
        return False
    return _protego(rewritten).can_fetch(case.url, case.agent) == case.ours.allowed


def _field_name(line: bytes) -> str | None:
    content = line.split(b"#", 1)[0]
    if b":" not in content:
        return None
    return content.split(b":", 1)[0].strip().decode("utf-8", "replace").lower()


def _design_token(value: str) -> str:
    """A user-agent value's token as DESIGN §4 states it (`*` for the catch-all)."""
    if value == "*" or value[:1] == "*" and value[1:2] in (" ", "\t"):
        return "*"
    return _DESIGN_TOKEN.match(value).group(0).lower()


def _reference_normalize(text: str) -> str:
    """DESIGN §4's percent-normalization written out octet by octet."""
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
        out.append(f"%{octet:02X}" if octet == 0x25 or octet <= 0x20 or octet >= 0x7F else chr(octet))
        index += 1
    return "".join(out)


def _reference_path(url: str) -> str:
    parts = urlsplit(url)
    query = "?" + parts.query if "?" in url.split("#", 1)[0] else ""
    return (parts.path or "/") + query


# ----------------------------------------------------------------- classifiers


def bom(case: Case) -> str | None:
    """Protego keeps a leading byte order mark, which spoils the first line's field."""
    stripped = re.sub(rb"\A\xef(?:\xbb\xbf?)?", b"", case.body)
    return "bom" if _protego_agrees_after(case, stripped) else None


def size_limit(case: Case) -> str | None:
    """Protego reads past the 500 KiB that DESIGN §4 parses (the cut line is dropped too)."""
    head = case.body[: 500 * 1024]
    if len(head) == len(case.body):
        return None
    head = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
    return "500-kib-limit" if _protego_agrees_after(case, head) else None


def unknown_field_ends_group(case: Case) -> str | None:
    """Protego ends a group at any field it does not treat as site-wide (e.g. `Noindex:`,
    `Request-rate:`); DESIGN §4 keeps unknown fields for lint only. Such lines are
    commented out, which must change nothing for us."""
    unknown = {d.line for d in _ours(case.body).diagnostics if d.code == "unknown-field"}

    def drop(number: int, line: bytes) -> bytes:
        name = _field_name(line)
        if number in unknown and name is not None and name not in _RULE_OR_AGENT_FIELDS:
            return b"#" + line
        return line

    return "unknown-field-ends-group" if _protego_agrees_after(case, _rewrite_lines(case.body, drop)) else None


def _user_agent_shape(value: str, token: str) -> str:
    if "*" in value:
        return "star-in-value"  # `*OrkashBot*`: Protego also reads it without the stars
    rest = value[len(token) :]
    if not rest:
        return "protego-prefix-match"  # `Google` catches `googlebot` in Protego
    if rest[0] == "/":
        return "version-in-value"  # `Twitterbot/1.0`: we read the token before `/`
    if rest[0].isdigit():
        return "token-ends-at-digit"  # `MJ12bot` reads `mj`
    return "value-not-a-token"


@functools.lru_cache(maxsize=4096)
def _protego_selects(value: str, agent: str) -> bool:
    probe = protego.Protego.parse(f"User-agent: {value}\nDisallow: /\n")
    return not probe.can_fetch("https://example.com/x", agent)


@functools.lru_cache(maxsize=256)
def _rewrite_user_agents(body: bytes, agent: str, ours_side: bool, protego_side: bool) -> tuple[bytes, frozenset[str]]:
    """Rewrite user-agent values so that Protego selects groups as DESIGN §4 does.

    ours_side: a value whose token we select for `agent` but that is not a bare
    token becomes the token. protego_side: a value whose token we do not select
    but Protego does becomes empty (a group nobody selects, in both readings).
    Returns the file and the shapes of the values changed.
    """
    tokens = agents.robots_tokens(agent)
    shapes: set[str] = set()

    def rewrite(number: int, line: bytes) -> bytes:
        match = _USER_AGENT_LINE.fullmatch(line)
        if match is None:
            return line
        value = match.group(2).decode("utf-8", "surrogateescape")
        token = _design_token(value)
        if token in tokens or token == "*":
            new = token
            if not ours_side or new == value:
                return line
        elif protego_side and _protego_selects(value, agent):
            new = ""
        else:
            return line
        shapes.add(_user_agent_shape(value, "" if token == "*" else token))
        return match.group(1) + new.encode() + match.group(3)

    return _rewrite_lines(body, rewrite), frozenset(shapes)


def user_agent_values(case: Case) -> str | None:
    """Protego compares the whole lower-cased value of a user-agent line with the
    crawler name, as a substring at a word start; DESIGN §4 compares the value's
    leading token whole. Rewritten so that both select the same groups."""
    for sides in ((True, False), (False, True), (True, True)):
        rewritten, shapes = _rewrite_user_agents(case.body, case.agent, *sides)
        if shapes and _protego_agrees_after(case, rewritten):
            return "ua-" + "+".join(sorted(shapes))
    return None


def registry_token_chain(case: Case) -> str | None:
    """Our registry gives a crawler fallback tokens (Applebot obeys Googlebot's group);
    Protego knows only the name asked about. Decided again with the first token alone."""
    rf = _ours(case.body)
    tokens = agents.robots_tokens(case.agent)
    if len(tokens) < 2 or rf.group_for(tokens) is rf.group_for(tokens[:1]):
        return None
    alone = rf.decide_tokens(tokens[:1], case.url)
    return "registry-token-chain" if alone.allowed == case.theirs else None


def _replace_pattern(line: bytes, pattern: str, new: str) -> bytes:
    head, hash_, comment = line.partition(b"#")
    value = head.rstrip(b" \t")
    written = pattern.encode("utf-8", "surrogateescape")
    assert value.endswith(written), (line, pattern)
    return value[: len(value) - len(written)] + new.encode() + head[len(value) :] + hash_ + comment


def percent_encoding(case: Case) -> str | None:
    """Protego decodes every escape except `%2F` and `%25` and re-encodes all but
    unreserved characters, `/` and `=`: to it `|` and `%7C`, or `?` and `%3F`, are
    the same, while RFC 9309 keeps them apart. Once our path and patterns are
    checked against DESIGN §4's rule, our engine is given Protego's normalized
    patterns and path instead."""
    rf = _ours(case.body)
    path = request_path(case.url)
    rules = {rule.line: rule for group in rf.groups.values() for rule in group.rules}
    written = [path, *(rule.pattern for rule in rules.values())]
    if path != _reference_path(case.url) or any(normalize(t) != _reference_normalize(t) for t in written):
        return None
    if all(rule.normalized == _quote_pattern(rule.pattern) for rule in rules.values()) and normalize(
        path
    ) == _quote_path(case.url):
        return None

    def requote(number: int, line: bytes) -> bytes:
        rule = rules.get(number)
        return line if rule is None else _replace_pattern(line, rule.pattern, _quote_pattern(rule.pattern))

    rewritten = _rewrite_lines(case.body, requote)
    decision = _ours(rewritten).decide(case.agent, _quote_path(case.url))
    return "percent-encoding" if decision.allowed == case.theirs else None


def index_html(case: Case) -> str | None:
    """Protego reads `Allow: /d/index.html` as also allowing `/d/` exactly (its
    `_RuleSet.allow`). Emulated by adding that rule to our input."""
    rf = _ours(case.body)
    extra = {
        rule.line: rule.normalized[: -len("index.html")] + "$"
        for group in rf.groups.values()
        for rule in group.rules
        if rule.allows and rule.normalized.endswith("/index.html")
    }
    if not extra:
        return None

    def add(number: int, line: bytes) -> bytes:
        return line + b"\nAllow: " + extra[number].encode() if number in extra else line

    decision = _ours(_rewrite_lines(case.body, add)).decide(case.agent, case.url)
    return "protego-index-html" if decision.allowed == case.theirs else None


CLASSIFIERS: tuple[Callable[[Case], str | None], ...] = (
    bom,
    size_limit,
    unknown_field_ends_group,
    user_agent_values,
    registry_token_chain,
    percent_encoding,
    index_html,
)


def classify(case: Case) -> str | None:
    """The first classifier's label that explains the disagreement, or None."""
    for classifier in CLASSIFIERS:
        label = classifier(case)
        if label is not None:
            return label
    return None


# ----------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def sites() -> list[Site]:
    return _sites()


def _describe(case: Case) -> str:
    rule = case.ours.rule
    deciding = f"{rule.kind}: {rule.pattern} (line {rule.line})" if rule else case.ours.reason
    return (
        f"{case.host} {case.agent} {case.url}\n"
        f"    ours={'allow' if case.ours.allowed else 'disallow'} by {deciding}; "
        f"protego={'allow' if case.theirs else 'disallow'}"
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_every_disagreement_with_protego_is_explained(sites, agent):
    counts: Counter[str] = Counter()
    unexplained = []
    for case in disagreements(sites, agent):
        label = classify(case)
        counts[label or "UNEXPLAINED"] += 1
        if label is None:
            unexplained.append(case)
    summary = ", ".join(f"{label}: {n}" for label, n in counts.most_common()) or "none"
    print(f"\n{agent}: disagreements by class: {summary}")
    listing = "\n".join(_describe(case) for case in unexplained[:50])
    assert not unexplained, f"{len(unexplained)} unexplained disagreements ({summary}):\n{listing}"
