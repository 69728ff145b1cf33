"""One fetch outcome of a host's robots.txt (`matcher.history.versions`): what its status means, the
digest of its body, and what a version refuses to hold."""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from matcher.history import RobotsTableError, RobotsVersion

HOST = "example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def ok(when: datetime, body: str, host: str = HOST) -> RobotsVersion:
    return RobotsVersion(host, when, 200, body.encode())


def failed(when: datetime, status: int | None) -> RobotsVersion:
    return RobotsVersion(HOST, when, status)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (200, "ok"),
        (204, "ok"),
        (301, "unavailable"),
        (404, "unavailable"),
        (410, "unavailable"),
        (429, "error"),
        (500, "error"),
        (503, "error"),
        (None, "error"),
    ],
)
def test_kind_follows_status(status: int | None, kind: str) -> None:
    assert RobotsVersion(HOST, T0, status, b"").kind == kind


def test_sha256_is_of_the_body_and_none_without_one() -> None:
    body = b"\xef\xbb\xbfUser-agent: *\n"
    assert RobotsVersion(HOST, T0, 200, body).sha256 == hashlib.sha256(body).hexdigest()
    assert failed(T0, 503).sha256 is None


def test_effective_from_is_stored_in_utc() -> None:
    paris = timezone(timedelta(hours=1))
    version = ok(datetime(2026, 11, 2, 10, 0, tzinfo=paris), "User-agent: *\nDisallow:\n")
    assert version.effective_from == T0
    assert version.effective_from.tzinfo == timezone.utc


def test_naive_effective_from_is_rejected() -> None:
    with pytest.raises(RobotsTableError, match="timezone-aware"):
        RobotsVersion(HOST, datetime(2026, 11, 2), 200, b"")


@pytest.mark.parametrize("status", [100, 199, 600, True, "200", 200.0])
def test_status_outside_http_range_is_rejected(status: object) -> None:
    with pytest.raises(RobotsTableError, match="status"):
        RobotsVersion(HOST, T0, status, b"")  # type: ignore[arg-type]


def test_ok_status_needs_a_body() -> None:
    with pytest.raises(RobotsTableError, match="needs a body"):
        RobotsVersion(HOST, T0, 200)


def test_the_host_is_kept_in_its_one_form_and_an_empty_one_is_refused() -> None:
    assert RobotsVersion("WWW.Example.COM.:443", T0, 404).host == "www.example.com"
    for host in ("", ".", 7):
        with pytest.raises(RobotsTableError, match="host must be a non-empty string"):
            RobotsVersion(host, T0, 404)  # type: ignore[arg-type]


def test_a_body_must_be_bytes() -> None:
    with pytest.raises(RobotsTableError, match="body must be bytes or None, got str"):
        RobotsVersion(HOST, T0, 200, "User-agent: *")  # type: ignore[arg-type]


def test_a_time_that_leaves_the_calendar_once_in_utc_is_refused() -> None:
    early = datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    with pytest.raises(RobotsTableError, match="effective_from: .* is outside 0001-01-01"):
        RobotsVersion(HOST, early, 404)


def test_observed_before_must_be_aware_and_is_stored_in_utc() -> None:
    with pytest.raises(RobotsTableError, match="observed_before must be a timezone-aware datetime"):
        RobotsVersion(HOST, T0, 404, observed_before=datetime(2026, 11, 1))
    seen = datetime(2026, 11, 1, 12, tzinfo=timezone(timedelta(hours=-5)))
    version = RobotsVersion(HOST, T0, 404, observed_before=seen)
    assert version.observed_before == seen and version.observed_before.tzinfo is timezone.utc
