"""The page-directives table (`matcher.directives.page_table`): rows by host, normalized path and
time, the row in effect for a request, and the rows a table may not hold."""
from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone

import pytest

from matcher.directives import (
    PageDirectives,
    PageDirectivesError,
    PageDirectivesTable,
    page_directives_from_row,
)

HOST = "example.com"
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)


def page(when: datetime, path: str = "/report.pdf", headers: tuple[str, ...] = (), metas=()) -> PageDirectives:
    return PageDirectives(HOST, path, when, headers, tuple(metas))


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


def test_a_row_is_keyed_by_host_form_and_normalized_path_and_parses_both_sources():
    row = PageDirectives("WWW.Example.com:443", "/%7eu/a b?q=%2f", T0, ("noarchive",), (("googlebot", "noindex"),))
    assert row.key == ("www.example.com", "/~u/a%20b?q=%2F")
    assert row.directives.effective(("googlebot",)) == {"noarchive": True, "noindex": True}
    assert row.directives.effective(()) == {"noarchive": True}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"x_robots_tag": ["noindex"]}, "x_robots_tag must be a tuple of strings"),
        ({"x_robots_tag": (b"noindex",)}, "x_robots_tag must be a tuple of strings"),
        ({"meta_robots": (("robots",),)}, "meta_robots must be a tuple of"),
        ({"meta_robots": (("robots", 1),)}, "meta_robots must be a tuple of"),
        ({"effective_from": datetime(2026, 11, 1)}, "timezone-aware"),
        ({"path": ""}, "starting with '/'"),
    ],
)
def test_a_row_built_in_code_is_checked_like_a_table_row(changes, message):
    fields = {"host": HOST, "path": "/a", "effective_from": T0, **changes}
    with pytest.raises(PageDirectivesError, match=message):
        PageDirectives(**fields)


def test_a_meta_item_has_exactly_a_name_and_a_content():
    row = {"host": HOST, "path": "/", "effective_from": "2026-11-01T00:00:00Z",
           "meta_robots": [{"name": "robots", "content": "noindex", "http-equiv": "x"}]}
    with pytest.raises(PageDirectivesError, match="meta_robots item"):
        page_directives_from_row(row)


def test_each_page_has_its_own_rows():
    table = PageDirectivesTable([page(T0, "/a", ("noindex",)), page(T0 + TICK, "/b", ("nofollow",))])
    assert table.lookup(HOST, "/a", T0 + TICK).x_robots_tag == ("noindex",)
    assert table.lookup(HOST, "/b", T0) is None


def test_a_row_whose_time_leaves_the_calendar_once_in_utc_is_refused_as_a_row_error():
    early = datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    with pytest.raises(PageDirectivesError, match="effective_from: .* is outside 0001-01-01"):
        PageDirectives(HOST, "/", early)
