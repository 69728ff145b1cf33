"""A layout inferred from the lines themselves, for a file no known format reads well.

Text lines are cut into tokens (quoted, bracketed, `key=value`, bare); the tokens at each place of
the most common shape of line are told apart by what they hold (a time in one of its common
spellings, an address with or without port, a request line or a method and a target apart, a
three-digit status, a size, a host name, a User-Agent, a referer, an X-Forwarded-For list), with
a `key=` naming a field where the writer names its values. The layout is written as an Apache
format string (`apache:...`), so it is what `--log-format` takes, and what reads the file.

JSON lines are flattened to every value at any depth, addressed by dotted keys (a list's items by
their index); each field takes the path whose key names it and whose values have its form. The
layout is a field map for `--log-format jsonl --field-map`.

Either way the layout is kept only when it compiles with the format's own machinery and reads the
sample back: `read` counts the sample lines it reads, as `detect.rank_formats` counts them.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from matcher.addresses import parse_ip
from matcher.logformats.detect import Candidate, chosen_format, rank_formats, sample_of, scored
from matcher.logformats.envelopes import ENVELOPES, unwrapped
from matcher.logformats.json_text import loads_logged
from matcher.logformats.record import LogParseError

__all__ = ["InferredFormat", "detected_format", "infer_layout", "inferred_choice"]

# A place of a line is taken as a field when this share of its values have the field's form: a
# stray `-` or an odd value does not lose the field, a column that only sometimes looks like one is
# not taken for it.
_MOST = 0.8

# ------------------------------------------------------------------ value forms

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "PROPFIND"})
_REQUEST = re.compile(r"[A-Z]{3,10} \S+(?: HTTP/\d(?:\.\d)?)?\Z")
_TARGET = re.compile(r"(?:/|https?://)\S*\Z")
_URL = re.compile(r"https?://\S+\Z")
_HOST = re.compile(r"(?=[^/]*[A-Za-z])[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\.?(?::\d{1,5})?\Z")
# a Host as a mesh writes it: a service's bare name, with its port (`reviews:9080`)
_SERVICE_HOST = re.compile(r"[A-Za-z][A-Za-z0-9-]*(?::\d{1,5})?\Z")
_PRODUCT = re.compile(r"[A-Za-z][\w.+-]*/[\w.+-]")
_INTEGER = re.compile(r"\d{1,20}\Z")
_STATUS = re.compile(r"[1-5]\d\d\Z")

# Spellings of time, each written as the `%{...}t` directive that reads it back.
_ISO = re.compile(
    r"(\d{4})([-/])(\d\d)\2(\d\d)([T ])(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?\Z")
_CLF = re.compile(r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d(?: [+-]\d{4})?\Z")
# asctime's, the weekday first, the day padded with a blank (uWSGI: `[Sun Mar  6 22:49:12 2016]`)
_ASCTIME = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\Z")
# Unix times from 2001-09-09 on (the first with 10 digits): seconds, milliseconds, microseconds;
# JSON writers also write nanoseconds, which `jsonl` reads.
_EPOCH = re.compile(r"(\d{10}|\d{13}|\d{16})(\.\d{1,9})?\Z")
_EPOCH_UNITS = {10: "sec", 13: "msec", 16: "usec"}
_EPOCH_NANOSECONDS = re.compile(r"[1-9]\d{18}\Z")


@dataclass(frozen=True)
class _Time:
    """How a column writes its time: the directive that reads it, and what follows it inside the
    token (the fraction of Unix seconds, read when it has Apache's three or six digits, else
    matched and skipped)."""

    directive: str
    rest: str = ""


_SKIPPED_FRACTION = ".%{fraction}e"
_FRACTION_DIRECTIVES = {3: ".%{msec_frac}t", 6: ".%{usec_frac}t"}


def _time_of(text: str, bracketed: bool) -> _Time | None:
    match = _ISO.match(text)
    if match is not None:
        _, dash, _, _, between, _, _, _, fraction, zone = match.groups()
        spec = f"%Y{dash}%m{dash}%d{between}%H:%M:%S"
        if fraction is not None:
            spec += text[19] + "%f"
        return _Time(f"%{{{spec}{'%z' if zone else ''}}}t")
    if _CLF.match(text):
        if bracketed and len(text) == 26:
            return _Time("%t")
        return _Time("%{%d/%b/%Y:%H:%M:%S %z}t" if len(text) == 26 else "%{%d/%b/%Y:%H:%M:%S}t")
    if _ASCTIME.match(text):
        return _Time("%{%a %b %e %H:%M:%S %Y}t")
    match = _EPOCH.match(text)
    if match is not None and text[0] != "0":
        digits, fraction = match.groups()
        unit = _EPOCH_UNITS[len(digits)]
        if fraction is None:
            return _Time(f"%{{{unit}}}t")
        read = _FRACTION_DIRECTIVES.get(len(fraction) - 1) if unit == "sec" else None
        return _Time(f"%{{{unit}}}t", read or _SKIPPED_FRACTION)
    return None


def _column_time(values: Sequence[str], bracketed: bool) -> _Time | None:
    """The spelling of time most of a place's values are written in (a writer may leave out a
    fraction of zero: those lines are not read), or None. Unix seconds whose fractions are written
    with more or fewer digits from line to line keep the seconds alone."""
    spellings = [_time_of(value, bracketed) for value in values]
    for spelled in (spellings, [time if time is None or not time.rest else _Time(time.directive, _SKIPPED_FRACTION)
                                for time in spellings]):
        spelling, count = Counter(spelled).most_common(1)[0]
        if spelling is not None and count >= _MOST * len(values):
            return spelling
    return None


def _address(text: str) -> bool:
    """An IPv4 or IPv6 address, with or without a port (`a.b.c.d:port`, `[v6]:port`)."""
    return parse_ip(text) is not None


def _port(address: str) -> str | None:
    """The port an address is written with, or None."""
    if address.startswith("["):
        return address.partition("]:")[2] or None
    return address.partition(":")[2] or None if address.count(":") == 1 else None


def _address_list(text: str) -> bool:
    parts = [part.strip() for part in text.split(",")]
    return len(parts) > 1 and all(_address(part) for part in parts)


def _user_agent(text: str) -> bool:
    return not text.startswith("HTTP/") and (_PRODUCT.search(text) is not None or text.startswith("Mozilla")) and "://" not in text[:12] \
        and not text.startswith("/") and not _REQUEST.match(text)


def _absent(text: str) -> bool:
    """Nothing written: `-`, or `- - -` for a request line that never came (Envoy, AWS)."""
    return text in ("", "-", "- - -")


# ------------------------------------------------------------------ key names

# What a `key=` (text) or a JSON key says its value is, the better names first.
_KEY_HINTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "user_agent": ("user_agent", "user-agent", "useragent", "http_user_agent", "agent", "ua"),
    "referer": ("referer", "referrer"),
    "forwarded_for": ("forwarded", "xff", "fwd"),
    "client_ip": ("client", "remote", "orig_h", "peer", "src", "addr", "ip"),
    "host": ("authority", "host", "vhost", "server_name", "domain"),
    "request": ("request",),
    "method": ("method", "verb"),
    "target": ("uri", "url", "path", "target"),
    "status": ("status", "code"),
    "size": ("size", "bytes_sent", "response_body_len", "bytes", "body_len", "length"),
    "ts": ("timestamp", "@timestamp", "time", "ts", "date", "@t"),
})
# Keys that name the server's side, never the client or the Host the client asked for.
_NOT_CLIENT = ("resp_", "server", "upstream", "local", "dest", "dst", "target", "backend")
_NOT_HOST = ("upstream", "backend", "service", "origin", "local")
# Fields whose hints are whole words of the key (`status`, not `status_msg`'s prefix alone).
_WORD_FIELDS = frozenset({"ts", "status", "size", "method"})


def _key_rank(key: str | None, field: str) -> int | None:
    """How well `key` names `field`: the place of the first hint it holds (0 best); None: it does not."""
    if not key:
        return None
    steps = [step for step in key.lower().split(".") if not step.isdecimal()]
    name = ".".join(steps) if field == "client_ip" else (steps[-1] if steps else "")
    if field == "client_ip" and any(word in name for word in _NOT_CLIENT):
        return None
    if field == "host" and any(word in ".".join(steps) for word in _NOT_HOST):
        return None
    if field == "ts" and any(word in name for word in ("taken", "duration", "elapsed")):
        return None
    for rank, hint in enumerate(_KEY_HINTS[field]):
        if field in _WORD_FIELDS:
            if name == hint or name.endswith(("_" + hint, "-" + hint)) or name.startswith(hint + "_"):
                return rank
        elif hint in name:
            return rank
    return None


def _key_says(key: str | None, field: str) -> bool:
    return _key_rank(key, field) is not None


# ------------------------------------------------------------------ the result


@dataclass(frozen=True)
class InferredFormat(Candidate):
    """A layout inferred from the sample (`name` its `--log-format` value), with how many of the
    sample lines it reads; a `Candidate` like any preset's, taken by the same rule."""

    field_map: Mapping[str, str] | None = dataclasses.field(default=None, compare=False)  # JSON lines: the map

    def option(self) -> str:
        """The layout as the options that name it on the command line."""
        if self.field_map is not None:
            return f"--log-format {self.name} --field-map {shlex.quote(json.dumps(dict(self.field_map)))}"
        return f"--log-format {shlex.quote(self.name)}"

    def __str__(self) -> str:
        return f"no known format; inferred {self.option()} ({self.read} of {self.sample} lines read, {self.share:.0%})"


