"""Usage preferences: what a site asks crawlers to do with what they fetch.

Four ways of saying it, none of which changes an access decision (docs/semantics.md § Usage
preferences):

- `Content-Signal: search=yes, ai-train=no` (Cloudflare's Content Signals Policy): yes/no for
  `search`, `ai-input` and `ai-train`, scoped to the group it is written in.
- `Content-Usage: [path] train-ai=n` (IETF aipref: draft-ietf-aipref-attach and the vocabulary
  draft): a Structured Fields dictionary of y/n per category, scoped to the group and, by the
  longest matching path pattern, to part of the site. The same dictionary as a `Content-Usage`
  response header, which a log can carry, speaks for that one response.
- A group `User-agent: __usage_<purpose>` (draft-kelley-aipref-training-preference-signal): its
  allow and disallow rules state the site's preference for that purpose path by path, by the
  same longest match as access; it is never a crawler's own group.
- `License: <url>` (RSL 1.0): the licence terms of the whole site, wherever the line stands.

The vocabulary has three categories, `search` taking precedence; `PURPOSES` is the one table from
the project's crawler purposes to them. `parse_*` read one value and say what is wrong with it;
`in_force` gives the preferences that apply to one request; `conflicts` crosses them with a
crawler's purposes.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from matcher.matching import index_rules
from matcher.normalize import normalized_request_path

__all__ = [
    "CATEGORIES",
    "HEADER_CONFLICT",
    "OBSOLETE_LABELS",
    "PURPOSES",
    "USAGE_GROUP_PREFIX",
    "Pairs",
    "PurposeUse",
    "Preferences",
    "UsageGroupRule",
    "UsageRule",
    "UsageValue",
    "conflicts",
    "in_force",
    "merge_signals",
    "parse_content_signal",
    "parse_content_usage",
    "parse_license",
    "parse_usage_header",
    "usage_group_notes",
    "usage_group_purpose",
]

SIGNAL_KEYS = ("search", "ai-input", "ai-train")
_SIGNAL_VALUES = ("yes", "no")
# draft-ietf-aipref-vocab's categories, `search` first: a use that falls under search is judged by
# the search preference alone, whatever the other categories say.
CATEGORIES = ("search", "train-ai", "ai-use")
# Labels of earlier drafts and the categories each stood for; read for the site's intent, with a
# lint warning (`bots` was the root's name before `all`).
OBSOLETE_LABELS: Mapping[str, tuple[str, ...]] = {
    "train-genai": ("train-ai",),
    "all": CATEGORIES,
    "bots": CATEGORIES,
}
USAGE_GROUP_PREFIX = "__usage_"
# RFC 9651 dictionary member: key, then `=` and a bare item, then parameters; the items this
# vocabulary uses are tokens (`y`, `n`), so strings and numbers are read only to be ignored.
_SF_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_SF_ITEM = re.compile(r'[A-Za-z*][A-Za-z0-9:/!#$%&\'*+.^_`|~-]*|"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?|\?[01]')
_SF_PARAMS = re.compile(r'(?:;\s*[a-z*][a-z0-9_.*-]*(?:=(?:[A-Za-z*][A-Za-z0-9:/!#$%&\'*+.^_`|~-]*|"(?:[^"\\]|\\.)*"|-?[0-9.]+|\?[01]))?)*')
_URL = re.compile(r"https?://[^\s/?#]+[^\s]*", re.IGNORECASE)
# A conflict that a logged response header gave rather than robots.txt.
HEADER_CONFLICT = "Content-Usage header"


class PurposeUse(NamedTuple):
    """What one crawler purpose is judged by: its aipref category, its Content-Signal key and the
    token of its per-purpose robots.txt group; None where nothing covers it."""

    category: str | None
    signal: str | None
    usage_group: str | None


# The one table from the project's crawler purposes (§ Purpose) to the preferences that speak for
# them (docs/semantics.md § Usage preferences). A purpose no category covers gets no conflict.
PURPOSES: Mapping[str, PurposeUse] = {
    "search-engine": PurposeUse("search", "search", "__usage_search-engine"),
    "ai-search": PurposeUse("ai-use", "ai-input", "__usage_ai-search"),
    "ai-user-triggered": PurposeUse("ai-use", "ai-input", "__usage_ai-user-triggered"),
    "ai-training": PurposeUse("train-ai", "ai-train", "__usage_ai-training"),
    "user-triggered": PurposeUse(None, None, None),
    "seo-tool": PurposeUse(None, None, None),
    "advertising": PurposeUse(None, None, None),
    "archiver": PurposeUse(None, None, None),
    "preview": PurposeUse(None, None, None),
    "monitor": PurposeUse(None, None, None),
    "research": PurposeUse(None, None, None),
}
_GROUP_PURPOSES = {use.usage_group: purpose for purpose, use in PURPOSES.items() if use.usage_group}

Pairs = tuple[tuple[str, str], ...]


def usage_group_purpose(token: str) -> str | None:
    """The purpose a per-purpose group's token speaks for; None for any other token (an unknown
    `__usage_` token too)."""
    return _GROUP_PURPOSES.get(token)


def usage_group_notes(first_lines: Mapping[str, int]) -> list[tuple[int, str, str]]:
    """(line, code, message) explaining each `__usage_` group of a file, by its tokens and the
    line each is first named on: what a known one states, and that an unknown one states nothing."""
    notes = []
    for token, line in first_lines.items():
        if not token.startswith(USAGE_GROUP_PREFIX):
            continue
        purpose = usage_group_purpose(token)
        if purpose is None:
            known = ", ".join(sorted(_GROUP_PURPOSES))
            notes.append((line, "unknown-usage-group", (
                f"user-agent {token!r} names no purpose with a per-purpose group ({known}); "
                "no crawler reads it and it states no preference"
            )))
            continue
        use = PURPOSES[purpose]
        notes.append((line, "usage-group", (
            f"user-agent {token!r} states the site's preference for {purpose} ({use.category}) path by path: "
            "a path it disallows refuses that use, one it allows permits it; no crawler takes it as its own "
            "group, and crawlers named beside it keep it as theirs"
        )))
    return notes


class UsageValue(NamedTuple):
    """A Content-Usage value read: its path (None without one), its (category, y|n) pairs in the
    current vocabulary, what is wrong with it, and the obsolete labels it used."""

    path: str | None
    pairs: Pairs
    problems: list[str]
    obsolete: list[str]


@dataclass(frozen=True)
class UsageRule:
    """One Content-Usage line of a group."""

    pattern: str  # the path as written; "/" when the line has none
    normalized: str
    preferences: Pairs  # category -> y | n
    line: int


@dataclass(frozen=True)
class UsageGroupRule:
    """The rule of a per-purpose group that decided a path: allow is `y`, disallow `n`."""

    purpose: str
    group: str  # the group's token, `__usage_<purpose>`
    kind: str  # "allow" | "disallow"
    pattern: str
    line: int

    @property
    def refuses(self) -> bool:
        return self.kind == "disallow"

    def text(self) -> str:
        return f"{self.group} {self.kind.capitalize()}: {self.pattern} line {self.line}"


@dataclass(frozen=True)
class Preferences:
    """The usage preferences robots.txt puts in force for one request."""

    content_signal: Pairs = ()
    content_signal_lines: tuple[int, ...] = ()
    content_usage: Pairs = ()
    content_usage_line: int | None = None
    content_usage_pattern: str | None = None
    licenses: tuple[str, ...] = ()
    usage_groups: tuple[UsageGroupRule, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.content_signal or self.content_usage or self.licenses or self.usage_groups)

    def record(self) -> dict:
        """The verdict's `preferences` object: only what is in force."""
        out: dict = {}
        if self.content_signal:
            out["content_signal"] = dict(self.content_signal)
            out["content_signal_lines"] = list(self.content_signal_lines)
        if self.content_usage:
            out["content_usage"] = dict(self.content_usage)
            out["content_usage_line"] = self.content_usage_line
            out["content_usage_path"] = self.content_usage_pattern
        if self.usage_groups:
            out["usage_groups"] = [
                {"group": rule.group, "purpose": rule.purpose, "rule": rule.kind, "pattern": rule.pattern, "line": rule.line}
                for rule in self.usage_groups
            ]
        if self.licenses:
            out["license"] = list(self.licenses)
        return out


