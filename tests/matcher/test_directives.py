"""Page-level directives: parsing, per-crawler resolution, the table and its reader."""
from __future__ import annotations

import bz2
import gzip
import json
import pickle
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matcher.directives import (
    Directive,
    Directives,
    PageDirectives,
    PageDirectivesError,
    PageDirectivesTable,
    combine,
    effective_indexing,
    indexing_unseen,
    noindex_unseen,
    page_directives_from_row,
    parse_meta,
    parse_x_robots_tag,
    unavailable_after_passed,
    x_robots_tag_directives,
)
from pipeline.evidence.page_directives import read_page_directives
from matcher.logformats import parser_for

GOOGLEBOT = ("googlebot",)
GOOGLEBOT_IMAGE = ("googlebot-image", "googlebot")
BINGBOT = ("bingbot",)
HOST = "example.com"
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)


def header(*values: str, tokens: tuple[str, ...] = GOOGLEBOT) -> dict:
    return x_robots_tag_directives(values).effective(tokens)


def lint_codes(directives: Directives) -> list[str]:
    return [item.code for item in directives.lint]


def page(when: datetime, path: str = "/report.pdf", headers: tuple[str, ...] = (), metas=()) -> PageDirectives:
    return PageDirectives(HOST, path, when, headers, tuple(metas))


# ------------------------------------------------------------------ header values


def test_flags_map_to_true_with_lower_case_names():
    assert header("NoIndex, NOFOLLOW , noarchive") == {"noarchive": True, "nofollow": True, "noindex": True}


@pytest.mark.parametrize(
    "flag",
    ["noindex", "nofollow", "noarchive", "nosnippet", "noimageindex", "notranslate", "indexifembedded", "nocache"],
)
def test_each_documented_flag_is_recognised(flag):
    parsed = parse_x_robots_tag(flag)
    assert parsed.effective(GOOGLEBOT) == {flag: True}
    assert parsed.lint == ()


def test_none_is_written_as_noindex_and_nofollow():
    assert header("none") == {"noindex": True, "nofollow": True}
    assert "none" not in header("NONE")


@pytest.mark.parametrize("value", ["all", "index", "follow", "index, follow", "ALL"])
def test_permissive_directives_restrict_nothing(value):
    assert header(value) == {}
    assert parse_x_robots_tag(value).lint == ()


def test_all_does_not_cancel_a_restriction():
    assert header("all, noindex") == {"noindex": True}
    assert header("all", "nofollow") == {"nofollow": True}


def test_valued_directives_map_to_their_value():
    assert header("max-snippet: 20, max-image-preview: LARGE, max-video-preview: -1") == {
        "max-image-preview": "large",
        "max-snippet": 20,
        "max-video-preview": -1,
    }


def test_valued_directive_without_space_after_colon():
    assert header("max-snippet:0") == {"max-snippet": 0}


def test_bot_prefix_applies_to_the_whole_header_value():
    value = "googlebot: noindex, nofollow"
    assert header(value, tokens=GOOGLEBOT) == {"noindex": True, "nofollow": True}
    assert header(value, tokens=BINGBOT) == {}


def test_bot_prefix_is_case_insensitive():
    assert header("GoogleBot: NOINDEX") == {"noindex": True}


def test_bot_prefix_before_a_valued_directive():
    # Two colons: the first ends a bot name (docs/semantics.md § Page directives).
    value = "googlebot: max-snippet: 20"
    assert header(value, tokens=GOOGLEBOT) == {"max-snippet": 20}
    assert header(value, tokens=BINGBOT) == {}
    assert parse_x_robots_tag(value).lint == ()


def test_a_directive_name_before_the_colon_is_never_a_bot():
    assert parse_x_robots_tag("unavailable_after: 25 Jun 2010 15:00:00 PST").items == (
        Directive("unavailable_after", datetime(2010, 6, 25, 23, tzinfo=timezone.utc), None),
    )
    assert parse_x_robots_tag("max-snippet: 20").items == (Directive("max-snippet", 20, None),)


