"""Load and validate the crawler registry (config/crawlers.yaml).

Everything is checked at load time so a mistake in the file fails the run at once with a message
naming the file, the entry and the field, instead of mis-verifying requests later.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from config.bot_lists import maintained_automated_list, maintained_bot_list, maintained_browser_list
from matcher.agents import PURPOSES, UNKNOWN_PURPOSE, USER_TRIGGERED_PURPOSES, Crawler, KeyDirectory, RangeSource, Registry
from matcher.referrals import SEARCH_ENGINES, Referrer, Referrers

DEFAULT_PATH = Path(__file__).with_name("crawlers.yaml")

_TOP_LEVEL = frozenset({"range_sources", "key_directories", "crawler_classes", "crawlers", "referrers"})
_REFERRER_FIELDS = {"hosts": list, "utm_source": list, "search_engine": str, "source": str}
_SOURCE_FIELDS = {"operator": str, "url": str}
_DIRECTORY_FIELDS = {"operator": str, "url": str, "source": str, "signers": str}
_DIRECTORY_OPTIONAL = {"agent": str}
_CLASS_FIELDS = {"description": str, "ranges": list, "rdns_suffixes": list, "robots_fetch_family": str}
_REQUIRED = {
    "name": str,
    "operator": str,
    "crawler_class": str,
    "ua_tokens": list,
    "robots_tokens": list,
    "honours_robots": bool,
    "honours_crawl_delay": bool,
    "purposes": list,
}
_OPTIONAL = {
    "robots_only": bool,
    "ignores_catch_all": bool,
    "robots_fetch_family": str,
    "ranges": list,
    "rdns_suffixes": list,
    "source": str,
    "note": str,
}
_SOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
# Product tokens (matcher.tokens), one or several separated by single spaces.
_UA_TOKEN = re.compile(r"[A-Za-z0-9_.-]+(?: [A-Za-z0-9_.-]+)*")
# Only these characters can appear in a robots.txt group's token (docs/semantics.md
# § robots.txt), so any other character would make a robots token that never selects a group.
_ROBOTS_TOKEN = re.compile(r"[a-z0-9_.-]+")
_SUFFIX = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)+")


class RegistryError(ValueError):
    """crawlers.yaml is unreadable or breaks a rule; the message says where."""


@dataclass(frozen=True)
class _Where:
    origin: str
    entry: str

    def error(self, field: str | None, message: str) -> RegistryError:
        place = f"{self.origin}: {self.entry}" + (f": field '{field}'" if field else "")
        return RegistryError(f"{place}: {message}")


def load_registry(path: str | Path | None = None) -> Registry:
    """Read and validate a registry file (default: the crawlers.yaml shipped beside this module)."""
    path = Path(path) if path is not None else DEFAULT_PATH
    try:
        if path.exists() and not path.is_file():
            raise OSError(f"{path} is not a regular file")
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegistryError(f"{path}: cannot read: {exc}") from exc
    try:
        document = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise RegistryError(f"{path}: not valid YAML: {exc}") from exc
    except RecursionError:
        raise RegistryError(f"{path}: not valid YAML: nested too deeply") from None
    return parse_registry(document, str(path))


@functools.cache
def default_registry() -> Registry:
    """The registry shipped in config/crawlers.yaml, loaded once per process."""
    return load_registry()


def parse_registry(document: object, origin: str = "<registry>") -> Registry:
    """Validate an already-parsed registry document and build the Registry."""
    top = _Where(origin, "top level")
    if not isinstance(document, dict):
        raise top.error(None, f"expected a mapping, got {_kind(document)}")
    _reject_unknown(top, document, _TOP_LEVEL)
    sources = _range_sources(origin, _mapping(top, document, "range_sources"))
    classes = _classes(origin, _mapping(top, document, "crawler_classes"), sources)
    entries = document.get("crawlers")
    if not isinstance(entries, list) or not entries:
        raise top.error("crawlers", f"expected a non-empty list, got {_kind(entries)}")
    crawlers = [_crawler(origin, i, entry, sources, classes) for i, entry in enumerate(entries)]
    _check_unique(origin, crawlers)
    _check_sources_used(origin, sources, crawlers)
    directories = _key_directories(origin, document.get("key_directories") or {}, crawlers)
    return Registry(
        crawlers,
        sources,
        maintained_bot_list(),
        automated_list=maintained_automated_list(),
        key_directories=directories,
        browser_list=maintained_browser_list(),
        referrers=_referrers(origin, document.get("referrers") or {}),
    )


def _referrers(origin: str, raw: object) -> Referrers:
    """Each operator's services whose links send readers: hosts, utm_source values, a search
    engine's every country domain, and the page that documents them."""
    if not isinstance(raw, dict):
        raise _Where(origin, "top level").error("referrers", f"expected a mapping, got {_kind(raw)}")
    found = []
    for operator, entry in raw.items():
        where = _Where(origin, f"referrers: {operator}")
        if not isinstance(entry, dict):
            raise where.error(None, f"expected a mapping, got {_kind(entry)}")
        _reject_unknown(where, entry, _REFERRER_FIELDS)
        for field, kind in _REFERRER_FIELDS.items():
            if field in entry and not isinstance(entry[field], kind):
                raise where.error(field, f"expected {kind.__name__}, got {_kind(entry[field])}")
        if not isinstance(entry.get("source"), str):
            raise where.error("source", "every referrer names the page that documents it")
        for field in ("hosts", "utm_source"):
            if not all(isinstance(item, str) and item.strip() for item in entry.get(field, ())):
                raise where.error(field, "expected a list of non-empty strings")
        engine = entry.get("search_engine")
        if engine is not None and engine not in SEARCH_ENGINES:
            raise where.error("search_engine", f"expected one of {', '.join(sorted(SEARCH_ENGINES))}")
        found.append(Referrer(
            str(operator),
            tuple(h.strip().lower().removeprefix("www.") for h in entry.get("hosts", ())),
            tuple(v.strip().lower() for v in entry.get("utm_source", ())),
            engine,
            entry["source"],
        ))
    return Referrers(found)


