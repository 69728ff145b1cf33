"""Usage preferences in robots.txt: what a site asks crawlers to do with what they fetch.

Three kinds of line, none of which changes an access decision (docs/semantics.md § Usage
preferences):

- `Content-Signal: search=yes, ai-train=no` (Cloudflare's Content Signals Policy): yes/no for
  `search`, `ai-input` and `ai-train`, scoped to the group it is written in.
- `Content-Usage: [path] train-ai=n` (IETF aipref: draft-ietf-aipref-attach and the vocabulary
  draft): a Structured Fields dictionary of y/n per category, scoped to the group and, by the
  longest matching path pattern, to part of the site. A category without a value of its own takes
  its parent's (`train-genai` -> `train-ai` -> the root, `all`, spelt `bots` by early drafts).
- `License: <url>` (RSL 1.0): the licence terms of the whole site, wherever the line stands.

`parse_*` read one line's value and say what is wrong with it; `in_force` gives the preferences
that apply to one request; `conflicts` crosses them with a crawler's purposes.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from matcher.matching import index_rules
from matcher.normalize import normalized_request_path

__all__ = [
    "CONFLICTING_KEYS",
    "Pairs",
    "Preferences",
    "UsageRule",
    "conflicts",
    "in_force",
    "merge_signals",
    "parse_content_signal",
    "parse_content_usage",
    "parse_license",
]

SIGNAL_KEYS = ("search", "ai-input", "ai-train")
_SIGNAL_VALUES = ("yes", "no")
_ROOTS = ("all", "bots")
# A category's parent in the aipref vocabulary; the roots have none.
_USAGE_PARENT = {"train-genai": "train-ai", "train-ai": "all", "ai-use": "all", "search": "all"}
_USAGE_KEYS = frozenset(_USAGE_PARENT) | frozenset(_ROOTS)
# RFC 9651 dictionary member: key, then `=` and a bare item, then parameters; the items this
# vocabulary uses are tokens (`y`, `n`), so strings and numbers are read only to be ignored.
_SF_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_SF_ITEM = re.compile(r'[A-Za-z*][A-Za-z0-9:/!#$%&\'*+.^_`|~-]*|"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?|\?[01]')
_SF_PARAMS = re.compile(r'(?:;\s*[a-z*][a-z0-9_.*-]*(?:=(?:[A-Za-z*][A-Za-z0-9:/!#$%&\'*+.^_`|~-]*|"(?:[^"\\]|\\.)*"|-?[0-9.]+|\?[01]))?)*')
_URL = re.compile(r"https?://[^\s/?#]+[^\s]*", re.IGNORECASE)

# Purpose -> (Content-Signal key, aipref category) whose "no" it conflicts with (docs/semantics.md
# § Usage preferences). A purpose with no narrower category conflicts with the aipref root alone.
CONFLICTING_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "search-engine": (("search",), ("search",)),
    "ai-search": (("ai-input",), ("ai-use",)),
    "ai-user-triggered": (("ai-input",), ("ai-use",)),
    "ai-training": (("ai-train",), ("train-ai", "train-genai")),
    "user-triggered": ((), ("all",)),
    "seo-tool": ((), ("all",)),
    "advertising": ((), ("all",)),
    "archiver": ((), ("all",)),
    "preview": ((), ("all",)),
    "monitor": ((), ("all",)),
    "research": ((), ("all",)),
}

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class UsageRule:
    """One Content-Usage line of a group."""

    pattern: str  # the path as written; "/" when the line has none
    normalized: str
    preferences: Pairs  # category -> y | n, in line order
    line: int


@dataclass(frozen=True)
class Preferences:
    """The usage preferences in force for one request."""

    content_signal: Pairs = ()
    content_signal_lines: tuple[int, ...] = ()
    content_usage: Pairs = ()
    content_usage_line: int | None = None
    content_usage_pattern: str | None = None
    licenses: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.content_signal or self.content_usage or self.licenses)

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
        if self.licenses:
            out["license"] = list(self.licenses)
        return out

    def usage(self, category: str) -> tuple[str, str] | None:
        """An aipref category's value, its own or inherited from its parents, with the category
        that stated it; None when unstated."""
        values = dict(self.content_usage)
        while category is not None:
            if category == "all":
                return next(((values[root], root) for root in _ROOTS if root in values), None)
            if category in values:
                return values[category], category
            category = _USAGE_PARENT.get(category)
        return None


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


def parse_content_usage(value: str) -> tuple[str | None, Pairs, list[str]]:
    """A Content-Usage value: its path (None without one), its (category, y|n) pairs and what is
    wrong with it. A value that is not a Structured Fields dictionary gives no pairs at all, as
    RFC 9651 has a parser fail the whole field."""
    path = None
    text = value.strip()
    if text.startswith(("/", "*")):
        path, _, text = text.partition(" ")
        text = text.strip()
        if not text:
            return path, (), ["a path but no preference"]
    members = _sf_dictionary(text)
    if members is None:
        return path, (), [f"{text[:60]!r} is not a Structured Fields dictionary (category=y or =n, comma-separated)"]
    pairs, problems = {}, []
    for key, item in members:
        if key not in _USAGE_KEYS:
            problems.append(f"{key!r} is not an aipref category; ignored")
        elif item not in ("y", "n"):
            problems.append(f"{key}: the value is y or n, not {item}")
        else:
            pairs[key] = item  # a dictionary keeps a key's last value
    if not members:
        problems.append("no preference given")
    return path, tuple(pairs.items()), problems


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
) -> Preferences:
    """The preferences for one request path (as a log carries it): its group's signals, the
    Content-Usage rule whose path matches longest (rules that tie combine, `n` winning), the
    file's licences."""
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
    return Preferences(signals, signal_lines if signals else (), usage, line, pattern, licenses)


def conflicts(purposes: Iterable[str], preferences: Preferences | None) -> tuple[str, ...]:
    """`purpose: key=no` for each purpose whose use a preference in force refuses."""
    if not preferences:
        return ()
    signals = dict(preferences.content_signal)
    found = []
    for purpose in purposes:
        signal_keys, usage_keys = CONFLICTING_KEYS.get(purpose, ((), ()))
        for key in signal_keys:
            if signals.get(key) == "no":
                found.append(f"{purpose}: {key}=no")
        for key in usage_keys:
            stated = preferences.usage(key)
            if stated is not None and stated[0] == "n":
                found.append(f"{purpose}: {stated[1]}=n")  # the category the file wrote
                break
    return tuple(dict.fromkeys(found))
