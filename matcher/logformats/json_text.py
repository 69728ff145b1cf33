"""JSON as servers write it to logs: bytes that are not always UTF-8.

A line is decoded with each undecodable byte written `\\xNN`, the form servers use themselves and
the one every log line keeps. Inside a JSON string that would be an escape JSON does not have, so
a byte such as nginx's `escape=json` writes raw (0x80 and above) would make the whole entry
unreadable. Here such a `\\xNN` is read as the four characters it shows, which keeps the byte
visible in the value and never fails the entry; `\\x` is no JSON escape, so no valid JSON changes.
"""
from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["json_bytes_text", "loads_logged"]

# a `\x` whose backslash is not itself escaped: preceded by an even number of backslashes
_BYTE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\x(?=[0-9a-fA-F]{2})")


def loads_logged(text: str) -> Any:
    """`json.loads` of a logged line, its undecodable bytes (`\\xNN`) read as text."""
    return json.loads(_bytes_as_text(text))


def json_bytes_text(data: bytes) -> str:
    """Bytes of JSON as text a JSONDecoder reads, each undecodable byte a `\\xNN` of the value."""
    return _bytes_as_text(data.decode("utf-8", "backslashreplace"))


def _bytes_as_text(text: str) -> str:
    return _BYTE_ESCAPE.sub(r"\1\\\\x", text) if "\\x" in text else text
