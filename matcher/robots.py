"""robots.txt parsing and decisions (RFC 9309, with the choices of docs/semantics.md § robots.txt).

`parse` turns bytes into a `RobotsFile` once: its merged `Group`s by crawler token, each with
its `Rule`s in precedence order, its sitemaps and its lint `Diagnostic`s. `RobotsFile.decide`
(and `decide_tokens`, `decide_path` for robots tokens already known) answers many requests
against it, each with a `Decision`: the verdict, the rule and group behind it, and why.

A decision is the first matching rule in precedence order. What makes many of them cheap
stays out of the model, in the private `_CompiledRules` a file holds: rules kept as plain
tuples, each rule set's lookup index (`matcher.matching`) built the first time it is asked,
and bounded memos of the latest decisions, since logs repeat paths and agents.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, NamedTuple, Sequence

from matcher import agents
from matcher.agents import Registry
from matcher.bounded import BoundedCache
from matcher.matching import RuleIndex, RuleList, index_rules
from matcher.normalize import normalize, normalize_pattern, normalized_request_path, request_path
from matcher import preferences
from matcher.preferences import Preferences, UsageGroupRule, UsageRule
from matcher.preferences import USAGE_GROUP_PREFIX
from matcher.tokens import product_token

__all__ = [
    "MAX_BYTES",
    "ROBOTS_PATH",
    "Decision",
    "Diagnostic",
    "Group",
    "RobotsFile",
    "Rule",
    "is_robots_txt",
    "parse",
]

MAX_BYTES = 500 * 1024
ROBOTS_PATH = "/robots.txt"


@dataclass(frozen=True)
class Rule:
    """One allow or disallow line of a group."""

    kind: str  # "allow" or "disallow"
    pattern: str  # as written in the file
    line: int
    normalized: str  # the pattern as matching compares it (`matcher.normalize`)

    @property
    def allows(self) -> bool:
        return self.kind == "allow"


@dataclass(frozen=True)
class Group:
    """The rules that apply to a crawler, merged from every group naming its token."""

    agents: tuple[str, ...]  # user-agent values as written
    agent_lines: tuple[int, ...]
    crawl_delay: float | None
    crawl_delay_line: int | None
    # What `rules` reads; Groups of the same rules that differ only in their Crawl-delay share it.
    _rules: _RuleTable = field(repr=False)
    # Usage preferences (`matcher.preferences`): they decide nothing about access.
    content_signal: preferences.Pairs = ()
    content_signal_lines: tuple[int, ...] = ()
    content_usage: tuple[UsageRule, ...] = ()  # longest normalized path first, then file order

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in precedence order: longest normalized pattern first, allow before disallow
        on ties, then file order."""
        return self._rules.rules

    def runner_up(self, decision: Decision, normalized_path: str) -> Rule | None:
        """The matching rule next in precedence after the deciding one, for explanations."""
        if decision.rule is None:
            return None
        return self._rules.runner_up(self.rules.index(decision.rule), normalized_path)


@dataclass(frozen=True)
class Decision:
    """The verdict on one request, and the rule and group that gave it."""

    allowed: bool
    rule: Rule | None
    group: Group | None
    reason: str  # "rule" | "no-match" | "no-group" | "robots-exempt"


class Diagnostic(NamedTuple):
    """A line that a stricter crawler may read otherwise, or that was ignored."""

    line: int
    code: str
    message: str