def detected_format(lines: Iterable[bytes | str]) -> Candidate | None:
    """The format `--log-format auto` reads `lines` in: the preset `detect.chosen_format` takes,
    else the layout inferred from the lines when it is taken by the same rule against the presets;
    None when neither reads the sample well."""
    sample = sample_of(lines)
    ranked = rank_formats(sample)
    return chosen_format(ranked) or inferred_choice(infer_layout(sample), ranked)


def inferred_choice(inferred: InferredFormat | None, ranked: Sequence[Candidate]) -> InferredFormat | None:
    """`inferred` when `detect.chosen_format` takes it before every preset `ranked` (`rank_formats`
    on the lines it was inferred from); None otherwise."""
    if inferred is None:
        return None
    # the presets keep the ties: a layout is inferred only where none reads as well
    contest = sorted((*ranked, inferred), key=lambda candidate: -candidate.read)
    return inferred if chosen_format(contest) is inferred else None


def infer_layout(lines: Iterable[bytes | str]) -> InferredFormat | None:
    """The layout of `lines` (the sample `detect.sample_of` takes), as a `--log-format` value that
    reads them; None when no layout with a client, a time and a request is found in them."""
    sample = sample_of(lines)
    if not sample:
        return None
    objects = [_json_object(text) for text in sample]
    if 2 * sum(1 for found in objects if found is not None) > len(sample):
        return _checked("jsonl", sample, _json_mapping([found for found in objects if found is not None]))
    envelope, texts = _inside_envelope(sample)
    spec = _text_spec(texts)
    if spec is None:
        return None
    return _checked(spec if envelope is None else f"{envelope}+{spec}", sample, None)


