"""Caches keyed by what log lines carry stay bounded however many distinct keys arrive."""
from __future__ import annotations

import gc
import gzip
import pickle
import tracemalloc
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.registry import load_registry
from helpers import BINGBOT, log_line
from matcher import ip_ranges
from matcher.agents import MAX_USER_AGENT, REMEMBERED_AGENT_CHARS, REMEMBERED_AGENTS
from matcher.bounded import BoundedCache, Lru
from matcher import addresses as address_texts
from matcher.addresses import ADDRESS_TEXT_LIMIT, REMEMBERED_ADDRESSES, parse_ip
from matcher.ip_ranges import build_range_index
from matcher.history import RobotsVersion
from pipeline.graph import stream_sources
from matcher.line_auditor import VERDICT, LineAuditor, host_versions


def test_a_bounded_cache_never_holds_more_than_its_limit():
    cache: BoundedCache[int, int] = BoundedCache(100)
    for key in range(10_000):
        cache[key] = key * 2
        assert cache[key] == key * 2
        assert len(cache) <= 100
    cache[9_999] = 0  # replacing a present key never empties the cache
    assert len(cache) == 100 and cache[9_998] == 19_996


def test_a_bounded_cache_bounds_the_text_of_its_keys():
    cache: BoundedCache[tuple, int] = BoundedCache(100, longest_key=8, key_chars=20)
    cache[(True, "x" * 9)] = 1  # longer than any key it keeps: not remembered
    assert cache == {}
    for number in range(4):
        cache[(True, f"{number}" * 6)] = number
    # the fourth key would have made 24 characters: the cache started afresh with it
    assert cache == {(True, "333333"): 3}
    cache[(True, "333333")] = 4  # replacing a key adds no text
    cache["12345678"] = 5
    assert len(cache) == 2


def test_a_bounded_cache_travels_empty_and_keeps_its_limit():
    cache: BoundedCache[str, int] = BoundedCache(3, longest_key=5, key_chars=9)
    cache["a"] = 1
    copy = pickle.loads(pickle.dumps(cache))
    assert (copy, copy.limit, copy.longest_key, copy.key_chars) == ({}, 3, 5, 9)
    with pytest.raises(ValueError):
        BoundedCache(0)


def test_an_lru_drops_the_least_recently_used_entry():
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # reading makes "a" the most recent
    cache.put("c", 3)
    assert (cache.get("b"), cache.get("a"), cache.get("c"), len(cache)) == (None, 1, 3, 2)
    cache.put("a", 10)  # writing a present key replaces it and keeps the size
    cache.put("d", 4)
    assert (cache.get("c"), cache.get("a"), cache.get("d")) == (None, 10, 4)
    with pytest.raises(ValueError, match="at least one entry"):
        Lru(0)


operations = st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(1, 99)), max_size=60)


@given(st.integers(1, 4), operations)
def test_an_lru_holds_what_a_list_in_order_of_use_holds(capacity, steps):
    # The reference: keys in order of use, most recent last, cut to the capacity from the front.
    cache: Lru[int, int] = Lru(capacity)
    order: list[int] = []
    values: dict[int, int] = {}
    for is_put, key, value in steps:
        if is_put:
            cache.put(key, value)
            values[key] = value
        else:
            expected = values.get(key) if key in order else None
            assert cache.get(key) == expected
            if expected is None:
                continue
        order = [k for k in order if k != key] + [key]
        order = order[-capacity:]
        assert len(cache) == len(order)
    assert {key: cache.get(key) for key in range(7)} == {key: values[key] if key in order else None for key in range(7)}