# Compared and hashed by identity: each parse remembers its own decisions.
@dataclass(frozen=True, eq=False)
class RobotsFile:
    """A parsed robots.txt."""

    groups: Mapping[str, Group]  # merged groups by lower-case token, `*` for the catch-all
    sitemaps: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    licenses: tuple[str, ...] = ()  # RSL `License` URLs, for the whole site
    # What lint explains without finding fault: the per-purpose groups, read or not.
    notes: tuple[Diagnostic, ...] = ()
    # Made with the file: read as a plain attribute, it costs a tenth less per decision than one
    # made on first use (`cached_property`) in bench/matcher_bench.py.
    _compiled: _CompiledRules = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", _CompiledRules(self.groups))

    @cached_property
    def usage_groups(self) -> tuple[tuple[str, str, Group], ...]:
        """(purpose, token, group) of each per-purpose group `__usage_<purpose>` the file has."""
        found = []
        for token, group in self.groups.items():
            purpose = preferences.usage_group_purpose(token)
            if purpose is not None:
                found.append((purpose, token, group))
        return tuple(found)

    def decide(self, agent: str, url: str, registry: Registry) -> Decision:
        """Decide a URL for a User-Agent (or bare token), resolved to robots tokens with `registry`."""
        return self._compiled.decide(agent, url, registry)

    def preferences(self, group: Group | None, path: str) -> Preferences:
        """The usage preferences in force for a request path (as a log carries it) decided by
        `group`: the group's Content-Signal and Content-Usage, the file's License lines, and the
        rule of each per-purpose group that decides the path. Without a group of its own a purpose
        has no per-purpose preference: the `*` group speaks for access only."""
        decided = self._usage_group_rules(path) if self.usage_groups else ()
        if group is None:
            return Preferences(licenses=self.licenses, usage_groups=decided)
        return preferences.in_force(
            group.content_signal, group.content_signal_lines, group.content_usage, self.licenses, path, decided
        )

    def _usage_group_rules(self, path: str) -> tuple[UsageGroupRule, ...]:
        found = []
        for purpose, token, group in self.usage_groups:
            rule = self._compiled.decide_in(group, path).rule
            if rule is not None:
                found.append(UsageGroupRule(purpose, token, rule.kind, rule.pattern, rule.line))
        return tuple(found)

    def decide_tokens(self, tokens: Sequence[str], url: str, catch_all: bool = True) -> Decision:
        """Decide a URL for a crawler's robots tokens, most specific first."""
        return self._compiled.decide_path(tokens, request_path(url), catch_all)

    def access_rules(self, tokens: Sequence[str], catch_all: bool = True) -> frozenset[tuple[str, str]] | None:
        """What decides a crawler's access here (`decide_path`'s group): its group's rules as
        (kind, normalized pattern), None without a group. Two files that give the same answer
        allow and disallow every path alike for it; where a rule stands and its line do not
        change whether it allows."""
        group = self._compiled.chosen_group(tokens, catch_all)
        return None if group is None else frozenset((kind, normalized) for kind, _, _, normalized in group._rules.fields)

    def decide_path(self, tokens: Sequence[str], path: str, catch_all: bool = True) -> Decision:
        """Decide a request path as a log carries it (`//a` is a path here, not a host).

        The group is the one of the first token that names one, else `*`, else none;
        `catch_all=False` is for crawlers that obey only groups naming them (Google's
        AdsBot ignores `User-agent: *`).
        """
        return self._compiled.decide_path(tokens, path, catch_all)


def is_robots_txt(normalized_path: str) -> bool:
    """robots.txt itself is always fetchable, whatever its rules say."""
    return normalized_path == ROBOTS_PATH or normalized_path.startswith(ROBOTS_PATH + "?")


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


# ----------------------------------------------------------------- parsing

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
    "content-signal": "content-signal",
    "content-usage": "content-usage",
    "license": "license",
}
# Lines that carry usage preferences: they neither open, end nor split a group.
_PREFERENCE_FIELDS = frozenset({"content-signal", "content-usage", "license"})
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


@dataclass
class _RawGroup:
    agents: list[tuple[str, int]] = field(default_factory=list)
    rules: list[tuple[str, str, int, str]] = field(default_factory=list)  # a Rule's fields
    signals: list[tuple[preferences.Pairs, int]] = field(default_factory=list)
    usage: list[UsageRule] = field(default_factory=list)
    # (seconds, line, start, end): the delay belongs to the user-agent lines agents[start:end]
    delays: list[tuple[float, int, int, int]] = field(default_factory=list)
    closed: bool = False  # a rule was seen: the next user-agent opens a new group
    interrupted_at: int | None = None  # line of a crawl-delay met while user-agent lines still open the group
    interruption_noted: bool = False