def _inside_envelope(sample: Sequence[str]) -> tuple[str | None, Sequence[str]]:
    """The envelope most lines are in and the lines inside it, whose own time is the request's (a
    CRI frame's or a syslog header's is the runtime's); else None and the lines as they are."""
    for envelope in ENVELOPES:
        inside = []
        for text in sample:
            try:
                inside.append(unwrapped(envelope, text))
            except LogParseError:
                continue
        if 2 * len(inside) > len(sample):
            return envelope, inside
    return None, sample


def _checked(name: str, sample: Sequence[str], mapping: Mapping[str, str] | None) -> InferredFormat | None:
    """The layout compiled as `--log-format` compiles it, scored on the sample as every candidate is."""
    from matcher.logformats import parser_for

    try:
        parse = parser_for(name, mapping=mapping)
    except ValueError:
        return None
    candidate = scored(name, parse, sample)
    if not candidate.read:
        return None
    return InferredFormat(name=name, read=candidate.read, sample=candidate.sample, lines=candidate.lines,
                          field_map=None if mapping is None else MappingProxyType(dict(mapping)))


# ------------------------------------------------------------------ text lines

_TOKEN = re.compile(
    r'(?P<key>[A-Za-z_@][\w.\-]*=)?(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|\[(?P<bracketed>[^\]]{0,256})\](?=\s|\Z)'
    r'|\((?P<parenthesized>[^()]{0,256})\)(?=\s|\Z)|(?P<bare>\S*))',
    re.DOTALL,
)
# `(HTTP/1.1 200)`: a value in parentheses after a word of its own (uWSGI's protocol and status)
_AFTER_A_WORD = re.compile(r"\S+ (\S+)\Z")
_SPACE = re.compile(r"[ \t]+")
_LABELLED = re.compile(r"([A-Za-z][\w-]{0,31}) (\S+)\Z")
_SHAPES_TRIED = 5
_TABBED_FIELDS = 3  # tabs on a line of a tab-separated file, at least
# Lines longer, or of more tokens, than any access log writes are left out of the inference (the
# layout found still counts them): the cost of a sample stays bounded whatever it holds.
_LONGEST_LINE = 16_384
_MOST_TOKENS = 128
# Two bare tokens that are one time (ISO with a space, CLF without brackets).
_TIME_PAIR = re.compile(r"\d{4}[-/]\d\d[-/]\d\d \d\d:\d\d:\d\d\S*\Z|\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\Z")