def test_googlebot_only_noindex_does_not_apply_to_bingbot():
    assert header("googlebot: noindex", tokens=BINGBOT) == {}
    assert header("googlebot: noindex", tokens=GOOGLEBOT) == {"noindex": True}


def test_bot_specific_directive_applies_through_the_token_chain():
    assert header("googlebot: noindex", tokens=GOOGLEBOT_IMAGE) == {"noindex": True}
    assert header("googlebot-image: noimageindex", tokens=GOOGLEBOT_IMAGE) == {"noimageindex": True}
    assert header("googlebot-image: noimageindex", tokens=GOOGLEBOT) == {}


def test_generic_and_bot_specific_combine():
    assert header("noarchive", "googlebot: noindex", "otherbot: nofollow") == {"noarchive": True, "noindex": True}


def test_several_header_instances_combine():
    assert header("noarchive", "unavailable_after: 25 Jun 2010 15:00:00 PST") == {
        "noarchive": True,
        "unavailable_after": "2010-06-25T23:00:00Z",
    }


def test_a_later_bot_prefix_in_one_value_starts_a_new_section():
    # A server joining `X-Robots-Tag: noarchive` and `X-Robots-Tag: bingbot: noindex, nofollow`.
    value = "noarchive, bingbot: noindex, nofollow"
    assert header(value, tokens=GOOGLEBOT) == {"noarchive": True}
    assert header(value, tokens=BINGBOT) == {"noarchive": True, "noindex": True, "nofollow": True}


def test_header_instance_order_does_not_matter():
    values = ("googlebot: max-snippet: 50", "max-snippet: 10", "index")
    assert header(*values) == header(*reversed(values)) == {"max-snippet": 10}


# ------------------------------------------------------------------ conflicts


def test_noindex_wins_over_index():
    assert header("index", "noindex") == {"noindex": True}


def test_header_index_and_meta_noindex_resolve_to_noindex():
    row = page(T0, headers=("index, follow",), metas=[("robots", "noindex")])
    assert effective_indexing((), row, GOOGLEBOT) == {"noindex": True}


def test_smaller_max_snippet_wins():
    assert header("max-snippet: 50", "max-snippet: 20") == {"max-snippet": 20}
    assert header("max-snippet: 0, max-snippet: 20") == {"max-snippet": 0}


def test_minus_one_means_unlimited_so_any_limit_is_stricter():
    assert header("max-snippet: -1", "max-snippet: 300") == {"max-snippet": 300}
    assert header("max-video-preview: -1, max-video-preview: 0") == {"max-video-preview": 0}
    assert header("max-snippet: -1") == {"max-snippet": -1}


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [(("large", "standard"), "standard"), (("standard", "none"), "none"), (("large", "large"), "large")],
)
def test_smaller_image_preview_wins(sizes, expected):
    values = [f"max-image-preview: {size}" for size in sizes]
    assert header(*values) == header(*reversed(values)) == {"max-image-preview": expected}


def test_earlier_unavailable_after_wins():
    assert header(
        "unavailable_after: 2027-01-01T00:00:00Z", "googlebot: unavailable_after: 2026-12-01"
    ) == {"unavailable_after": "2026-12-01T00:00:00Z"}


def test_bot_specific_stricter_value_applies_only_to_that_bot():
    values = ("max-snippet: 100", "googlebot: max-snippet: 5")
    assert header(*values, tokens=GOOGLEBOT) == {"max-snippet": 5}
    assert header(*values, tokens=BINGBOT) == {"max-snippet": 100}