def _key_directories(origin: str, raw: object, crawlers: Sequence[Crawler]) -> dict[str, KeyDirectory]:
    """Each directory names the operator whose crawlers its keys prove, the operator's page that
    documents it, which of its agents sign, and the agent a browser's request signed with it is
    from. That agent fetches what a user asks for: its purposes are those of the operator's
    user-triggered crawlers."""
    operators = {c.operator for c in crawlers}
    if not isinstance(raw, dict):
        raise _Where(origin, "top level").error("key_directories", f"expected a mapping, got {_kind(raw)}")
    directories = {}
    for name, body in raw.items():
        where = _Where(origin, f"key_directories '{name}'")
        if not isinstance(name, str) or not _SOURCE_NAME.fullmatch(name):
            raise where.error(None, "a directory name is lower-case letters, digits and '-'")
        fields = _fields(where, body, _DIRECTORY_FIELDS, {**_DIRECTORY_FIELDS, **_DIRECTORY_OPTIONAL})
        if not fields["url"].startswith("https://"):
            raise where.error("url", f"expected an https URL, got {fields['url']!r}")
        if fields["operator"] not in operators:
            raise where.error("operator", f"no crawler of the registry is operated by {fields['operator']!r}")
        purposes = sorted({
            p for c in crawlers if c.operator == fields["operator"] for p in c.purposes if p in USER_TRIGGERED_PURPOSES
        })
        directories[name] = KeyDirectory(
            name, fields["operator"], fields["url"], fields.get("agent") or f"{fields['operator']} agent",
            tuple(purposes) or (UNKNOWN_PURPOSE,),
        )
    return directories


@dataclass(frozen=True)
class _Class:
    ranges: tuple[str, ...]
    rdns_suffixes: tuple[str, ...]
    robots_fetch_family: str | None = None

    @property
    def binds(self) -> bool:
        return bool(self.ranges or self.rdns_suffixes)


