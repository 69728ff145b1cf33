"""The product token: the one name both a robots.txt group line and a crawler are known by.

A value's token is its leading run of ASCII letters, digits, `_`, `-` and `.`, lower-cased and
compared whole. The same function reads `User-agent:` lines and crawler names, so a name is never
cut on one side and kept whole on the other (`MJ12bot`, `archive.org_bot`, `360Spider`).
"""
from __future__ import annotations

import re

__all__ = ["product_token"]

_TOKEN = re.compile(r"[A-Za-z0-9_.-]*")


def product_token(value: str) -> str:
    """The lower-case leading token of `value`; empty when it starts with no token character."""
    return _TOKEN.match(value).group(0).lower()