# ------------------------------------------------------------------ unavailable_after dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sunday, 25-Jun-17 15:00:00 GMT", "2017-06-25T15:00:00Z"),  # RFC 850
        ("25 Jun 2010 15:00:00 PST", "2010-06-25T23:00:00Z"),  # RFC 822
        ("Fri, 25 Jun 2010 15:00:00 EDT", "2010-06-25T19:00:00Z"),  # RFC 1123
        ("25 Jun 10 15:00 +0200", "2010-06-25T13:00:00Z"),  # RFC 822, two-digit year, no seconds
        ("23-Jul-2007 18:00:00 EST", "2007-07-23T23:00:00Z"),  # Google's 2007 announcement
        ("2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z"),  # ISO 8601
        ("2026-12-01T01:30:00+01:00", "2026-12-01T00:30:00Z"),
        ("2026-12-01T00:00:00.250Z", "2026-12-01T00:00:00.250000Z"),
        ("2026-12-01", "2026-12-01T00:00:00Z"),  # date only
        ("25 June 2010", "2010-06-25T00:00:00Z"),
        ("June 25, 2010 3:00 PM EST", "2010-06-25T20:00:00Z"),
        ("Wednesday, 1-Jan-70 00:00:00 GMT", "1970-01-01T00:00:00Z"),  # year pivot
    ],
)
def test_unavailable_after_formats(text, expected):
    parsed = parse_x_robots_tag(f"unavailable_after: {text}")
    assert parsed.effective(GOOGLEBOT) == {"unavailable_after": expected}
    assert parsed.lint == ()


def test_rfc_850_date_commas_do_not_split_the_header():
    value = "noarchive, unavailable_after: Sunday, 25-Jun-17 15:00:00 GMT, nosnippet"
    assert header(value) == {"noarchive": True, "nosnippet": True, "unavailable_after": "2017-06-25T15:00:00Z"}
    assert parse_x_robots_tag(value).lint == ()


def test_date_in_meta_content():
    parsed = parse_meta("GOOGLEBOT", "unavailable_after: 23-Jul-2007 18:00:00 EST")
    assert parsed.effective(GOOGLEBOT) == {"unavailable_after": "2007-07-23T23:00:00Z"}
    assert parsed.effective(BINGBOT) == {}


@pytest.mark.parametrize("text", ["2026-12-01T10:00", "Sun Jun 25 15:00:00 2017"])
def test_a_clock_time_without_zone_is_read_as_utc_and_reported(text):
    parsed = parse_x_robots_tag(f"unavailable_after: {text}")
    assert "unavailable_after" in parsed.effective(GOOGLEBOT)
    assert lint_codes(parsed) == ["assumed-utc"]


@pytest.mark.parametrize(
    "text",
    ["tomorrow", "32 Jun 2010", "2026-13-01", "25 Jun", "25 Jun 2010 25:00", "Jun Jul 2010 1", "0999-01-01", "2010"],
)
def test_unparseable_dates_are_reported_not_applied(text):
    parsed = parse_x_robots_tag(f"noindex, unavailable_after: {text}")
    assert parsed.effective(GOOGLEBOT) == {"noindex": True}
    assert lint_codes(parsed) == ["bad-date"]
    assert text in parsed.lint[0].raw


def test_date_at_the_end_of_the_calendar_does_not_overflow():
    parsed = parse_x_robots_tag("unavailable_after: 9999-12-31T23:00:00-05:00")
    assert parsed.effective(GOOGLEBOT) == {}
    assert lint_codes(parsed) == ["bad-date"]


# ------------------------------------------------------------------ meta elements


def test_meta_robots_addresses_every_crawler():
    parsed = parse_meta("Robots", "noindex")
    assert parsed.effective(GOOGLEBOT) == parsed.effective(BINGBOT) == parsed.effective(()) == {"noindex": True}


def test_meta_botname_addresses_that_bot_and_its_chain():
    parsed = parse_meta("googlebot", "nosnippet")
    assert parsed.effective(GOOGLEBOT_IMAGE) == {"nosnippet": True}
    assert parsed.effective(BINGBOT) == {}


def test_meta_content_has_no_bot_prefix():
    parsed = parse_meta("robots", "googlebot: noindex")
    assert parsed.effective(GOOGLEBOT) == {}
    assert lint_codes(parsed) == ["unknown-directive"]


