"""X-Robots-Tag header values and robots <meta> elements parsed into directives
(`matcher.directives.parser`): flags, values, bot sections, the date forms of `unavailable_after` as a
header carries them, and the lint of what cannot be used. Parsing never raises."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matcher.directives import Directive, Directives, parse_meta, parse_x_robots_tag, x_robots_tag_directives

GOOGLEBOT = ("googlebot",)
GOOGLEBOT_IMAGE = ("googlebot-image", "googlebot")
BINGBOT = ("bingbot",)


def header(*values: str, tokens: tuple[str, ...] = GOOGLEBOT) -> dict:
    return x_robots_tag_directives(values).effective(tokens)


def lint_codes(directives: Directives) -> list[str]:
    return [item.code for item in directives.lint]


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