class _Parser:
    def __init__(self) -> None:
        self.groups: list[_RawGroup] = []
        self.sitemaps: list[str] = []
        self.licenses: list[str] = []
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
        elif canonical in _PREFERENCE_FIELDS:
            self.preference(number, canonical, value)
        elif canonical == "user-agent":
            self.user_agent(number, value)
        else:
            self.group_line(number, canonical, value)

    def preference(self, number: int, kind: str, value: str) -> None:
        """A usage-preference line: License for the whole file, the others for the group they
        are written in (docs/semantics.md § Usage preferences)."""
        if kind == "license":
            problems = preferences.parse_license(value)
            for problem in problems:
                self.note(number, "invalid-license", f"license: {problem}; ignored")
            if not problems:
                self.licenses.append(value.strip())
            return
        if not self.groups:
            self.note(number, f"{kind}-outside-group", f"{kind} before any user-agent line applies to no crawler; ignored")
            return
        group = self.groups[-1]
        if kind == "content-signal":
            pairs, problems = preferences.parse_content_signal(value)
            if pairs:
                group.signals.append((pairs, number))
        else:
            path, pairs, problems, obsolete = preferences.parse_content_usage(value)
            if pairs:
                pattern = "/" if path is None else path
                group.usage.append(UsageRule(pattern, normalize_pattern(pattern), pairs, number))
            for label in obsolete:
                read_as = ", ".join(preferences.OBSOLETE_LABELS[label])
                self.note(
                    number, "obsolete-content-usage-label",
                    f"content-usage: {label!r} is a label of earlier aipref drafts, read as {read_as}; write that instead",
                )
        for problem in problems:
            self.note(number, f"invalid-{kind}", f"{kind}: {problem}")

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
        first_lines: dict[str, int] = {}
        for raw in self.groups:
            tokens = [self.group_token(value, line) for value, line in raw.agents]
            for token, (_, line) in zip(tokens, raw.agents):
                first_lines.setdefault(token, line)
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
        merged: dict[tuple[int, ...], tuple[tuple[str, ...], tuple[int, ...], _RuleTable]] = {}
        shared: dict[tuple, Group] = {}
        groups = {}
        for token, raws in members.items():
            delay, delay_line = delays[token][0] if token in delays else (None, None)
            same_raws = tuple(map(id, raws))
            key = (same_raws, delay, delay_line)
            group = shared.get(key)
            if group is None:
                common = merged.get(same_raws)
                if common is None:
                    common = merged[same_raws] = self.merge(raws)
                names, lines, rules, signals, signal_lines, usage = common
                group = shared[key] = Group(names, lines, delay, delay_line, rules, signals, signal_lines, usage)
            groups[token] = group
        notes = tuple(sorted(Diagnostic(*note) for note in preferences.usage_group_notes(first_lines)))
        return RobotsFile(groups, tuple(self.sitemaps), tuple(sorted(self.diagnostics)), tuple(self.licenses), notes)

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
    def merge(raws: list[_RawGroup]) -> tuple:
        """The user-agents, their lines, the rules and the usage preferences of groups naming one token."""
        rules = [rule for raw in raws for rule in raw.rules if rule[3]]
        # Longest normalized pattern first, then allow before disallow, then file order.
        rules.sort(key=lambda r: (-len(r[3]), r[0] != "allow", r[2]))
        signals, signal_lines = preferences.merge_signals(line for raw in raws for line in raw.signals)
        usage = sorted((rule for raw in raws for rule in raw.usage), key=lambda r: (-len(r.normalized), r.line))
        return (
            tuple(value for raw in raws for value, _ in raw.agents),
            tuple(line for raw in raws for _, line in raw.agents),
            _RuleTable(tuple(rules)),
            signals,
            signal_lines,
            tuple(usage),
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


def _strip_bom(data: bytes) -> bytes:
    # Like Google's parser, a partial byte order mark at the very start is
    # skipped too; a broken one leaves the first line unreadable.
    for size in (3, 2, 1):
        if data[:size] == _BOM[:size]:
            return data[size:]
    return data


# ----------------------------------------------------------------- deciding fast
# Nothing below is part of the model: it only makes deciding many requests cheap.

# Bounds on what a parsed file remembers between decisions; past them it starts afresh.
_REMEMBERED_PATHS = 4096
_REMEMBERED_AGENTS = 1024
_REMEMBERED_CHOICES = 1024


class _RuleTable:
    """A group's rules as plain tuples of a Rule's fields, in precedence order, and their index.

    Plain tuples of strings and numbers leave the garbage collector's watch, where objects never
    do: files hold thousands of rules, and a pipeline worker thousands of files, which every full
    collection would walk. `Rule`s are made only when asked for.
    """

    def __init__(self, fields: tuple[tuple[str, str, int, str], ...]):
        self.fields = fields

    # Built on first use: most groups of most files are never asked about.
    @cached_property
    def index(self) -> RuleList | RuleIndex:
        return index_rules([normalized for _, _, _, normalized in self.fields])

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(Rule(*fields) for fields in self.fields)

    def runner_up(self, rank: int, normalized_path: str) -> Rule | None:
        """The first rule after `rank` in precedence that matches."""
        later = self.fields[rank + 1 :]
        # An index, not each rule in turn: thousands of wildcard rules must not cost a pass each.
        found = index_rules([normalized for _, _, _, normalized in later]).best(normalized_path)
        return Rule(*later[found]) if found < len(later) else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _RuleTable) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __reduce__(self):
        # Shipped to a worker as its rules alone: the index is rebuilt where it is used.
        return _RuleTable, (self.fields,)


_NO_GROUP = Decision(True, None, None, "no-group")
_EXEMPT_WITHOUT_GROUP = Decision(True, None, None, "robots-exempt")