@dataclass(frozen=True)
class _Token:
    before: str  # the blanks before it
    key: str  # `key=` as written, or ""
    wrap: str  # what opens it: '"', '[', '[Label ' (a bracket that names its value), '(', '( ' (a word, then the value) or ''
    value: str

    @property
    def shape(self) -> tuple[str, str, str]:
        return (self.before, self.key, self.wrap)


def _tokens(text: str, tabbed: bool) -> tuple[_Token, ...] | None:
    """The tokens of a line; in a tab-separated file each field between tabs is one, blanks and all."""
    text = text.strip("\r\n")
    if len(text) > _LONGEST_LINE:
        return None
    if tabbed:
        fields = text.split("\t")
        return None if len(fields) > _MOST_TOKENS else tuple(
            _Token("\t" if index else "", "", "", value) for index, value in enumerate(fields))
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        space = _SPACE.match(text, position)
        before = space.group(0) if space else ""
        position = space.end() if space else position
        if position >= len(text):
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            return None
        if match.group("quoted") is not None:
            wrap, value = '"', match.group("quoted")
        elif match.group("bracketed") is not None:
            wrap, value = "[", match.group("bracketed")
            labelled = _LABELLED.match(value)
            if labelled is not None:  # `[Client 203.0.113.9]`: the label is written, the value read
                wrap, value = f"[{labelled.group(1)} ", labelled.group(2)
        elif match.group("parenthesized") is not None:
            wrap, value = "(", match.group("parenthesized")
            worded = _AFTER_A_WORD.match(value)
            if worded is not None:
                wrap, value = "( ", worded.group(1)
        else:
            wrap, value = "", match.group("bare")
        if match.end() < len(text) and not text[match.end()].isspace():
            return None  # a quote closed inside a token: not a layout of tokens
        tokens.append(_Token(before if tokens else "", match.group("key") or "", wrap, value))
        if len(tokens) > _MOST_TOKENS:
            return None
        position = match.end()
    merged: list[_Token] = []
    for token in tokens:
        previous = merged[-1] if merged else None
        if (previous is not None and not previous.wrap and not token.wrap and not token.key and token.before == " "
                and _TIME_PAIR.match(f"{previous.value} {token.value}")):
            merged[-1] = _Token(previous.before, previous.key, "", f"{previous.value} {token.value}")
        else:
            merged.append(token)
    return tuple(merged)


