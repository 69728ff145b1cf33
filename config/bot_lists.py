"""The two maintained lists of bot User-Agent patterns the registry falls back on, read from the
packages that ship them: `crawler-user-agents` and Matomo's list inside `device-detector`."""
from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import yaml

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# crawler-user-agents tags of tools that fetch for whoever runs them, not declared crawlers.
_TOOL_TAGS = frozenset({"http-library", "browser-automation"})
# Patterns of crawler-user-agents that match real browsers in the public browser lists of
# bench/recognition_bench.py (an Android build id, Sogou's mobile browser, phone and app names).
# Sogou's crawlers are registry crawlers, so dropping `Sogou` loses none of them.
_BROWSER_MATCHING_PATTERNS = frozenset(
    {r"AP3A\.240617\.008", r"008\/", "Sogou", "Sonic", "Butterfly", "Fever", "Expanse", "Fluid"}
)


@functools.cache
def maintained_bot_list() -> re.Pattern[str]:
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
    matomo = "|".join(matomo_bot_patterns())
    return re.compile("|".join(own) + rf"|(?i:(?:^|[^A-Z0-9_-]|[^A-Z0-9-]_)(?:{matomo}))")


def matomo_bot_patterns() -> list[str]:
    """Matomo's bot patterns that Python's `re` compiles, in the list's order."""
    spec = importlib.util.find_spec("device_detector")  # its data only; the package is not imported
    folder = Path(spec.submodule_search_locations[0])
    text = (folder / "regexes" / "upstream" / "bots.yml").read_text("utf-8")
    patterns = []
    for entry in yaml.load(text, Loader=_YAML_LOADER):
        try:
            re.compile(entry["regex"])
        except re.error:
            continue
        patterns.append(entry["regex"])
    return patterns