class _GroupDecisions:
    """The decisions of one group (or of no group), remembered by deciding rule, by request path
    and by URL: logs and link lists ask about the same paths again and again, for several
    crawlers that share a group."""

    __slots__ = ("group", "by_rank", "by_request", "by_url")

    def __init__(self, group: Group | None):
        self.group = group
        # Made as rules first decide, one slot per rule and a last one for no match: a group's
        # rules far outnumber the ones a log ever meets.
        rules = () if group is None else group._rules.fields
        self.by_rank: list[Decision | None] = [None] * (len(rules) + 1)
        # Plain dicts bounded as `BoundedCache` does, written out where they fill: every first
        # decision of a path or URL goes there, where an overridden `__setitem__` would cost a call.
        self.by_request: dict[str, Decision] = {}
        self.by_url: dict[str, Decision] = {}

    def decide(self, normalized_path: str) -> Decision:
        group = self.group
        # `in` rules out almost every path before the exact test, and costs less than a call.
        if ROBOTS_PATH in normalized_path and is_robots_txt(normalized_path):
            return _EXEMPT_WITHOUT_GROUP if group is None else Decision(True, None, group, "robots-exempt")
        if group is None:
            return _NO_GROUP
        rank = group._rules.index.best(normalized_path)
        decision = self.by_rank[rank]
        if decision is None:
            decision = self.by_rank[rank] = self._decision_at(rank)
        return decision

    def _decision_at(self, rank: int) -> Decision:
        fields = self.group._rules.fields
        if rank == len(fields):
            return Decision(True, None, self.group, "no-match")
        rule = Rule(*fields[rank])
        return Decision(rule.allows, rule, self.group, "rule")

    def decide_request(self, path: str) -> Decision:
        """Decide a request path as it was requested (not yet normalized)."""
        by_request = self.by_request
        decision = by_request.get(path)
        if decision is None:
            decision = self.decide(normalize(path))
            if len(by_request) >= _REMEMBERED_PATHS:
                by_request.clear()
            by_request[path] = decision
        return decision


class _CompiledRules:
    """What a `RobotsFile` decides with: the group chosen for each token chain and for each
    agent, and each chosen group's decisions, all bounded."""

    def __init__(self, groups: Mapping[str, Group]):
        # A per-purpose group states a preference; no crawler reads it as its own group, whatever
        # its User-Agent says.
        self._groups = {token: group for token, group in groups.items() if not token.startswith(USAGE_GROUP_PREFIX)}
        self._chosen: BoundedCache[tuple, _GroupDecisions] = BoundedCache(_REMEMBERED_CHOICES)
        # Keyed by the id of a group of `_groups` (or of None), so every token chain and agent that
        # chooses a group shares its decisions.
        self._of_group: dict[int, _GroupDecisions] = {}
        # Valid for one registry, the last one asked.
        self._by_agent: BoundedCache[str, _GroupDecisions] = BoundedCache(_REMEMBERED_AGENTS)
        self._agents_registry: Registry | None = None

    def decide(self, agent: str, url: str, registry: Registry) -> Decision:
        if registry is not self._agents_registry:
            self._by_agent.clear()
            self._agents_registry = registry
        chosen = self._by_agent.get(agent)
        if chosen is None:
            chosen = self._by_agent[agent] = self._choose(agents.robots_tokens(agent, registry), True)
        by_url = chosen.by_url
        decision = by_url.get(url)
        if decision is None:
            decision = chosen.decide(normalized_request_path(url))
            if len(by_url) >= _REMEMBERED_PATHS:
                by_url.clear()
            by_url[url] = decision
        return decision

    def decide_in(self, group: Group, path: str) -> Decision:
        """Decide a request path by one group's rules, remembered with that group's decisions."""
        chosen = self._of_group.get(id(group))
        if chosen is None or chosen.group is not group:
            chosen = self._of_group[id(group)] = _GroupDecisions(group)
        return chosen.decide_request(path)

    def decide_path(self, tokens: Sequence[str], path: str, catch_all: bool) -> Decision:
        chosen = self._chosen.get((tuple(tokens), catch_all))
        if chosen is None:
            chosen = self._choose(tokens, catch_all)
        return chosen.decide_request(path)

    def chosen_group(self, tokens: Sequence[str], catch_all: bool) -> Group | None:
        return self._choose(tokens, catch_all).group

    def _choose(self, tokens: Sequence[str], catch_all: bool) -> _GroupDecisions:
        """The decisions of the group of the first token that names one, else `*`, else none."""
        key = (tuple(tokens), catch_all)
        chosen = self._chosen.get(key)
        if chosen is None:
            groups = self._groups
            named = (groups[token] for token in tokens if token in groups)
            group = next(named, groups.get("*") if catch_all else None)
            chosen = self._of_group.get(id(group))
            if chosen is None:
                chosen = self._of_group[id(group)] = _GroupDecisions(group)
            self._chosen[key] = chosen
        return chosen

    def __reduce__(self):
        # Shipped to a worker as its groups alone: what it remembers is rebuilt where it is used.
        return _CompiledRules, (self._groups,)
