"""Directives as parsed, and the `indexing` object they give one crawler.

Each source (a header value, a meta element) is parsed once into `Directives`: every directive
with the bot it addresses (None for all crawlers), plus lint for what could not be used.
`Directives.effective(tokens)` then picks those for one crawler and resolves conflicts to the
most restrictive.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from matcher.directives.strictness import stricter
from matcher.directives.vocabulary import DirectiveValue
from matcher.records import rfc3339

__all__ = ["Directive", "Directives", "Lint", "combine"]


@dataclass(frozen=True)
class Directive:
    """One directive as it applies: a flag (value None) or a named value, for one bot or all.

    `name` is lower-case; `none` is already split into `noindex` and `nofollow`.
    `value` is an int for counts, a lower-case word for `max-image-preview`, and a UTC
    datetime for `unavailable_after`. `bot` is the lower-case token addressed, None for all.
    """

    name: str
    value: DirectiveValue | None = None
    bot: str | None = None


@dataclass(frozen=True)
class Lint:
    """Something in a source that could not be used as written, or was read by assumption.

    Codes: unknown-directive, unexpected-value, missing-value, bad-number, bad-value,
    bad-date, assumed-utc, empty-bot-section, bad-meta-name.
    """

    code: str
    message: str
    raw: str
    source: str


@dataclass(frozen=True)
class Directives:
    """Directives of one or more sources for every crawler, and the lint found reading them."""

    items: tuple[Directive, ...] = ()
    lint: tuple[Lint, ...] = ()

    def effective(self, tokens: Sequence[str]) -> dict[str, bool | int | str]:
        """The `indexing` object for a crawler with these robots tokens.

        Generic directives and those addressed to any of the tokens apply; for each name
        the most restrictive value wins. Keys are sorted; flags map to True, valued
        directives to their value, `unavailable_after` to an RFC 3339 UTC string.
        """
        addressed = frozenset(token.lower() for token in tokens)
        strictest: dict[str, DirectiveValue | bool] = {}
        for directive in self.items:
            if directive.bot is not None and directive.bot not in addressed:
                continue
            current = strictest.get(directive.name)
            if directive.value is None:
                strictest[directive.name] = True
            elif current is None:
                strictest[directive.name] = directive.value
            else:
                strictest[directive.name] = stricter(directive.name, current, directive.value)
        return {name: _record_value(strictest[name]) for name in sorted(strictest)}


def combine(parts: Iterable[Directives]) -> Directives:
    """Several sources as one; conflicts are resolved later, per crawler, by `effective`."""
    items: list[Directive] = []
    lint: list[Lint] = []
    for part in parts:
        items.extend(part.items)
        lint.extend(part.lint)
    return Directives(tuple(items), tuple(lint))


def _record_value(value: DirectiveValue | bool) -> bool | int | str:
    return rfc3339(value) if isinstance(value, datetime) else value