def parse_content_signal(value: str) -> tuple[Pairs, list[str]]:
    """The (key, yes|no) pairs of a Content-Signal value and what is wrong with it."""
    pairs, problems = [], []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        key, equals, answer = item.partition("=")
        key, answer = key.strip().lower(), answer.strip().lower()
        if not equals or not key:
            problems.append(f"{item!r} is not key=value")
        elif answer not in _SIGNAL_VALUES:
            problems.append(f"{key}={answer or ''!s}: the value is yes or no")
        elif key not in SIGNAL_KEYS:
            problems.append(f"{key!r} is not a content signal ({', '.join(SIGNAL_KEYS)}); ignored")
        else:
            pairs.append((key, answer))
    if not pairs and not problems:
        problems.append("no signal given")
    return tuple(pairs), problems


def parse_content_usage(value: str) -> UsageValue:
    """A robots.txt Content-Usage value: a path, then a usage dictionary. A value that is not a
    Structured Fields dictionary gives no pairs at all, as RFC 9651 has a parser fail the whole
    field."""
    path = None
    text = value.strip()
    if text.startswith(("/", "*")):
        path, _, text = text.partition(" ")
        text = text.strip()
        if not text:
            return UsageValue(path, (), ["a path but no preference"], [])
    return UsageValue(path, *_usage_dictionary(text))


