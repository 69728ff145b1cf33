"""The rule-level difference between two robots.txt files, group by group.

Groups are compared by the crawler token they are chosen for, so a rule moved to another line
is no change, and tokens whose merged group changed the same way are reported together. Rules
are compared by normalized pattern, the form matching uses: one that changed between allow and
disallow is "changed", not a removal plus an addition.
"""
from __future__ import annotations

from dataclasses import dataclass

from matcher.robots import Group, RobotsFile, Rule

__all__ = ["GroupChange", "affected", "diff"]


@dataclass(frozen=True)
class GroupChange:
    """How the group chosen for `tokens` changed. `group_added`/`group_removed`: only one of the
    two files has a group naming them (without one, such a crawler follows `*`, or nothing)."""

    tokens: tuple[str, ...]
    added: tuple[Rule, ...]
    removed: tuple[Rule, ...]
    changed: tuple[tuple[Rule, Rule], ...]  # (before, after) with the same normalized pattern
    crawl_delay: tuple[float | None, float | None] | None  # (before, after) when it changed
    group_added: bool = False
    group_removed: bool = False


def diff(before: RobotsFile, after: RobotsFile) -> list[GroupChange]:
    """Every group that changed, `*` first, then by token."""
    old, new = before.groups, after.groups
    by_change: dict[tuple, list[str]] = {}
    for token in sorted(old.keys() | new.keys(), key=lambda token: (token != "*", token)):
        change = _group_change(old.get(token), new.get(token))
        if change is not None:
            by_change.setdefault(change, []).append(token)
    return [
        GroupChange(tuple(tokens), added, removed, changed, delay, group_added, group_removed)
        for (added, removed, changed, delay, group_added, group_removed), tokens in by_change.items()
    ]


def affected(change: GroupChange) -> str:
    """Which crawlers a change reaches, in words."""
    named = [token for token in change.tokens if token != "*"]
    parts = []
    if "*" in change.tokens:
        parts.append("every crawler without a group of its own")
    if named:
        parts.append("crawlers with token " + ", ".join(named))
    return "; ".join(parts)


def _group_change(old: Group | None, new: Group | None) -> tuple | None:
    old_rules = _by_pattern(old)
    new_rules = _by_pattern(new)
    added = tuple(rule for key, rule in new_rules.items() if key not in old_rules)
    removed = tuple(rule for key, rule in old_rules.items() if key not in new_rules)
    changed = tuple(
        (old_rules[key], new_rules[key])
        for key in old_rules.keys() & new_rules.keys()
        if old_rules[key].kind != new_rules[key].kind
    )
    changed = tuple(sorted(changed, key=lambda pair: pair[1].line))
    delays = (_delay(old), _delay(new))
    delay = delays if delays[0] != delays[1] else None
    group_added, group_removed = old is None and new is not None, old is not None and new is None
    if not (added or removed or changed or delay or group_added or group_removed):
        return None
    return added, removed, changed, delay, group_added, group_removed


def _by_pattern(group: Group | None) -> dict[str, Rule]:
    """The rule that decides for each normalized pattern (allow wins a same-pattern tie)."""
    rules: dict[str, Rule] = {}
    for rule in () if group is None else group.rules:
        rules.setdefault(rule.normalized, rule)
    return dict(sorted(rules.items(), key=lambda item: item[1].line))


def _delay(group: Group | None) -> float | None:
    return None if group is None else group.crawl_delay
