"""Text from logs and robots.txt files made safe to print on a terminal.

Anyone writes the User-Agent, the path and a robots.txt file, so they may carry ESC and BEL
(terminal escape sequences), C1 controls (0x9B is CSI on some terminals), DEL, line breaks that
forge report lines, bidirectional overrides that reorder what is shown, and lone surrogates that
cannot even be encoded. Every character that is not printable is written as its Python escape
(`\\x1b`, `\\u202e`), which a reader recognises and no terminal interprets.
"""
from __future__ import annotations

import json

__all__ = ["printable", "printable_json"]


def printable(text: str) -> str:
    """`text` with every non-printable character (other than the space) escaped."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char == " " else _escape(char) for char in text)


def printable_json(value: object) -> str:
    """`value` as one line of JSON that keeps non-ASCII text readable yet escapes, as JSON
    `\\u` escapes, everything a terminal would act on."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isprintable():
        return text
    # JSON text outside strings is printable ASCII, so whatever is left to escape is inside one.
    return "".join(char if char.isprintable() or char == " " else _json_escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