def _range_sources(origin: str, raw: dict) -> dict[str, RangeSource]:
    sources = {}
    for name, body in raw.items():
        where = _Where(origin, f"range_sources '{name}'")
        if not isinstance(name, str) or not _SOURCE_NAME.fullmatch(name):
            raise where.error(None, "a source name is lower-case letters, digits and '-'")
        fields = _fields(where, body, _SOURCE_FIELDS, _SOURCE_FIELDS)
        if not fields["url"].startswith(("https://", "http://")):
            raise where.error("url", f"expected an http(s) URL, got {fields['url']!r}")
        sources[name] = RangeSource(name, fields["operator"], fields["url"])
    return sources


def _classes(origin: str, raw: dict, sources: Mapping[str, RangeSource]) -> dict[str, _Class]:
    classes = {}
    for name, body in raw.items():
        where = _Where(origin, f"crawler_classes '{name}'")
        fields = _fields(where, body, {"description": str}, _CLASS_FIELDS)
        classes[str(name)] = _Class(
            _ranges(where, fields.get("ranges", []), sources),
            _suffixes(where, fields.get("rdns_suffixes", [])),
            fields.get("robots_fetch_family"),
        )
    return classes


def _crawler(
    origin: str,
    index: int,
    entry: object,
    sources: Mapping[str, RangeSource],
    classes: Mapping[str, _Class],
) -> Crawler:
    name = entry.get("name") if isinstance(entry, dict) else None
    where = _Where(origin, f"crawlers[{index}]" + (f" '{name}'" if isinstance(name, str) else ""))
    fields = _fields(where, entry, _REQUIRED, {**_REQUIRED, **_OPTIONAL})
    crawler_class = classes.get(fields["crawler_class"])
    if crawler_class is None:
        known = ", ".join(sorted(classes))
        raise where.error("crawler_class", f"unknown class {fields['crawler_class']!r} ({known})")
    ranges = _ranges(where, fields.get("ranges", []), sources)
    suffixes = _suffixes(where, fields.get("rdns_suffixes", []))
    if not fields.get("source", "https://").startswith(("https://", "http://")):
        wanted = "the URL of the page it was taken from"
        raise where.error("source", f"expected {wanted}, got {fields['source']!r}")
    if crawler_class.binds:
        for field, own in (("ranges", ranges), ("rdns_suffixes", suffixes)):
            if own:
                raise where.error(field, f"set by crawler_class {fields['crawler_class']!r}")
        ranges, suffixes = crawler_class.ranges, crawler_class.rdns_suffixes
    return Crawler(
        name=fields["name"],
        operator=fields["operator"],
        crawler_class=fields["crawler_class"],
        ua_tokens=_tokens(where, "ua_tokens", fields["ua_tokens"], _UA_TOKEN, lower=True),
        robots_tokens=_tokens(where, "robots_tokens", fields["robots_tokens"], _ROBOTS_TOKEN),
        honours_robots=fields["honours_robots"],
        honours_crawl_delay=fields["honours_crawl_delay"],
        robots_only=fields.get("robots_only", False),
        ignores_catch_all=fields.get("ignores_catch_all", False),
        robots_fetch_family=fields.get("robots_fetch_family", crawler_class.robots_fetch_family) or fields["name"],
        range_sources=ranges,
        rdns_suffixes=suffixes,
        purposes=_purposes(where, fields["purposes"]),
    )


def _purposes(where: _Where, values: list) -> tuple[str, ...]:
    if not values:
        raise where.error("purposes", "expected at least one purpose")
    for value in values:
        if value not in PURPOSES:
            raise where.error("purposes", f"{value!r} is not a purpose ({', '.join(PURPOSES)})")
    if len(set(values)) != len(values):
        raise where.error("purposes", "lists a purpose twice")
    return tuple(values)


