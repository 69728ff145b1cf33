"""robots.txt parsing and decisions (RFC 9309, with the choices of docs/semantics.md § robots.txt).

`parse` turns bytes into a `RobotsFile` once; `RobotsFile.decide` answers many
requests against it. Patterns are normalized at parse time and each group's rules
are kept in precedence order, so a decision is the first matching rule; each group
builds its lookup index (`matcher.matching`) the first time it is asked, and
remembers its latest decisions by request path, since logs repeat paths.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple, Sequence

from matcher import agents
from matcher.agents import Registry
from matcher.bounded import BoundedCache
from matcher.matching import RuleIndex, RuleList, index_rules
from matcher.normalize import normalize, normalize_pattern, normalized_request_path, request_path
from matcher.tokens import product_token

MAX_BYTES = 500 * 1024
ROBOTS_PATH = "/robots.txt"

_BOM = b"\xef\xbb\xbf"
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")

# Field names Google's reference parser accepts besides the correct spelling;
# each use is reported so the site owner can fix it for stricter crawlers.
_FIELDS = {
    "user-agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow",
    "crawl-delay": "crawl-delay",
    "sitemap": "sitemap",
}
_MISSPELLINGS = {
    "useragent": "user-agent",
    "user agent": "user-agent",
    "dissallow": "disallow",
    "dissalow": "disallow",
    "disalow": "disallow",
    "diasllow": "disallow",
    "disallaw": "disallow",
    "site-map": "sitemap",
    "crawl delay": "crawl-delay",
    "crawldelay": "crawl-delay",
}


class Diagnostic(NamedTuple):
    line: int
    code: str
    message: str


class Rule(NamedTuple):
    kind: str  # "allow" or "disallow"
    pattern: str  # as written in the file
    line: int
    normalized: str

    @property
    def allows(self) -> bool:
        return self.kind == "allow"


class Decision(NamedTuple):
    allowed: bool
    rule: Rule | None
    group: Group | None
    reason: str  # "rule" | "no-match" | "no-group" | "robots-exempt"


_NO_GROUP = Decision(True, None, None, "no-group")
_EXEMPT_WITHOUT_GROUP = Decision(True, None, None, "robots-exempt")
# Bounds on what a parsed file remembers between decisions; past them it starts afresh.
_REMEMBERED_PATHS = 4096
_REMEMBERED_AGENTS = 1024
_REMEMBERED_CHOICES = 1024


@dataclass(frozen=True)
class Group:
    """The rules that apply to a crawler, merged from every group naming its token."""

    agents: tuple[str, ...]  # user-agent values as written
    agent_lines: tuple[int, ...]
    # Each rule's fields in precedence order: longest normalized first, allow first on ties.
    # Plain tuples of strings and numbers leave the garbage collector's watch, where Rules (a
    # tuple subclass) never do: files hold thousands of rules, and a pipeline worker thousands
    # of files, which every full collection would walk.
    rule_fields: tuple[tuple[str, str, int, str], ...]
    crawl_delay: float | None = None
    crawl_delay_line: int | None = None
    # Holds the rule index once built; Groups of the same rules that differ only in their
    # Crawl-delay (`dataclasses.replace`) share it.
    shared_index: list[RuleList | RuleIndex] = field(default_factory=list, compare=False, repr=False)

    def decide(self, normalized_path: str) -> Decision:
        # `in` rules out almost every path before the exact test, and costs less than a call.
        if ROBOTS_PATH in normalized_path and is_robots_txt(normalized_path):
            return self.exempt
        rank = self._index.best(normalized_path)
        decision = self._by_rank[rank]
        if decision is None:
            decision = self._by_rank[rank] = self._decision_of(rank)
        return decision

    def _decision_of(self, rank: int) -> Decision:
        if rank == len(self.rule_fields):
            return Decision(True, None, self, "no-match")
        rule = Rule(*self.rule_fields[rank])
        return Decision(rule.allows, rule, self, "rule")

    def decide_request(self, path: str) -> Decision:
        """Decide a request path as it was requested (not yet normalized)."""
        decision = self._by_request.get(path)
        if decision is None:
            decision = self._by_request[path] = self.decide(normalize(path))
        return decision

    def runner_up(self, decision: Decision, normalized_path: str) -> Rule | None:
        """The matching rule next in precedence after the deciding one, for explanations."""
        if decision.rule is None:
            return None
        later = self.rules[self.rules.index(decision.rule) + 1 :]
        # An index, not each rule in turn: thousands of wildcard rules must not cost a pass each.
        rank = index_rules([rule.normalized for rule in later]).best(normalized_path)
        return later[rank] if rank < len(later) else None

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in precedence order."""
        return tuple(Rule(*fields) for fields in self.rule_fields)

    # Built on first use: most groups of most files are never asked about.
    @cached_property
    def _index(self) -> RuleList | RuleIndex:
        if not self.shared_index:
            self.shared_index.append(index_rules([normalized for _, _, _, normalized in self.rule_fields]))
        return self.shared_index[0]

    # Made as rules first decide: a group's rules far outnumber the ones a log ever meets.
    @cached_property
    def _by_rank(self) -> list[Decision | None]:
        # One slot per rule, and a last one for no match.
        return [None] * (len(self.rule_fields) + 1)

    @cached_property
    def exempt(self) -> Decision:
        return Decision(True, None, self, "robots-exempt")

    # Logs and link lists ask about the same paths again and again, for several crawlers that
    # share a group.
    @cached_property
    def _by_request(self) -> BoundedCache[str, Decision]:
        return BoundedCache(_REMEMBERED_PATHS)


