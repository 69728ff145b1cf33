"""A block of log lines read into columns by RE2 (`pyarrow.compute.extract_regex`).

Only the lines a text layout's plain pattern reads as written are taken: no backslash anywhere
(nothing to unescape), an origin-form target, and a first character that is printable ASCII (no
blank, byte order mark or other character the parser strips first). The pattern is the parser's
own, translated to RE2: the same fields come out, so the same record follows. Every other line is
left to the parser, line by line.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from matcher.logformats import TextLayout

__all__ = ["PlainColumns", "re2_pattern", "read_plain"]

# Python's `\S` under re.ASCII; RE2's leaves out the vertical tab.
_NOT_SPACE = r"[^ \t\n\r\f\v]"
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# The first character of a line the parser takes as written (`fields.cleaned_line` strips blanks).
_PRINTABLE_START = r"^[!-~]"


@functools.lru_cache(maxsize=64)
def re2_pattern(python_pattern: str) -> str:
    r"""A pattern of Python's `re` (ASCII, no look-around, no back-references) as RE2 reads it
    alike, anchored at the start as `re.match` is: `\Z` is RE2's `\z`, and `\S` keeps Python's set
    of blanks."""
    def translated(escape: re.Match[str]) -> str:
        return {"Z": r"\z", "S": _NOT_SPACE}.get(escape.group(1), escape.group(0))

    return "^" + _ESCAPE.sub(translated, python_pattern)


@dataclass(frozen=True)
class PlainColumns:
    """The taken lines' fields as written (`fields`: one string child per group of the layout),
    and the offsets of the taken and the left lines within the block."""

    fields: pa.StructArray
    taken: np.ndarray
    left: np.ndarray

    def field(self, name: str) -> pa.Array:
        return self.fields.field(name)


def read_plain(lines: pa.Array, layout: TextLayout) -> PlainColumns:
    """The lines of `lines` that `layout.plain` reads with nothing to undo, split into fields."""
    matched = pc.extract_regex(lines, re2_pattern(layout.plain.pattern))
    readable = pc.and_(
        pc.is_valid(matched),
        pc.and_(pc.invert(pc.match_substring(lines, "\\")), pc.match_substring_regex(lines, _PRINTABLE_START)),
    )
    mask = readable.to_numpy(zero_copy_only=False)
    fields = matched.filter(readable)
    if isinstance(fields, pa.ChunkedArray):
        fields = fields.combine_chunks()
    return PlainColumns(fields, np.flatnonzero(mask), np.flatnonzero(~mask))