def parse_usage_header(value: str) -> UsageValue:
    """A Content-Usage response header as logged: the usage dictionary alone, for that response."""
    return UsageValue(None, *_usage_dictionary(value.strip()))


def _usage_dictionary(text: str) -> tuple[Pairs, list[str], list[str]]:
    """The (category, y|n) pairs of a usage dictionary, what is wrong with it, and the obsolete
    labels it used. A category stated by its label and by an obsolete one combines to the most
    restrictive, as the vocabulary combines statements; `all` (or `bots`) fills only the categories
    no other label states."""
    members = _sf_dictionary(text)
    if members is None:
        return (), [f"{text[:60]!r} is not a Structured Fields dictionary (category=y or =n, comma-separated)"], []
    if not members:
        return (), ["no preference given"], []
    values = dict(members)  # a dictionary keeps a key's last value
    problems, obsolete = [], []
    stated: dict[str, str] = {}
    roots: dict[str, str] = {}
    for key, item in values.items():
        if key not in CATEGORIES and key not in OBSOLETE_LABELS:
            problems.append(f"{key!r} is not an aipref category ({', '.join(CATEGORIES)}); ignored")
            continue
        if item not in ("y", "n"):
            problems.append(f"{key}: the value is y or n, not {item}")
            continue
        if key in OBSOLETE_LABELS:
            obsolete.append(key)
        into = roots if key in ("all", "bots") else stated
        for category in OBSOLETE_LABELS.get(key, (key,)):
            into[category] = "n" if "n" in (item, into.get(category)) else item
    for category, item in roots.items():
        stated.setdefault(category, item)
    return tuple(stated.items()), problems, obsolete


def parse_license(value: str) -> list[str]:
    """What is wrong with a License value: it names the licence terms by an absolute URL."""
    return [] if _URL.fullmatch(value.strip()) else [f"{value[:60]!r} is not an absolute http(s) URL"]


