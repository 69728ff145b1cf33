"""The maintained lists of User-Agent patterns the registry falls back on, read from the packages
that ship them: `crawler-user-agents` and Matomo's lists inside `device-detector`. One regex says
which headers claim a crawler, another which name an automated client (HTTP library, tool,
monitor, scanner, headless browser) rather than a declared crawler, a third which are people's
clients (browsers, apps, players) that name no platform."""
from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import yaml

from matcher.pattern_lists import PatternList

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# crawler-user-agents tags of tools that fetch for whoever runs them, not declared crawlers.
_TOOL_TAGS = frozenset({"http-library", "browser-automation"})
# Tags of automated clients: tools, and the monitors and scanners that check a site rather than
# crawl it for an index or a corpus.
_AUTOMATED_TAGS = _TOOL_TAGS | {"monitoring", "scanner"}
# Patterns of crawler-user-agents that match real browsers in the public browser lists of
# bench/recognition_bench.py (an Android build id, Sogou's mobile browser, phone and app names).
# Sogou's crawlers are registry crawlers, so dropping `Sogou` loses none of them.
_BROWSER_MATCHING_PATTERNS = frozenset(
    {r"AP3A\.240617\.008", r"008\/", "Sogou", "Sonic", "Butterfly", "Fever", "Expanse", "Fluid"}
)


@functools.cache
def maintained_bot_list() -> PatternList:
    """Both lists as one regex, compiled once per process.

    crawler-user-agents patterns are case-sensitive; those of HTTP libraries and browser
    automation (`curl`, `python-requests`, `HeadlessChrome`) are tools, not declared crawlers.
    Matomo's bot patterns are case-insensitive and start at a word boundary, as Matomo applies
    them; its last, catch-all pattern needs a look-behind Python's `re` lacks and is left out
    (the crawler-word rule of `matcher.agents` covers what it catches).
    """
    import crawleruseragents  # reads its data file on import

    own = [
        item["pattern"]
        for item in crawleruseragents.CRAWLER_USER_AGENTS_DATA
        if item["pattern"] not in _BROWSER_MATCHING_PATTERNS
        and not (item.get("tags") and set(item["tags"]) <= _TOOL_TAGS)
    ]
    return _as_one_list(own, matomo_bot_patterns())


@functools.cache
def maintained_automated_list() -> PatternList:
    """The patterns of automated clients as one regex, compiled once per process: those of
    crawler-user-agents tagged only as tools, monitors or scanners, and Matomo's HTTP libraries
    and feed readers (case-insensitive, from a word boundary, as Matomo applies them)."""
    import crawleruseragents

    own = [
        item["pattern"]
        for item in crawleruseragents.CRAWLER_USER_AGENTS_DATA
        if item.get("tags") and set(item["tags"]) <= _AUTOMATED_TAGS and item["pattern"] not in _BROWSER_MATCHING_PATTERNS
    ]
    return _as_one_list(own, _matomo_patterns("client/libraries.yml", "client/feed_readers.yml"))


@functools.cache
def maintained_browser_list() -> PatternList:
    """Matomo's lists of people's clients as one regex, compiled once per process: browsers,
    mobile apps, media players and mail clients, many of which name no platform."""
    lists = ("client/browsers.yml", "client/mobile_apps.yml", "client/mediaplayers.yml", "client/pim.yml")
    return _as_one_list([], _matomo_patterns(*lists))


def _as_one_list(own: list[str], matomo: list[str]) -> PatternList:
    """crawler-user-agents' patterns and Matomo's, as applied, searched as one alternation; each
    pattern is a part of it, Matomo's each with the word boundary they are applied from."""
    alternation = "|".join([*own, as_matomo_applies(matomo)] if matomo else own)
    return PatternList(alternation, [*own, *(as_matomo_applies([pattern]) for pattern in matomo)])


def as_matomo_applies(patterns: list[str]) -> str:
    """Matomo's patterns as one alternation, applied as Matomo does: case-insensitive, from the
    start of the header or a word boundary."""
    return rf"(?i:(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_)(?:{'|'.join(patterns)}))"


def matomo_bot_patterns() -> list[str]:
    """Matomo's bot patterns that Python's `re` compiles, in the list's order."""
    return _matomo_patterns("bots.yml")


def _matomo_patterns(*names: str) -> list[str]:
    """The patterns of Matomo's lists `names` that Python's `re` compiles, list after list."""
    spec = importlib.util.find_spec("device_detector")  # its data only; the package is not imported
    folder = Path(spec.submodule_search_locations[0]) / "regexes" / "upstream"
    patterns = []
    for name in names:
        for entry in yaml.load((folder / name).read_text("utf-8"), Loader=_YAML_LOADER):
            try:
                re.compile(entry["regex"])
            except re.error:
                continue
            patterns.append(entry["regex"])
    return patterns