def _fields(where: _Where, body: object, required: dict, allowed: dict) -> dict:
    if not isinstance(body, dict):
        raise where.error(None, f"expected a mapping, got {_kind(body)}")
    _reject_unknown(where, body, allowed)
    for field in required:
        if field not in body:
            raise where.error(field, "missing (required)")
    for field, value in body.items():
        expected = allowed[field]
        if not isinstance(value, expected) or (expected is str and not value.strip()):
            wanted = {str: "a non-empty string", bool: "true or false", list: "a list"}[expected]
            raise where.error(field, f"expected {wanted}, got {_kind(value)} {value!r}")
    return body


def _tokens(
    where: _Where, field: str, values: list, pattern: re.Pattern, lower: bool = False
) -> tuple[str, ...]:
    if not values:
        raise where.error(field, "expected at least one token")
    for value in values:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise where.error(field, f"{value!r} is not a token matching {pattern.pattern}")
    tokens = tuple(v.lower() for v in values) if lower else tuple(values)
    if len(set(tokens)) != len(tokens):
        raise where.error(field, "lists a token twice")
    return tokens


def _ranges(where: _Where, values: list, sources: Mapping[str, RangeSource]) -> tuple[str, ...]:
    for value in values:
        if not isinstance(value, str) or value not in sources:
            raise where.error("ranges", f"{value!r} is not a key of range_sources")
    return tuple(values)


def _suffixes(where: _Where, values: list) -> tuple[str, ...]:
    for value in values:
        if not isinstance(value, str):
            raise where.error("rdns_suffixes", f"expected host names, got {_kind(value)}")
        if value.startswith("."):
            raise where.error("rdns_suffixes", f"{value!r} must not start with '.'")
        if value != value.strip() or " " in value:
            raise where.error("rdns_suffixes", f"{value!r} must not contain spaces")
        if not _SUFFIX.fullmatch(value):
            raise where.error("rdns_suffixes", f"{value!r} is not a lower-case domain name")
    return tuple(values)


def _check_unique(origin: str, crawlers: list[Crawler]) -> None:
    names: dict[str, int] = {}
    tokens: dict[str, str] = {}
    for index, crawler in enumerate(crawlers):
        where = _Where(origin, f"crawlers[{index}] '{crawler.name}'")
        first = names.setdefault(crawler.name.lower(), index)
        if first != index:
            raise where.error("name", f"duplicate of crawlers[{first}]")
        for token in crawler.ua_tokens:
            owner = tokens.setdefault(token, crawler.name)
            if owner != crawler.name:
                raise where.error("ua_tokens", f"{token!r} already names crawler {owner!r}")


def _check_sources_used(origin: str, sources: Mapping, crawlers: list[Crawler]) -> None:
    used = {name for crawler in crawlers for name in crawler.range_sources}
    for name in sources:
        if name not in used:
            raise _Where(origin, f"range_sources '{name}'").error(None, "no crawler uses it")


def _mapping(where: _Where, document: dict, field: str) -> dict:
    value = document.get(field)
    if not isinstance(value, dict):
        raise where.error(field, f"expected a mapping, got {_kind(value)}")
    return value


def _reject_unknown(where: _Where, body: dict, allowed) -> None:
    for key in body:
        if key not in allowed:
            raise where.error(str(key), f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _refuse_aliases(root: yaml.Node) -> None:
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            raise yaml.composer.ComposerError(
                None, None, "alias refused: a registry takes no aliases", node.start_mark
            )
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending += node.value
        elif isinstance(node, yaml.MappingNode):
            pending += [part for pair in node.value for part in pair]


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """A safe loader that refuses a key given twice in one mapping (PyYAML keeps the last), and
    any alias: a registry needs none, and nested aliases expand exponentially (a "billion laughs"
    file of a few hundred bytes would take all memory).

    libyaml parses when PyYAML has it, many times faster than Python's parser on every run's
    start. An alias composes to a node met twice in the document's graph,
    which stays as small as the text, so it is looked for there, before anything is expanded."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            _refuse_aliases(node)
        return node

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, (str, int, float, bool)):
                continue  # the base loader reports unhashable keys itself
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)
