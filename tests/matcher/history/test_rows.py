"""A robots-table row decoded into a version (`matcher.history.rows`), and the reason a bad row is
refused."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from matcher.history import RobotsTableError, RobotsVersion, version_from_row

HOST = "example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def test_row_becomes_a_version() -> None:
    row = {"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 200, "body": "x"}
    version = version_from_row(row, b"User-agent: *\n")
    assert version == RobotsVersion(HOST, T0, 200, b"User-agent: *\n")


def test_row_with_unreachable_status_has_no_status() -> None:
    row = {"host": HOST, "effective_from": "2026-11-02T10:00:00+01:00", "status": "unreachable"}
    version = version_from_row(row, None)
    assert (version.status, version.kind, version.effective_from) == (None, "error", T0)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"effective_from": "2026-11-02T09:00:00Z", "status": 503}, "missing 'host'"),
        ({"host": HOST, "status": 503}, "missing 'effective_from'"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00Z"}, "missing 'status'"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 503, "stauts": 1},
         "unknown field"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 200, "body": "",
          "body_file": "a.txt"}, "not both"),
        ({"host": 7, "effective_from": "2026-11-02T09:00:00Z", "status": 503}, "host"),
        ({"host": "", "effective_from": "2026-11-02T09:00:00Z", "status": 503}, "host"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00", "status": 503}, "offset"),
        ({"host": HOST, "effective_from": "yesterday", "status": 503}, "ISO 8601"),
        ({"host": HOST, "effective_from": 1793955600, "status": 503}, "timestamp string"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": "503"}, "integer"),
        ({"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 200}, "needs a body"),
    ],
)
def test_bad_rows_are_rejected_with_the_reason(row: dict[str, object], message: str) -> None:
    with pytest.raises(RobotsTableError, match=message):
        version_from_row(row, None)


def test_observed_before_is_read_from_a_table_row() -> None:
    row = {"host": HOST, "effective_from": "2026-11-04T09:00:00Z", "status": 404, "observed_before": "2026-11-03T09:00:00+00:00"}
    assert version_from_row(row, None).observed_before == day(1)
    with pytest.raises(RobotsTableError, match="observed_before is not an ISO 8601 timestamp"):
        version_from_row({**row, "observed_before": "yesterday"}, None)


def test_a_null_observed_before_is_an_exact_change_time() -> None:
    row = {"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 404, "observed_before": None}
    assert version_from_row(row, None).observed_before is None


@pytest.mark.parametrize("status", [True, 200.0, None, [200]])
def test_a_status_is_an_integer_or_the_word_unreachable(status) -> None:
    row = {"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": status}
    with pytest.raises(RobotsTableError, match='status must be an integer or "unreachable"'):
        version_from_row(row, b"")


def test_the_body_the_reader_resolved_is_the_versions_body() -> None:
    row = {"host": HOST, "effective_from": "2026-11-02T09:00:00Z", "status": 200, "body_file": "bodies/a.txt"}
    assert version_from_row(row, b"User-agent: *\nDisallow: /\n").body == b"User-agent: *\nDisallow: /\n"