def test_meta_without_a_name_is_reported():
    parsed = parse_meta("  ", "noindex")
    assert parsed.items == ()
    assert lint_codes(parsed) == ["bad-meta-name"]


# ------------------------------------------------------------------ garbage and lint


def test_unknown_directive_is_kept_for_lint_with_raw_text():
    parsed = parse_x_robots_tag("noindex, noindx, max-snipet: 5")
    assert parsed.effective(GOOGLEBOT) == {"noindex": True}
    assert [(item.code, item.raw) for item in parsed.lint] == [
        ("unknown-directive", "noindx"),
        ("unknown-directive", "max-snipet: 5"),
    ]
    assert parsed.lint[0].source == "X-Robots-Tag"


def test_directives_not_separated_by_commas_get_a_hint():
    parsed = parse_x_robots_tag("noindex; nofollow")
    assert parsed.effective(GOOGLEBOT) == {}
    assert "separated by commas" in parsed.lint[0].message


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("max-snippet: abc", "bad-number"),
        ("max-snippet: 2.5", "bad-number"),
        ("max-snippet: -2", "bad-number"),
        ("max-video-preview: 99999999999999999999", "bad-number"),
        ("max-image-preview: huge", "bad-value"),
        ("max-snippet", "missing-value"),
        ("unavailable_after:", "missing-value"),
        ("googlebot:", "empty-bot-section"),
    ],
)
def test_bad_values_are_reported_and_ignored(value, code):
    parsed = parse_x_robots_tag(value)
    assert parsed.effective(GOOGLEBOT) == {}
    assert lint_codes(parsed) == [code]


def test_flag_with_a_value_still_applies():
    parsed = parse_x_robots_tag("noindex: yes")
    assert parsed.effective(GOOGLEBOT) == {"noindex": True}
    assert lint_codes(parsed) == ["unexpected-value"]


def test_empty_items_are_skipped():
    parsed = parse_x_robots_tag(" , noindex,, ")
    assert parsed.effective(GOOGLEBOT) == {"noindex": True}
    assert parsed.lint == ()


_FRAGMENTS = st.sampled_from(
    ["noindex", "none", "all", "googlebot:", "bingbot: ", "max-snippet:", " -1", "20", "max-image-preview: ",
     "large", "unavailable_after: ", "Sunday", " 25-Jun-17", "15:00:00", "GMT", "2026-12-01T00:00:00Z", ":",
     ",", " ", "\x00", "é", "9999", "+2359", "pm", "ü:", "max-video-preview:"]
)


@given(st.text())
def test_parsing_arbitrary_text_never_raises(text):
    for parsed in (parse_x_robots_tag(text), parse_meta("robots", text), parse_meta(text, text)):
        assert isinstance(parsed.effective(GOOGLEBOT_IMAGE), dict)


@given(st.lists(_FRAGMENTS, max_size=12).map("".join))
def test_parsing_directive_like_text_never_raises(text):
    parsed = parse_x_robots_tag(text)
    result = parsed.effective(GOOGLEBOT)
    assert all(isinstance(key, str) and key == key.lower() for key in result)
    assert all(item.raw for item in parsed.lint)


@given(st.lists(st.lists(_FRAGMENTS, max_size=6).map("".join), max_size=4))
def test_combination_ignores_order_and_repetition(values):
    once = header(*values)
    assert header(*reversed(values)) == once
    assert header(*values, *values) == once


# ------------------------------------------------------------------ effective indexing per request


def test_no_source_is_none():
    assert effective_indexing((), None, GOOGLEBOT) is None
    assert effective_indexing(("", "  "), None, GOOGLEBOT) is None


def test_sources_that_restrict_nothing_give_an_empty_object():
    assert effective_indexing(("all",), None, GOOGLEBOT) == {}
    assert effective_indexing(("bingbot: noindex",), None, GOOGLEBOT) == {}
    assert effective_indexing((), page(T0), GOOGLEBOT) == {}


