"""The brute-force reference of the crawl-delay audit: sort each key's requests by time and compare
neighbours; and the verdicts the crawl-delay tests feed it."""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta, timezone

from matcher import crawl_delay
from matcher.crawl_delay import CrawlRequest

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
VERSION = {"effective_from": datetime(2026, 11, 1, tzinfo=timezone.utc), "status": "200", "sha256": "ab" * 32}
KEYS = [
    ("www.example.com", "bingbot", "Microsoft", "verified"),
    ("www.example.com", "bingbot", "Microsoft", "spoofed"),
    ("shop.example.net", "bingbot", "Microsoft", "verified"),
    ("www.example.com", "Googlebot", "Google", "verified"),
]


def verdict(key, seconds: float, delay: float | None, source: str | None = None) -> dict:
    host, crawler, operator, identity = key
    return {
        "ts": T0 + timedelta(seconds=seconds),
        "host": host,
        "crawler": crawler,
        "operator": operator,
        "identity": identity,
        "source": source or f"access.log:{seconds}",
        "crawl_delay": delay,
        "crawl_delay_line": None if delay is None else 7,
        "robots_version": VERSION,
        "honours_crawl_delay": crawler == "bingbot",
        "client_kind": "crawler",
        "status": 200,
        "retry_after": None,
    }


def request(seconds: float, delay: float | None = 10.0, source: str | None = None) -> CrawlRequest:
    return crawl_delay.request_of(verdict(KEYS[0], seconds, delay, source))


def brute_force(verdicts: list[dict], size: timedelta) -> tuple[list[tuple], list[tuple]]:
    """(violations, window rows) as tuples, from a plain sort per key."""
    by_key = defaultdict(list)
    for v in verdicts:
        by_key[crawl_delay.key_of(v)].append(v)
    violations, windows = [], {}
    for key, group in by_key.items():
        group.sort(key=lambda v: (v["ts"], v["source"]))
        for previous, current in zip([None] + group, group):
            gap = None if previous is None else (current["ts"] - previous["ts"]).total_seconds()
            late = gap is not None and current["crawl_delay"] is not None and gap < current["crawl_delay"]
            if late:
                violations.append((key, previous["ts"], current["ts"], gap, current["crawl_delay"]))
            start = crawl_delay.EPOCH + (current["ts"] - crawl_delay.EPOCH) // size * size
            requests, count, smallest, _ = windows.get((key, start), (0, 0, None, None))
            if gap is not None and (smallest is None or gap < smallest):
                smallest = gap
            windows[(key, start)] = (requests + 1, count + late, smallest, current["crawl_delay"])
    return violations, [(key, start, *row) for (key, start), row in windows.items()]


def violation_tuple(row: dict) -> tuple:
    key = (row["host"], row["crawler"], row["operator"], row["identity"])
    return key, row["prev_ts"], row["ts"], row["gap_s"], row["crawl_delay_s"]


def window_tuple(row: dict) -> tuple:
    key = (row["host"], row["crawler"], row["operator"], row["identity"])
    return key, row["window_start"], row["requests"], row["violations"], row["min_gap_s"], row["crawl_delay_s"]