class RobotsFile:
    """A parsed robots.txt: groups by token, sitemaps and lint diagnostics."""

    def __init__(
        self,
        groups: dict[str, Group],
        sitemaps: tuple[str, ...],
        diagnostics: tuple[Diagnostic, ...],
    ) -> None:
        self._groups = groups
        self._chosen: BoundedCache[tuple, Group | None] = BoundedCache(_REMEMBERED_CHOICES)
        # agent -> its group and that group's decisions by URL, shared by every agent of the group;
        # valid for one registry, the last one asked
        self._by_agent: BoundedCache[str, tuple[Group | None, dict[str, Decision]]] = BoundedCache(_REMEMBERED_AGENTS)
        self._agents_registry: Registry | None = None
        self._by_url: dict[int, dict[str, Decision]] = {}  # id of a group (or None) -> decisions by URL
        self.sitemaps = sitemaps
        self.diagnostics = diagnostics

    @property
    def groups(self) -> dict[str, Group]:
        """Merged groups keyed by lower-case token (`*` for the catch-all)."""
        return dict(self._groups)

    def group_for(self, tokens: Sequence[str], catch_all: bool = True) -> Group | None:
        """The group of the first token that names one, else `*`, else None.

        `catch_all=False` is for crawlers that obey only groups naming them
        (Google's AdsBot ignores `User-agent: *`).
        """
        key = (tuple(tokens), catch_all)
        if key in self._chosen:
            return self._chosen[key]
        named = (self._groups[t] for t in tokens if t in self._groups)
        group = self._chosen[key] = next(named, self._groups.get("*") if catch_all else None)
        return group

    def decide(self, agent: str, url: str, registry: Registry) -> Decision:
        """Decide for a User-Agent (or bare token), resolved to robots tokens with `registry`."""
        if registry is not self._agents_registry:
            self._by_agent.clear()
            self._agents_registry = registry
        chosen = self._by_agent.get(agent)
        if chosen is None:
            chosen = self._choose(agent, registry)
        group, by_url = chosen
        decision = by_url.get(url)
        if decision is None:
            path = normalized_request_path(url)
            decision = _without_group(path) if group is None else group.decide(path)
            # A plain dict bounded as `BoundedCache` does, written out: every first decision of a
            # URL takes this path, where an overridden `__setitem__` would cost a call.
            if len(by_url) >= _REMEMBERED_PATHS:
                by_url.clear()
            by_url[url] = decision
        return decision

    def _choose(self, agent: str, registry: Registry) -> tuple[Group | None, dict[str, Decision]]:
        group = self.group_for(agents.robots_tokens(agent, registry))
        chosen = self._by_agent[agent] = (group, self._by_url.setdefault(id(group), {}))
        return chosen

    def decide_tokens(self, tokens: Sequence[str], url: str, catch_all: bool = True) -> Decision:
        return self.decide_path(tokens, request_path(url), catch_all)

    def decide_path(self, tokens: Sequence[str], path: str, catch_all: bool = True) -> Decision:
        """Decide for a request path as a log carries it (`//a` is a path here, not a host)."""
        group = self.group_for(tokens, catch_all)
        return _without_group(normalize(path)) if group is None else group.decide_request(path)

    def crawl_delay(self, agent: str, registry: Registry) -> float | None:
        group = self.group_for(agents.robots_tokens(agent, registry))
        return group.crawl_delay if group is not None else None