def test_log_header_and_table_row_combine():
    row = page(T0, headers=("max-snippet: 50",), metas=[("robots", "nofollow"), ("bingbot", "noarchive")])
    assert effective_indexing(("googlebot: max-snippet: 10",), row, GOOGLEBOT) == {"max-snippet": 10, "nofollow": True}
    assert effective_indexing(("googlebot: max-snippet: 10",), row, BINGBOT) == {
        "max-snippet": 50,
        "noarchive": True,
        "nofollow": True,
    }


def test_design_example_row():
    row = page_directives_from_row({
        "host": "example.com", "path": "/report.pdf", "effective_from": "2026-11-01T00:00:00Z",
        "x_robots_tag": ["noindex", "googlebot: max-snippet: 20"],
        "meta_robots": [{"name": "robots", "content": "nofollow"}, {"name": "bingbot", "content": "noarchive"}],
    })
    assert effective_indexing((), row, GOOGLEBOT) == {"max-snippet": 20, "noindex": True, "nofollow": True}
    assert effective_indexing((), row, BINGBOT) == {"noarchive": True, "noindex": True, "nofollow": True}
    assert effective_indexing((), row, ()) == {"noindex": True, "nofollow": True}


def test_combined_xrt_log_line_feeds_the_header_source():
    line = (
        '66.249.66.1 - - [01/Nov/2026:10:00:00 +0000] "GET /report.pdf HTTP/1.1" 200 512 "-" '
        '"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" "googlebot: noindex, nofollow"'
    )
    record = parser_for("combined_xrt")(line)
    assert effective_indexing(record.x_robots_tag, None, GOOGLEBOT) == {"noindex": True, "nofollow": True}
    assert effective_indexing(record.x_robots_tag, None, BINGBOT) == {}


def test_json_log_header_list_feeds_the_header_source():
    line = json.dumps({
        "EdgeStartTimestamp": "2026-11-01T10:00:00Z", "ClientIP": "66.249.66.1", "ClientRequestHost": HOST,
        "ClientRequestMethod": "GET", "ClientRequestURI": "/a", "EdgeResponseStatus": 200,
        "ClientRequestUserAgent": "Googlebot", "ResponseHeaders": {"x-robots-tag": ["noarchive", "googlebot: noindex"]},
    })
    record = parser_for("cloudflare")(line)
    assert effective_indexing(record.x_robots_tag, None, GOOGLEBOT) == {"noarchive": True, "noindex": True}


# ------------------------------------------------------------------ report helpers


@pytest.mark.parametrize(
    ("decision", "indexing", "unseen", "noindex"),
    [
        ("disallowed", {"noindex": True}, True, True),
        ("disallowed-within-grace", {"noindex": True}, True, True),
        ("disallowed", {"nosnippet": True}, True, False),
        ("disallowed", {}, True, False),
        ("disallowed", None, False, False),
        ("allowed", {"noindex": True}, False, False),
        ("unknown", {"noindex": True}, False, False),
    ],
)
def test_unseen_directives(decision, indexing, unseen, noindex):
    assert indexing_unseen(decision, indexing) is unseen
    assert noindex_unseen(decision, indexing) is noindex


def test_unavailable_after_passed_only_after_the_moment():
    indexing = header("unavailable_after: 2026-12-01T00:00:00Z")
    moment = datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert not unavailable_after_passed(indexing, moment - TICK)
    assert not unavailable_after_passed(indexing, moment)
    assert unavailable_after_passed(indexing, moment + TICK)
    assert not unavailable_after_passed({"noindex": True}, moment + TICK)
    assert not unavailable_after_passed(None, moment + TICK)


# ------------------------------------------------------------------ the table


