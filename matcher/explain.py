"""Decisions in words and as JSON: what decided, and why it beat the runner-up."""
from __future__ import annotations

from matcher.robots import Decision, Rule

__all__ = ["decision_to_dict", "rule_text", "why"]


def rule_text(rule: Rule) -> str:
    text = f"{rule.kind.capitalize()}: {rule.pattern} (line {rule.line})"
    if rule.normalized != rule.pattern:
        text += f", normalized {rule.normalized}"
    return text


def why(decision: Decision, runner_up: Rule | None = None) -> str:
    """One sentence a site owner can check against the file.

    `runner_up` is the matching rule next in precedence (`Group.runner_up`).
    """
    if decision.reason == "robots-exempt":
        return "/robots.txt is always allowed"
    if decision.reason == "no-group":
        return "no group names this crawler and there is no User-agent: * group"
    if decision.reason == "no-match":
        return "no rule of the group matches this path"
    rule = decision.rule
    length = len(rule.normalized)
    if runner_up is None:
        return f"the only matching rule ({_octets(length)} normalized)"
    other = len(runner_up.normalized)
    if length > other:
        return f"longest match: {_octets(length)} beat {other} of {rule_text(runner_up)}"
    if rule.kind != runner_up.kind:
        return f"tie at {_octets(length)} with {rule_text(runner_up)}; allow wins ties"
    return f"tie at {_octets(length)} with {rule_text(runner_up)}; same verdict, earlier line named"


def _octets(count: int) -> str:
    return f"{count} octet" if count == 1 else f"{count} octets"


def decision_to_dict(url: str, decision: Decision) -> dict:
    """The JSON object `crawl-audit check --json` prints for one URL."""
    rule = decision.rule
    return {
        "url": url,
        "allowed": decision.allowed,
        "reason": decision.reason,
        "rule": None
        if rule is None
        else {"kind": rule.kind, "pattern": rule.pattern, "line": rule.line, "normalized": rule.normalized},
        "group": None if decision.group is None else list(decision.group.agents),
    }