def _text_spec(sample: Sequence[str]) -> str | None:
    """The Apache format string of the most common shape of line in `sample`."""
    # a file whose lines are fields between tabs (Zeek, CloudFront) holds blanks inside its values
    tabbed = 2 * sum(1 for text in sample if text.count("\t") >= _TABBED_FIELDS) >= len(sample)
    tokenized = [tokens for tokens in (_tokens(text, tabbed) for text in sample) if tokens]
    if not tokenized:
        return None
    shapes = Counter(tuple(token.shape for token in tokens) for tokens in tokenized)
    # the most common shape of line that holds a client, a time and a request (the sample may
    # start with other lines: a banner, a few of another writer's)
    for shape, _ in shapes.most_common(_SHAPES_TRIED):
        rows = [tokens for tokens in tokenized if tuple(token.shape for token in tokens) == shape]
        columns = [[row[index].value for row in rows] for index in range(len(shape))]
        fields = _text_fields(shape, columns, tabbed)
        found = set(fields.values())
        if {"ts", "client_ip"} <= found and ("request" in found or {"method", "target"} <= found):
            return _spec(shape, columns, fields)
    return None


def _spec(shape: Sequence[tuple[str, str, str]], columns: Sequence[Sequence[str]], fields: Mapping[int, str]) -> str:
    """The format string of a shape of line: each place its field's directive, or skipped, between
    the blanks, keys, quotes and brackets the lines write."""
    pieces = []
    for index, ((before, key, wrap), values) in enumerate(zip(shape, columns)):
        pieces.append(before + _literal(key))
        close = "]" if wrap.startswith("[") else ")" if wrap.startswith("(") else wrap
        if wrap == "( ":
            wrap = f"({_skipped(f'field{index + 1}_word', index)} "
        field = fields.get(index)
        if field == "ts":
            time = _column_time(values, wrap == "[")
            if time.directive == "%t":
                pieces.append(time.directive)
                continue
            pieces.append(wrap + time.directive + time.rest + close)
        elif field is not None:
            pieces.append(wrap + _DIRECTIVES[field] + close)
        else:
            # even a value the sample always writes alike may differ on other lines: matched, not required
            pieces.append(wrap + _skipped(key, index) + close)
    spec = "".join(pieces)
    if spec.startswith('"') and spec.endswith('"'):
        # a LogFormat between quotes is read as the text inside them: quote it as Apache would
        spec = '"' + spec.replace('"', '\\"') + '"'
    return "apache:" + spec


_DIRECTIVES = MappingProxyType({
    "client_ip": "%h", "request": "%r", "method": "%m", "target": "%U%q", "status": "%>s", "size": "%b",
    "user_agent": "%{User-Agent}i", "referer": "%{Referer}i", "host": "%{Host}i",
    "forwarded_for": "%{X-Forwarded-For}i",
})


def _literal(text: str) -> str:
    return text.replace("%", "%%")


def _skipped(key: str, index: int) -> str:
    """A value the audit does not use: an environment-variable directive, which is matched and
    skipped, named after its key or its place."""
    name = re.sub(r"[^\w.\-]", "", key.rstrip("=")) or f"field{index + 1}"
    return f"%{{{name}}}e"


def _share(values: Sequence[str], form: Callable[[str], bool], allow_absent: bool = True) -> float:
    """The share of the values (those present, when `allow_absent`) that have `form`."""
    present = [value for value in values if not (allow_absent and _absent(value))]
    if not present:
        return 0.0
    return sum(1 for value in present if form(value)) / len(present)