def test_the_range_index_remembers_a_bounded_number_of_request_days():
    document = {"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}]}
    index = build_range_index([("bingbot", date(2026, 1, 1), document)], {"bingbot": "Microsoft"})
    address = parse_ip("157.55.39.10")
    outside = parse_ip("198.51.100.1")
    # any log line picks its day: one request per day over sixty years from the snapshot on
    # (before it, no snapshot is in force)
    first = date(2026, 1, 1)
    for offset in range(0, 60 * 366):
        day = first + timedelta(days=offset)
        assert index.find_any(address, day).source == "bingbot"
        assert index.find_any(outside, day) is None
    assert len(index._by_day) <= ip_ranges._DAYS_KEPT
    # and the index still ships to a worker, its cache emptied
    shipped = pickle.loads(pickle.dumps(index))
    assert len(shipped._by_day) == 0
    assert shipped.find_any(address, date(2026, 6, 1)).source == "bingbot"


def test_a_refreshed_robots_table_keeps_one_parsed_history_per_host():
    registry = load_registry(None)
    ranges = build_range_index([], {})
    auditor = LineAuditor(
        log_format="host_combined", registry=registry, ranges=ranges, error_limit=timedelta(days=30), grace=timedelta(0)
    )
    line = log_line("example.com", "05/Nov/2026:12:00:00 +0000", "/p", BINGBOT, ip="198.51.100.7", size=5)
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    versions = []
    # a long streaming job: each reload of the table brings one more version of the host
    for reload in range(200):
        delay = reload + 1
        versions.append(RobotsVersion(
            "example.com", start + timedelta(minutes=reload), 200, f"User-agent: *\nCrawl-delay: {delay}\n".encode()
        ))
        ((kind, verdict),) = auditor.audit_lines("log", 1, [line], {"example.com": host_versions(versions)})
        assert kind == VERDICT and verdict["crawl_delay"] == float(delay)
    assert len(auditor._histories) == 1


def test_a_folder_poll_remembers_only_the_files_still_there(tmp_path: Path):
    poll = stream_sources.LogFolderPoll("host_combined", None, None)
    line = f'example.com 198.51.100.7 - - [05/Nov/2026:12:00:00 +0000] "GET /p HTTP/1.1" 200 5 "-" "{BINGBOT}"\n'
    pattern = str(tmp_path / "*.log.gz")
    # log rotation: each poll sees one new file and the previous one deleted
    for number in range(300):
        (tmp_path / f"{number:04d}.log.gz").write_bytes(gzip.compress(line.encode()))
        if number:
            (tmp_path / f"{number - 1:04d}.log.gz").unlink()
        (found,) = poll(pattern).outputs
        assert Path(found.value).name == f"{number:04d}.log.gz"
    assert len(poll._stamps) == 1


FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
# The budgets docs/architecture.md § Memory gives the caches of one worker.
HEADER_CACHES_BUDGET = 48 << 20
ADDRESS_CACHES_BUDGET = 96 << 20


def _remembered_bytes(auditor: LineAuditor, lines: list[str]) -> int:
    """What the auditor's caches hold more after auditing `lines` (traced Python memory)."""
    # Collected before each reading: what the caches hold, not the garbage a collection that
    # happens to come (or not) during the audit leaves, which the tests run before change.
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, len(lines), 500):
            for _ in auditor.audit_lines("log", start + 1, lines[start:start + 500], {}):
                pass
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _distinct_words(random: Random, length: int) -> str:
    """A header part of distinct words, as costly to remember as a header of `length` can be."""
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < length:
        words.append(f"w{random.getrandbits(40):x}")
    return " ".join(words)[:length]


