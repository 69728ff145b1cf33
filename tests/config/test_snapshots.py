"""The ranges folder (`config.snapshots.load_ranges`): dated snapshot files read into one index,
with every file it cannot use reported and skipped."""
from __future__ import annotations

from datetime import date

import pytest

from config.registry import default_registry
from config.snapshots import load_ranges
from helpers import REPO
from matcher.identity import verify

DATA_RANGES = REPO / "tests" / "data" / "ranges"
JAN, JUN = date(2026, 1, 1), date(2026, 6, 1)


def crawler(name: str):
    return default_registry().get(name)


def test_load_ranges_reads_the_folder_and_reports_what_it_skips():
    index = load_ranges(DATA_RANGES)
    assert index.sources == ("bingbot", "google-common-crawlers")
    assert [s.taken for s in index.snapshots("google-common-crawlers")] == [JAN, JUN]
    problems = "\n".join(index.problems)
    assert "latest.json: expected a file named YYYY-MM-DD.json" in problems
    assert "'not-a-source' is not a range source" in problems
    assert "'not-a-prefix'} is not an IP prefix" in problems  # its zero-width neighbour parsed
    assert len(index.problems) == 3
    assert verify(crawler("bingbot"), "203.0.113.9", JAN, index).status == "verified"
    assert verify(crawler("Googlebot"), "198.51.100.1", JUN, index).status == "verified"


def test_the_shipped_ranges_folder_is_empty_but_valid():
    index = load_ranges()
    assert index.sources == () and index.problems == ()


def test_a_missing_ranges_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="ranges folder not found"):
        load_ranges(tmp_path / "absent")


def test_an_invalid_json_file_is_reported(tmp_path):
    (tmp_path / "bingbot").mkdir()
    (tmp_path / "bingbot" / "2026-01-01.json").write_text("{not json", "utf-8")
    (tmp_path / "bingbot" / "2026-13-01.json").write_text("{}", "utf-8")
    index = load_ranges(tmp_path)
    assert index.sources == ()
    assert [p.split(": ", 1)[1][:14] for p in index.problems] == [
        "unreadable JSO", "expected a fil"
    ]


@pytest.mark.parametrize(("body", "why"), [
    (b'{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}], "n": ' + b"9" * 5000 + b"}", "an integer of 5,000 digits"),
    (b'{"prefixes": [], "pad": "' + b"x" * (8 * 1024 * 1024) + b'"}', "larger than 8 MiB"),
])
def test_a_range_or_key_file_past_the_bounds_is_skipped_and_the_others_read(tmp_path, body, why):
    good = (DATA_RANGES / "bingbot" / "2026-01-01.json").read_bytes()
    for folder in (tmp_path / "bingbot", tmp_path / "key-directories" / "openai"):
        folder.mkdir(parents=True)
        (folder / "2026-02-01.json").write_bytes(body)
    (tmp_path / "bingbot" / "2026-01-01.json").write_bytes(good)
    index = load_ranges(tmp_path)
    assert [s.taken for s in index.snapshots("bingbot")] == [JAN]
    assert len([p for p in index.problems if why in p and "2026-02-01.json: unreadable JSON" in p]) == 2