def test_lookup_at_exact_boundaries():
    first, second = page(T0, headers=("noindex",)), page(T0 + timedelta(days=1), headers=("nofollow",))
    table = PageDirectivesTable([second, first])
    assert table.lookup(HOST, "/report.pdf", T0 - TICK) is None
    assert table.lookup(HOST, "/report.pdf", T0) == first
    assert table.lookup(HOST, "/report.pdf", second.effective_from - TICK) == first
    assert table.lookup(HOST, "/report.pdf", second.effective_from) == second
    assert table.lookup(HOST, "/report.pdf", T0 + timedelta(days=400)) == second


def test_lookup_compares_host_like_the_robots_history():
    table = PageDirectivesTable([page(T0)])
    assert table.lookup("EXAMPLE.com.", "/report.pdf", T0) is not None
    assert table.lookup("other.example", "/report.pdf", T0) is None
    assert table.lookup(None, "/report.pdf", T0) is None


def test_lookup_matches_the_normalized_path_exactly():
    table = PageDirectivesTable([page(T0, path="/%7euser/a%2fb?q=1")])
    assert table.lookup(HOST, "/~user/a%2Fb?q=1", T0) is not None
    assert table.lookup(HOST, "/~user/a/b?q=1", T0) is None  # %2F is not a slash
    assert table.lookup(HOST, "/~user/a%2Fb", T0) is None  # the query is part of the page
    assert table.lookup(HOST, "/~user/a%2Fb?q=1&r=2", T0) is None
    assert table.lookup(HOST, "/~user/", T0) is None  # never a prefix match


def test_lookup_needs_an_aware_time():
    with pytest.raises(ValueError):
        PageDirectivesTable([page(T0)]).lookup(HOST, "/report.pdf", datetime(2026, 11, 1))


def test_rows_keep_utc_and_host_key():
    row = page(datetime(2026, 11, 1, 1, tzinfo=timezone(timedelta(hours=1))))
    assert row.effective_from == T0
    assert PageDirectives("Example.COM.", "/", T0).host == HOST


def test_identical_duplicate_rows_are_one_and_conflicting_ones_are_rejected():
    table = PageDirectivesTable([page(T0, headers=("noindex",)), page(T0, headers=("noindex",))])
    assert table.lookup(HOST, "/report.pdf", T0) == page(T0, headers=("noindex",))
    with pytest.raises(PageDirectivesError, match="two different rows"):
        PageDirectivesTable([page(T0, headers=("noindex",)), page(T0, headers=("nofollow",))])


def test_table_pickles_for_workers():
    table = PageDirectivesTable([page(T0, headers=("noindex",))])
    copy = pickle.loads(pickle.dumps(table))
    assert copy.lookup(HOST, "/report.pdf", T0).directives.effective(()) == {"noindex": True}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"path": "/", "effective_from": "2026-11-01T00:00:00Z"}, "missing 'host'"),
        ({"host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00Z", "xrt": []}, "unknown field"),
        ({"host": HOST, "path": "report.pdf", "effective_from": "2026-11-01T00:00:00Z"}, "starting with '/'"),
        ({"host": HOST, "path": "/a#top", "effective_from": "2026-11-01T00:00:00Z"}, "fragment"),
        ({"host": "", "path": "/", "effective_from": "2026-11-01T00:00:00Z"}, "host"),
        ({"host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00"}, "Z or an offset"),
        ({"host": HOST, "path": "/", "effective_from": "2026-11-01"}, "Z or an offset"),
        ({"host": HOST, "path": "/", "effective_from": 1762000000}, "timestamp string"),
        ({"host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00Z", "x_robots_tag": "noindex"}, "list"),
        ({"host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00Z", "meta_robots": [{"name": "robots"}]},
         "meta_robots item"),
    ],
)
def test_malformed_rows_are_rejected(row, message):
    with pytest.raises(PageDirectivesError, match=message):
        page_directives_from_row(row)