def _without_group(normalized_path: str) -> Decision:
    return _EXEMPT_WITHOUT_GROUP if is_robots_txt(normalized_path) else _NO_GROUP


def is_robots_txt(normalized_path: str) -> bool:
    """robots.txt itself is always fetchable, whatever its rules say."""
    return normalized_path == ROBOTS_PATH or normalized_path.startswith(ROBOTS_PATH + "?")


# ----------------------------------------------------------------- parsing


@dataclass
class _RawGroup:
    agents: list[tuple[str, int]] = field(default_factory=list)
    rules: list[tuple[str, str, int, str]] = field(default_factory=list)  # a Rule's fields
    # (seconds, line, start, end): the delay belongs to the user-agent lines agents[start:end]
    delays: list[tuple[float, int, int, int]] = field(default_factory=list)
    closed: bool = False  # a rule was seen: the next user-agent opens a new group
    interrupted_at: int | None = None  # line of a crawl-delay met while user-agent lines still open the group
    interruption_noted: bool = False


class _Parser:
    def __init__(self) -> None:
        self.groups: list[_RawGroup] = []
        self.sitemaps: list[str] = []
        self.diagnostics: list[Diagnostic] = []

    def note(self, line: int, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(line, code, message))

    def feed(self, number: int, raw: bytes) -> None:
        text = raw.decode("utf-8", "surrogateescape")
        content = text.split("#", 1)[0].strip(" \t")
        if not content:
            return
        split = _split_field(content)
        if split is None:
            self.note(number, "invalid-line", f"no field name and value: {content[:60]!r}")
            return
        name, value, missing_colon = split
        key = name.lower()
        canonical = _FIELDS.get(key)
        if canonical is None:
            canonical = _MISSPELLINGS.get(key)
            if canonical is not None:
                self.note(number, "misspelled-field", f"{name!r} read as {canonical!r}")
        if missing_colon:
            if canonical is None:
                self.note(number, "invalid-line", f"no field name and value: {content[:60]!r}")
                return
            self.note(number, "missing-colon", f"{name!r} has no colon; read as {name}: {value}")
        if canonical is None:
            self.note(number, "unknown-field", f"{name!r} is not a robots.txt field; ignored")
        elif canonical == "sitemap":
            self.sitemaps.append(value)
        elif canonical == "user-agent":
            self.user_agent(number, value)
        else:
            self.group_line(number, canonical, value)

    def user_agent(self, number: int, value: str) -> None:
        if not self.groups or self.groups[-1].closed:
            self.groups.append(_RawGroup())
        group = self.groups[-1]
        if group.interrupted_at is not None and not group.interruption_noted:
            group.interruption_noted = True
            self.note(
                group.interrupted_at,
                "crawl-delay-between-user-agents",
                "this crawl-delay does not end the run of user-agent lines (RFC 9309 §2.2.4): "
                f"line {number} joins the same group, and every user-agent of the run shares its rules",
            )
        group.agents.append((value, number))

    def group_line(self, number: int, kind: str, value: str) -> None:
        if not self.groups:
            self.note(number, "rule-outside-group", f"{kind} before any user-agent line; ignored")
            return
        group = self.groups[-1]
        if kind == "crawl-delay":
            self.crawl_delay(group, number, value)
            return
        group.closed = True
        if value and not value.startswith(("/", "*")):
            self.note(number, "pattern-not-a-path", f"{kind} pattern {value!r} does not start with '/'")
        group.rules.append((kind, value, number, normalize_pattern(value)))

    def crawl_delay(self, group: _RawGroup, number: int, value: str) -> None:
        """A crawl-delay belongs to the user-agent lines named since the group's previous one
        (to all of its lines when none was named since)."""
        if not group.closed and group.interrupted_at is None:
            group.interrupted_at = number
        delay = _parse_delay(value)
        if delay is None:
            self.note(number, "invalid-crawl-delay", f"crawl-delay {value!r} is not a number of seconds")
            return
        end = len(group.agents)
        start = group.delays[-1][3] if group.delays else 0
        group.delays.append((delay, number, start if start < end else 0, end))

    def finish(self) -> RobotsFile:
        members: dict[str, list[_RawGroup]] = {}
        delays: dict[str, list[tuple[float, int]]] = {}  # token -> its crawl-delays in file order
        for raw in self.groups:
            tokens = [self.group_token(value, line) for value, line in raw.agents]
            for token in dict.fromkeys(tokens):
                if token:
                    members.setdefault(token, []).append(raw)
            for delay, line, start, end in raw.delays:
                for token in dict.fromkeys(tokens[start:end]):
                    if token:
                        delays.setdefault(token, []).append((delay, line))
        ignored = {line for token_delays in delays.values() for _, line in token_delays[1:]}
        for line in sorted(ignored):
            self.note(line, "duplicate-crawl-delay", "a user-agent has several crawl-delays; the first applies")
        # Tokens of the same groups share their rules and index, and with the same delay one
        # Group: a run of a thousand user-agent lines must not build a thousand indexes.
        merged: dict[tuple[int, ...], Group] = {}
        shared: dict[tuple, Group] = {}
        groups = {}
        for token, raws in members.items():
            delay, delay_line = delays[token][0] if token in delays else (None, None)
            same_raws = tuple(map(id, raws))
            key = (same_raws, delay, delay_line)
            group = shared.get(key)
            if group is None:
                like = merged.get(same_raws)
                if like is None:
                    group = merged[same_raws] = self.merge(raws, delay, delay_line)
                else:
                    group = replace(like, crawl_delay=delay, crawl_delay_line=delay_line)
                shared[key] = group
            groups[token] = group
        return RobotsFile(groups, tuple(self.sitemaps), tuple(sorted(self.diagnostics)))

    def group_token(self, value: str, line: int) -> str:
        if value == "*" or value[:1] == "*" and value[1:2] in (" ", "\t"):
            return "*"
        token = product_token(value)
        if not token:
            self.note(line, "unusable-user-agent", f"user-agent {value!r} names no product token; group ignored")
        elif token != value.lower():
            self.note(line, "user-agent-token", f"user-agent {value!r} is matched as {token!r}")
        return token

    @staticmethod
    def merge(raws: list[_RawGroup], delay: float | None, delay_line: int | None) -> Group:
        rules = [rule for raw in raws for rule in raw.rules if rule[3]]
        # Longest normalized pattern first, then allow before disallow, then file order.
        rules.sort(key=lambda r: (-len(r[3]), r[0] != "allow", r[2]))
        return Group(
            agents=tuple(value for raw in raws for value, _ in raw.agents),
            agent_lines=tuple(line for raw in raws for _, line in raw.agents),
            rule_fields=tuple(rules),
            crawl_delay=delay,
            crawl_delay_line=delay_line,
        )