def _sf_dictionary(text: str) -> list[tuple[str, str]] | None:
    """(key, bare item as written) per member of an RFC 9651 dictionary; a member without a value
    is the boolean `?1`. None when the text is not one."""
    members = []
    position = 0
    while position < len(text):
        key = _SF_KEY.match(text, position)
        if key is None:
            return None
        position = key.end()
        item = "?1"
        if text.startswith("=", position):
            found = _SF_ITEM.match(text, position + 1)
            if found is None:
                return None
            item, position = found.group(), found.end()
        position = _SF_PARAMS.match(text, position).end()
        members.append((key.group(), item))
        rest = text[position:].lstrip(" \t")
        if not rest:
            break
        if not rest.startswith(","):
            return None
        position = len(text) - len(rest[1:].lstrip(" \t"))
        if position == len(text):
            return None  # a trailing comma
    return members


def merge_signals(lines: Iterable[tuple[Pairs, int]]) -> tuple[Pairs, tuple[int, ...]]:
    """A group's Content-Signal lines as one: per key, `no` wins over `yes`, the most restrictive
    reading of a file that says both."""
    merged: dict[str, str] = {}
    numbers = []
    for pairs, line in lines:
        numbers.append(line)
        for key, answer in pairs:
            merged[key] = "no" if "no" in (answer, merged.get(key)) else answer
    return tuple(merged.items()), tuple(numbers)


def in_force(
    signals: Pairs,
    signal_lines: tuple[int, ...],
    usage_rules: Sequence[UsageRule],
    licenses: tuple[str, ...],
    path: str,
    usage_groups: tuple[UsageGroupRule, ...] = (),
) -> Preferences:
    """The preferences for one request path (as a log carries it): its group's signals, the
    Content-Usage rule whose path matches longest (rules that tie combine, `n` winning), the
    file's licences, and the rules of the per-purpose groups that decided the path."""
    usage: Pairs = ()
    line = pattern = None
    if usage_rules:
        normalized_path = normalized_request_path(path)
        best = index_rules([rule.normalized for rule in usage_rules]).best(normalized_path)
        if best < len(usage_rules):
            length = len(usage_rules[best].normalized)
            tied = [
                rule for rule in usage_rules[best:]
                if len(rule.normalized) == length and index_rules([rule.normalized]).best(normalized_path) == 0
            ]
            combined: dict[str, str] = {}
            for rule in tied:
                for key, answer in rule.preferences:
                    combined[key] = "n" if "n" in (answer, combined.get(key)) else answer
            usage, line, pattern = tuple(combined.items()), tied[0].line, tied[0].pattern
    return Preferences(signals, signal_lines if signals else (), usage, line, pattern, licenses, usage_groups)


def conflicts(purposes: Iterable[str], preferences: Preferences | None, header: Pairs = ()) -> tuple[str, ...]:
    """One entry per statement that refuses a purpose of the crawler: `purpose: ai-train=no` (a
    Content-Signal), `purpose: train-ai=n` (a Content-Usage line), `purpose: __usage_ai-training
    Disallow: /x line 7` (a per-purpose group) and `purpose: Content-Usage header train-ai=n`
    (`header`, the logged response header's pairs). The statements about one purpose combine to
    the most restrictive: any refusal is a conflict, whatever the others allow."""
    preferences = preferences or Preferences()
    signals, usage, headed = dict(preferences.content_signal), dict(preferences.content_usage), dict(header)
    found = []
    for purpose in purposes:
        use = PURPOSES.get(purpose)
        if use is None or use.category is None:
            continue
        if use.signal is not None and signals.get(use.signal) == "no":
            found.append(f"{purpose}: {use.signal}=no")
        if usage.get(use.category) == "n":
            found.append(f"{purpose}: {use.category}=n")
        for rule in preferences.usage_groups:
            if rule.purpose == purpose and rule.refuses:
                found.append(f"{purpose}: {rule.text()}")
        if headed.get(use.category) == "n":
            found.append(f"{purpose}: {HEADER_CONFLICT} {use.category}=n")
    return tuple(dict.fromkeys(found))