def _text_fields(shape: Sequence[tuple[str, str, str]], columns: Sequence[Sequence[str]], tabbed: bool) -> dict[int, str]:
    """Place in the line -> our field, for the places whose values say what they are (`tabbed`: the
    places are a tab-separated file's fields, which may hold blanks as a quoted value does)."""
    fields: dict[int, str] = {}
    keys = [key.rstrip("=") or wrap[1:].strip() for _, key, wrap in shape]
    wraps = [wrap for _, _, wrap in shape]

    def free() -> Iterator[int]:
        return (index for index in range(len(columns)) if index not in fields)

    def take(field: str, form: Callable[[str], bool], after: int = -1, quoted_only: bool = False,
             allow_absent: bool = True, named_only: bool = False) -> int | None:
        """The place a key names, else the first whose values have the form, those after `after`
        first (a status follows the request, a size the status)."""
        candidates = [index for index in free() if not quoted_only or wraps[index] == '"']
        for index in candidates:
            if _key_says(keys[index], field) and _share(columns[index], form, allow_absent) >= _MOST:
                fields[index] = field
                return index
        in_order = sorted(candidates, key=lambda index: index <= after)
        for index in () if named_only else in_order:
            if not (keys[index] and _claimed_elsewhere(keys[index], field)) \
                    and _share(columns[index], form, allow_absent) >= _MOST:
                fields[index] = field
                return index
        return None

    for index in free():
        if _column_time(columns[index], wraps[index] == "[") is not None:
            fields[index] = "ts"
            break
    request = take("request", lambda value: _REQUEST.match(value) is not None and value.split()[0] in _METHODS,
                   quoted_only=True)
    if request is None:
        method = take("method", lambda value: value in _METHODS, allow_absent=False)
        request = take("target", lambda value: _TARGET.match(value) is not None,
                       after=-1 if method is None else method, allow_absent=False)
    # a place a key names as forwarded-for may hold one address; an unnamed one is told by its lists
    forwarded = take("forwarded_for", lambda value: _address(value) or _address_list(value), named_only=True)
    for index in () if forwarded is not None else list(free()):
        present = [value for value in columns[index] if not _absent(value)]
        if any(map(_address_list, present)) and all(_address(value) or _address_list(value) for value in present):
            fields[index] = "forwarded_for"
            forwarded = index
            break
    client = take("client_ip", _address, named_only=True)
    if client is None:
        client = _client_place([index for index in free() if not keys[index]], columns)
        if client is not None:
            fields[client] = "client_ip"
    if client is None and forwarded is not None and all(_address(value) for value in columns[forwarded]):
        # the forwarded-for place only ever holds one address: the client, as the proxy saw it
        fields[forwarded] = "client_ip"
    # a proxy writes 0 for a request that got no answer (Envoy, load balancers): not against a status
    zeros = []
    while True:
        status = take("status", lambda value: _STATUS.match(value) is not None or value in ("0", "000"),
                      after=-1 if request is None else request)
        if status is None or any(_STATUS.match(value) for value in columns[status]):
            break
        zeros.append(status)  # nothing but zeros: a count, not a status; looked past
    for index in zeros:
        del fields[index]
    take("size", lambda value: _INTEGER.match(value) is not None, after=status if status is not None else -1)
    take("user_agent", _user_agent, quoted_only=not tabbed and not any(_key_says(key, "user_agent") for key in keys))
    take("referer", lambda value: _URL.match(value) is not None)
    if take("host", lambda value: _HOST.match(value) is not None and not _address(value), allow_absent=False) is None:
        # else a place of names and addresses with ports, some of them names: a mesh's authority
        for index in free():
            present = [value for value in columns[index] if not _absent(value)]
            if present and not all(map(_address, present)) and _share(present, lambda value: _address(value) or (
                    _SERVICE_HOST.match(value) is not None and ":" in value) or _HOST.match(value) is not None) >= _MOST:
                fields[index] = "host"
                break
    return fields


def _client_place(places: Sequence[int], columns: Sequence[Sequence[str]]) -> int | None:
    """Of the places that hold addresses on at least half the lines, the client's: one whose
    addresses carry no port or ports that change (a client's own) before one whose addresses mostly
    share a port or include a loopback address (a server's, a proxy's upstream); then the one
    written on the most lines; then the first."""
    found = []
    for index in places:
        present = [value for value in columns[index] if not _absent(value)]
        if 2 * len(present) < len(columns[index]) or _share(present, _address) < _MOST:
            continue
        port, count = Counter(map(_port, present)).most_common(1)[0]
        loopback = any(address.is_loopback for address in map(parse_ip, present) if address is not None)
        server_like = loopback or (port is not None and len(present) > 1 and count >= _MOST * len(present))
        found.append((server_like, -len(present), index))
    return min(found)[2] if found else None


def _claimed_elsewhere(key: str, field: str) -> bool:
    """A `key=` that names another field than `field`: its value is that field's, whatever it looks like."""
    return any(_key_says(key, other) for other in _KEY_HINTS if other != field)


# ------------------------------------------------------------------ JSON lines


def _json_object(text: str) -> dict | None:
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > _LONGEST_LINE:
        return None
    try:
        found = loads_logged(stripped)
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


# How deep into a JSON line fields are looked for, and how many items of a list: deeper than any
# writer nests its fields, and a line built to be deep costs no more than this.
_DEPTH = 12
_LIST_ITEMS = 4


