"""The converters every command's flags share: argparse `type=` functions that turn the text of a
flag into its value, or refuse it with a message that names what was expected."""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from datetime import datetime, timedelta

from matcher.clientip import TrustedProxies, trusted_proxies
from matcher.health import CHECKS
from matcher.timerange import OutOfRange, in_span, parse_duration, parse_moment

def number(kind: type, minimum: float, *, above: bool = False) -> Callable[[str], float | int]:
    """A number of `kind` of at least `minimum` (greater than it, with `above`)."""
    wanted = f"a number {'above' if above else 'of at least'} {minimum:g}"

    def convert(text: str) -> float | int:
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not math.isfinite(value) or value < minimum or (above and value == minimum):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return convert


def duration(text: str) -> timedelta:
    """`24h`, `90m`, `30d`, `45s`; a bare number is hours."""
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def moment(text: str) -> datetime:
    """An ISO 8601 date or time, UTC when it names no offset; a date is its midnight. A time
    outside 1970..9999 once in UTC is refused: no log, capture or range file is dated there."""
    try:
        given = parse_moment(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date or time: {text!r} (try 2026-11-03 or 2026-11-03T10:00:00Z)"
        ) from None
    try:
        return in_span(given)
    except OutOfRange as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def json_object(text: str) -> dict:
    """A JSON object, such as a field map."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object ({...})")
    return value


def networks(text: str) -> TrustedProxies:
    """Comma-separated networks (CIDR) or addresses."""
    try:
        return trusted_proxies(spec for spec in text.split(",") if spec.strip())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def log_format(text: str) -> str:
    """`--log-format`: auto, a format name, `apache:`/`nginx:` and the server's format string, or
    `cloudfront_realtime:` and a field list, compiled here so that one that cannot work is refused
    at once."""
    from matcher.logformats import AUTO, FORMATS, PASTE_YOUR_FORMAT, parser_for

    if text == AUTO or text in FORMATS:
        return text
    kind, colon, _ = text.partition(":")
    envelope, plus, inner = text.partition("+")
    if not colon and not plus:
        raise argparse.ArgumentTypeError(
            f"unknown log format {text!r}: give {AUTO}, one of {', '.join(FORMATS)},"
            f" or cloudfront_realtime:FIELD,FIELD,...; or {PASTE_YOUR_FORMAT}"
        )
    try:
        parser_for(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def health_checks(text: str) -> frozenset[str]:
    """Comma-separated run-health checks, or `any` for all of them."""
    names = {name.strip() for name in text.split(",") if name.strip()}
    unknown = sorted(names - {*CHECKS, "any"})
    if unknown or not names:
        wrong = f"unknown check {unknown[0]!r}" if unknown else "no check named"
        raise argparse.ArgumentTypeError(f"{wrong}; the checks: {', '.join(CHECKS)}, or any")
    return frozenset(CHECKS) if "any" in names else frozenset(names)