def test_unusable_directives_in_a_row_are_lint_not_errors():
    row = page_directives_from_row({
        "host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00Z",
        "x_robots_tag": ["noindex, bogus"], "meta_robots": [{"name": "robots", "content": "max-snippet: x"}],
    })
    assert row.directives.effective(()) == {"noindex": True}
    assert [(item.code, item.source) for item in row.directives.lint] == [
        ("unknown-directive", "X-Robots-Tag"),
        ("bad-number", '<meta name="robots">'),
    ]


# ------------------------------------------------------------------ the reader


def _rows() -> list[dict]:
    return [
        {"host": HOST, "path": "/report.pdf", "effective_from": "2026-11-01T00:00:00Z",
         "x_robots_tag": ["noindex"], "meta_robots": []},
        {"host": HOST, "path": "/report.pdf", "effective_from": "2026-11-05T00:00:00Z"},
    ]


def test_reader_reads_json_lines(tmp_path):
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in _rows()) + "\n\n", encoding="utf-8")
    rows = read_page_directives(str(table))
    assert [row.effective_from for row in rows] == [T0, T0 + timedelta(days=4)]
    lookup = PageDirectivesTable(rows)
    assert effective_indexing((), lookup.lookup(HOST, "/report.pdf", T0 + timedelta(days=1)), ()) == {"noindex": True}
    assert effective_indexing((), lookup.lookup(HOST, "/report.pdf", T0 + timedelta(days=5)), ()) == {}


@pytest.mark.parametrize(("suffix", "opener"), [(".jsonl.gz", gzip.open), (".jsonl.bz2", bz2.open)])
def test_reader_reads_compressed_tables(tmp_path, suffix, opener):
    table = tmp_path / f"pages{suffix}"
    with opener(table, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps(row) for row in _rows()))
    assert len(read_page_directives(str(table))) == 2


def test_reader_keeps_line_separators_inside_strings(tmp_path):
    row = {**_rows()[0], "x_robots_tag": ["noindex\u2028"]}
    table = tmp_path / "pages.jsonl"
    table.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_page_directives(str(table))[0].x_robots_tag == ("noindex\u2028",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "pages.jsonl:2:"),
        ("[1, 2]", "pages.jsonl:2: a row must be a JSON object"),
        (json.dumps({"host": HOST, "path": "/", "effective_from": "soon"}), "pages.jsonl:2: effective_from"),
    ],
)
def test_reader_names_file_and_row_of_a_malformed_table(tmp_path, line, message):
    table = tmp_path / "pages.jsonl"
    table.write_text(json.dumps(_rows()[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(PageDirectivesError, match=message):
        read_page_directives(str(table))


def test_reader_reports_unusable_directives_with_file_and_row(tmp_path, capsys):
    rows = [_rows()[0], {**_rows()[1], "x_robots_tag": ["noindex, nosnipet"],
                         "meta_robots": [{"name": "robots", "content": "unavailable_after: soon"}]}]
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    read = read_page_directives(str(table))
    assert read[1].directives.effective(()) == {"noindex": True}
    assert capsys.readouterr().err.splitlines() == [
        f"crawl-audit: page directives: {table}:2: X-Robots-Tag 'nosnipet': unknown directive 'nosnipet'",
        f"crawl-audit: page directives: {table}:2: <meta name=\"robots\"> 'unavailable_after: soon':"
        " unavailable_after: not a date and time in a known format: 'soon'",
    ]


def test_reader_is_silent_about_a_clean_table(tmp_path, capsys):
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in _rows()) + "\n", encoding="utf-8")
    read_page_directives(str(table))
    assert capsys.readouterr().err == ""


def test_reader_reports_a_missing_file(tmp_path):
    with pytest.raises(PageDirectivesError, match="cannot read page-directives table"):
        read_page_directives(str(tmp_path / "absent.jsonl"))


def test_combine_keeps_every_part():
    parts = [parse_x_robots_tag("noindex"), parse_meta("robots", "bogus")]
    merged = combine(parts)
    assert merged.items == parts[0].items
    assert merged.lint == parts[1].lint