def _leaves(value: Any, steps: tuple[str, ...] = (), depth: int = 0) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every value at any depth with the keys that lead to it; a list's first items by their index."""
    if depth > _DEPTH:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*steps, key), depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value[:_LIST_ITEMS]):
            yield from _leaves(inner, (*steps, str(index)), depth + 1)
    else:
        yield steps, value


_PLAIN_KEY = re.compile(r'[^.|\["][^.|]*\Z')


def _path(steps: tuple[str, ...]) -> str | None:
    """Keys as a field map names them: dotted, a key that holds a dot or a `|` in brackets (Zeek's
    `[id.orig_h]`), or in double quotes when it holds a `]`; None when a key can be written neither way."""
    written = []
    for key in steps:
        if _PLAIN_KEY.match(key):
            written.append(key)
        elif key and "]" not in key:
            written.append(f"[{key}]")
        elif key and '"' not in key:
            written.append(f'"{key}"')
        else:
            return None
    return ".".join(written)


def _as_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


# our field -> the form its value takes, as text
_JSON_FORMS: Mapping[str, Callable[[str], bool]] = MappingProxyType({
    "ts": lambda value: _time_of(value, False) is not None or _EPOCH_NANOSECONDS.match(value) is not None,
    "request": lambda value: _REQUEST.match(value) is not None and value.split()[0] in _METHODS,
    "method": lambda value: value in _METHODS,
    "target": lambda value: _TARGET.match(value) is not None,
    "forwarded_for": lambda value: _address(value) or _address_list(value),
    "client_ip": _address,
    "status": lambda value: _STATUS.match(value) is not None,
    "size": lambda value: _INTEGER.match(value) is not None,
    "user_agent": _user_agent,
    "referer": lambda value: _URL.match(value) is not None,
    "host": lambda value: _HOST.match(value) is not None or _SERVICE_HOST.match(value) is not None or _address(value),
})


def _json_mapping(objects: Sequence[dict]) -> dict[str, str]:
    """Our field -> the dotted path of the JSON values that hold it."""
    values: dict[str, list[str]] = {}  # path as a field map writes it -> its values as text
    names: dict[str, str] = {}  # path -> its keys joined by dots, whose words say what it holds
    parents: dict[str, tuple[str, ...]] = {}  # path -> the object holding it
    for found in objects:
        for steps, value in _leaves(found):
            text, path = _as_text(value), _path(steps)
            if text is not None and path is not None:
                values.setdefault(path, []).append(text)
                names[path] = ".".join(steps)
                parents[path] = steps[:-1]
    # a path present in few lines is not the layout's
    paths = [path for path, texts in values.items() if 2 * len(texts) > len(objects)]
    mapping: dict[str, str] = {}
    for field in ("ts", "request", "method", "target", "forwarded_for", "client_ip", "status", "size",
                  "user_agent", "referer", "host"):
        form = _JSON_FORMS[field]
        free = [path for path in paths if path not in mapping.values() and _share(values[path], form) >= _MOST]
        ranked = sorted((path for path in free if _key_says(names[path], field)),
                        key=lambda path: _key_rank(names[path], field))
        named = [path for path in ranked if _key_rank(names[path], field) == _key_rank(names[ranked[0]], field)]
        if not named and field in ("ts", "method", "target", "client_ip", "status", "user_agent", "request"):
            named = [path for path in free if not _claimed_elsewhere(names[path], field)]
        if named:
            # the most lines covered, then the object that holds most of the request's fields found
            # so far (a platform's own `host` beside the request's `proxy.host`: the request's; the
            # time is left out, a platform stamps its envelope), then the shallowest path
            def kept(path: str) -> tuple[int, int, int]:
                siblings = sum(parents[chosen] == parents[path] for taken, chosen in mapping.items() if taken != "ts")
                return len(values[path]), siblings, -names[path].count(".")

            mapping[field] = max(named, key=kept)
    if "request" in mapping:
        # the method and target apart where both are logged, else the request line that holds both
        if {"method", "target"} <= set(mapping):
            del mapping["request"]
        else:
            mapping.pop("method", None)
            mapping.pop("target", None)
    return mapping
