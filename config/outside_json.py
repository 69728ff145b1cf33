"""JSON documents that come from outside (range files, key directories, their downloads), read
within bounds: at most MAX_DOCUMENT_BYTES, and integers of at most MAX_INTEGER_DIGITS digits.

Operators publish a few hundred kilobytes of prefixes or keys and no number longer than a
timestamp; a document past either bound is not one of theirs, and reading it whole (or turning a
5,000-digit number into an int) would only cost memory and time. The caller skips such a file and
says why; it never stops a run.
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["MAX_DOCUMENT_BYTES", "MAX_INTEGER_DIGITS", "OutsideJsonError", "parse_document", "read_document"]

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
MAX_INTEGER_DIGITS = 20


class OutsideJsonError(ValueError):
    """A document that is not JSON within the bounds, with why in one line."""


def read_document(path: Path) -> object:
    """The JSON document in the file at `path` (UTF-8, a BOM allowed); OutsideJsonError when it
    is larger than MAX_DOCUMENT_BYTES or not JSON within the bounds, OSError when unreadable."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_DOCUMENT_BYTES + 1)
    return parse_document(data)


def parse_document(data: bytes) -> object:
    """A JSON document from bytes (UTF-8, a BOM allowed), within the bounds."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise OutsideJsonError(f"larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    try:
        return json.loads(data.decode("utf-8-sig"), parse_int=_integer)
    except UnicodeDecodeError as error:
        raise OutsideJsonError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    except RecursionError:
        raise OutsideJsonError("not JSON (nested too deeply)") from None
    except OutsideJsonError:
        raise
    except ValueError as error:
        raise OutsideJsonError(f"not JSON ({error})") from None


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise OutsideJsonError(f"an integer of {len(text.lstrip('-')):,} digits (at most {MAX_INTEGER_DIGITS})")
    return int(text)
