"""A robots table's versions as one history per host (`matcher.history.table`), looked up by host
in any spelling."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from matcher.history import RobotsHistory, RobotsVersion

HOST = "example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
TOKENS = ("examplebot",)

ALLOW_ALL = "User-agent: *\nDisallow:\n"
BLOCK_PRIVATE = "User-agent: *\nDisallow: /private\n"


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def ok(when: datetime, body: str, host: str = HOST) -> RobotsVersion:
    return RobotsVersion(host, when, 200, body.encode())


def history(*versions: RobotsVersion, **settings: timedelta) -> RobotsHistory:
    return RobotsHistory(versions, **settings)


def judge(table: RobotsHistory, ts: datetime, path: str = "/private/a"):
    return table[HOST].judge(ts, TOKENS, path)


def test_host_is_compared_lower_case_without_trailing_dot() -> None:
    table = history(ok(T0, BLOCK_PRIVATE, host="Example.COM."))
    assert list(table) == [HOST]
    assert table["EXAMPLE.com"].versions[0].host == HOST
    assert table["Example.Com."].judge(day(1), TOKENS, "/private").decision == "disallowed"


def test_each_host_has_its_own_history() -> None:
    table = history(ok(T0, BLOCK_PRIVATE), ok(T0, ALLOW_ALL, host="other.example"))
    assert sorted(table) == [HOST, "other.example"]
    assert table["other.example"].judge(day(1), TOKENS, "/private").decision == "allowed"
    assert judge(table, day(1)).decision == "disallowed"


def test_the_table_is_a_mapping_of_its_hosts() -> None:
    table = history(ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), ok(T0, ALLOW_ALL, host="Other.Example"))
    assert len(table) == 2 and sorted(table) == [HOST, "other.example"]
    assert "OTHER.example." in table and "third.example" not in table
    assert [v.effective_from for v in table[HOST].versions] == [T0, day(1)]
    with pytest.raises(KeyError):
        table["third.example"]
    assert len(history()) == 0


def test_the_settings_reach_every_hosts_history() -> None:
    versions = (ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), ok(T0, ALLOW_ALL, host="other.example"),
                ok(day(1), BLOCK_PRIVATE, host="other.example"))
    soon_after = day(1) + timedelta(hours=1)
    for host in (HOST, "other.example"):
        assert history(*versions)[host].judge(soon_after, TOKENS, "/private").decision == "disallowed-within-grace"
        assert history(*versions, grace=timedelta(0))[host].judge(soon_after, TOKENS, "/private").decision == "disallowed"