def test_what_a_worker_remembers_of_the_lines_keeps_to_its_budget():
    """docs/architecture.md § Memory: however many distinct User-Agents and addresses a log
    carries, and however long, the caches keyed by them stay within their budgets."""
    registry = load_registry(None)
    # browsers from one crawler range: their answers depend on the day, the costliest to keep
    ranges = build_range_index([("bingbot", date(2026, 1, 1), {"prefixes": [{"ipv6Prefix": "2001:db8::/32"}]})], {"bingbot": "Microsoft"})
    stamp = "05/Nov/2026:12:00:00 +0000"

    # The reading of address texts is remembered process-wide: emptied, the measure starts from
    # the same cache whichever tests ran before in this process.
    address_texts._parse_ip.cache_clear()

    def warm_auditor() -> LineAuditor:
        auditor = LineAuditor(
            log_format="host_combined", registry=registry, ranges=ranges, error_limit=timedelta(days=30), grace=timedelta(0)
        )
        _remembered_bytes(auditor, [log_line("example.com", stamp, "/", BINGBOT, ip="192.0.2.1")])
        return auditor

    auditor = warm_auditor()
    random = Random(7)

    # A cache holds at most REMEMBERED_AGENTS headers, and REMEMBERED_AGENT_CHARS characters of
    # them: the most bytes are held by a full cache of headers of the average that allows, and
    # headers as long as are read hold at most as much per character.
    prefix = "Mozilla/5.0 (compatible; "
    def headers(length: int, count: int) -> list[str]:
        return [
            log_line("example.com", stamp, "/", prefix + _distinct_words(random, length - len(prefix) - 1) + ")")
            for _ in range(count)
        ]

    average = REMEMBERED_AGENT_CHARS // REMEMBERED_AGENTS
    per_header = _remembered_bytes(auditor, headers(average, 200)) / 200
    assert len(registry._scans) >= 200  # they were remembered
    assert per_header * REMEMBERED_AGENTS <= HEADER_CACHES_BUDGET
    per_char = _remembered_bytes(auditor, headers(MAX_USER_AGENT + 3_000, 40)) / (40 * MAX_USER_AGENT)
    assert per_char * REMEMBERED_AGENT_CHARS <= HEADER_CACHES_BUDGET
    # what is past the cut is never read, so never remembered
    assert max(map(len, registry._scans)) == MAX_USER_AGENT

    # the longest address text there is, each sent by a browser and by a claimed crawler
    def client(number: int) -> str:
        address = f"2001:db8:ffff:ffff:ffff:ffff:{number >> 16:04x}:{number & 0xFFFF:04x}"
        zone = f"%eth{number}".ljust(ADDRESS_TEXT_LIMIT - len(f"[{address}]:65535"), "z")
        return f"[{address}{zone}]:65535"

    assert len(client(0)) == ADDRESS_TEXT_LIMIT
    addresses = [
        log_line("example.com", stamp, "/", agent, ip=client(number))
        for number in range(3_000) for agent in (FIREFOX, BINGBOT)
    ]
    auditor = warm_auditor()
    per_address = _remembered_bytes(auditor, addresses) / (len(addresses) / 2)
    assert [len(cache) for cache in (*auditor._verdict_every_day, auditor._verdict_on_day)] == [3_000, 3_001, 3_000]
    # each of the four caches holds at most REMEMBERED_ADDRESSES entries, and a pair of lines
    # here added one entry to each of three and two readings of an address
    assert per_address * REMEMBERED_ADDRESSES <= ADDRESS_CACHES_BUDGET


CHANGE_DIRECTIONS_BUDGET = 512 << 10


def test_a_robots_change_remembers_its_directions_within_its_budget():
    """docs/architecture.md § Memory: a change keeps the direction of the paths asked of it up to
    its budget, however many distinct paths a log asks for and however long."""
    from matcher.changes import _REMEMBERED_DIRECTION_CHARS, _REMEMBERED_DIRECTIONS, host_changes

    start = datetime(2026, 11, 2, tzinfo=timezone.utc)
    versions = [
        RobotsVersion("example.com", start, 200, b"User-agent: *\nDisallow: /private\n"),
        RobotsVersion("example.com", start + timedelta(days=1), 200, b"User-agent: *\nDisallow: /\n"),
    ]
    random = Random(11)

    def filled(length: int, count: int) -> float:
        (change,) = host_changes(versions)
        change.direction(("gptbot",), True, "/")  # parsed before measuring
        paths = ["/" + _distinct_words(random, length - 1) for _ in range(count)]
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for path in paths:
            change.direction(("gptbot", "chatgpt-user"), True, path)
        held = tracemalloc.get_traced_memory()[1] - before  # at its fullest
        tracemalloc.stop()
        assert len(change._directions) <= _REMEMBERED_DIRECTIONS
        return held

    average = _REMEMBERED_DIRECTION_CHARS // _REMEMBERED_DIRECTIONS
    assert filled(average, _REMEMBERED_DIRECTIONS - 1) <= CHANGE_DIRECTIONS_BUDGET
    # paths longer than the average fill the characters first, and the cache empties
    assert filled(4 * average, 4 * _REMEMBERED_DIRECTIONS) <= CHANGE_DIRECTIONS_BUDGET