def _split_field(content: str) -> tuple[str, str, bool] | None:
    """Field name and value; a missing colon is tolerated when whitespace
    separates exactly two words, as Google's reference parser does."""
    name, colon, value = content.partition(":")
    if colon:
        name = name.strip(" \t")
        return (name, value.strip(" \t"), False) if name else None
    words = content.replace("\t", " ").split()
    if len(words) != 2:
        return None
    return words[0], words[1], True


def _parse_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def parse(body: bytes | str) -> RobotsFile:
    """Parse a robots.txt body; never raises, whatever the bytes."""
    data = body.encode("utf-8", "surrogateescape") if isinstance(body, str) else bytes(body)
    parser = _Parser()
    data = _strip_bom(data)
    lines = _LINE_BREAK.split(data[:MAX_BYTES])
    if len(data) > MAX_BYTES:
        # The last line was cut at the limit: a truncated pattern would be a
        # different, broader rule, so the partial line is dropped too.
        lines.pop()
        parser.note(len(lines) + 1, "truncated", f"only the first {MAX_BYTES} bytes are parsed")
    for number, raw in enumerate(lines, start=1):
        parser.feed(number, raw)
    return parser.finish()


def _strip_bom(data: bytes) -> bytes:
    # Like Google's parser, a partial byte order mark at the very start is
    # skipped too; a broken one leaves the first line unreadable.
    for size in (3, 2, 1):
        if data[:size] == _BOM[:size]:
            return data[size:]
    return data
