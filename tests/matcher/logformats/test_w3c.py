"""W3C extended logs (`matcher.logformats.w3c`): the fields a `#Fields:` directive names, the
clocks a line may carry, how its values are separated, and where the target and host come from."""
from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from matcher.logformats import LogParseError, parser_for
from matcher.logformats.record import is_not_request

UTC = timezone.utc
GOOGLEBOT_IIS = "Mozilla/5.0+(compatible;+Googlebot/2.1;++http://www.google.com/bot.html)"


def _read(lines: list[str], **options) -> list:
    """What each line becomes: a record, or the reason it is none."""
    parse = parser_for("w3c", **options)
    out = []
    for line in lines:
        try:
            out.append(parse(line))
        except LogParseError as error:
            out.append(error.reason)
    return out


# IIS Advanced Logging writes the server's local clock as date-local and time-local.
ADVANCED = ("#Fields: date-local time-local s-computername cs-method cs-uri-stem cs-uri-query c-ip cs(User-Agent)"
            " cs(Host) sc-status")
ADVANCED_LINE = f"2026-11-02 11:00:00.250 WEB01 GET /a b=1 66.249.66.1 {GOOGLEBOT_IIS} www.example.com 200"


def test_a_local_date_and_time_are_read_in_the_log_timezone():
    _, record = _read([ADVANCED, ADVANCED_LINE], zone=ZoneInfo("Europe/Paris"))
    assert record.ts == datetime(2026, 11, 2, 10, 0, 0, 250000, tzinfo=UTC)
    assert (record.host, record.path, record.status) == ("www.example.com", "/a?b=1", 200)
    _, in_utc = _read([ADVANCED, ADVANCED_LINE])
    assert in_utc.ts == datetime(2026, 11, 2, 11, 0, 0, 250000, tzinfo=UTC)


def test_a_utc_date_and_time_win_over_the_local_ones():
    fields = "#Fields: date-utc time-utc date-local time-local c-ip cs-method cs-uri-stem sc-status"
    line = "2026-11-02 10:00:00 2026-11-02 05:00:00 66.249.66.1 GET /a 200"
    _, record = _read([fields, line], zone=ZoneInfo("America/New_York"))
    assert record.ts == datetime(2026, 11, 2, 10, tzinfo=UTC)
    _, plain = _read([fields.replace("date-utc time-utc", "date time"), line], zone=ZoneInfo("America/New_York"))
    assert plain.ts == record.ts


def test_a_line_without_any_date_and_time_is_refused():
    fields = "#Fields: date-local c-ip cs-method cs-uri-stem"
    assert _read([fields, "2026-11-02 66.249.66.1 GET /a"])[1] == "missing-field"


def test_values_may_be_separated_by_runs_of_spaces():
    fields = "#Fields:  date  time   c-ip  cs-method cs-uri-stem  sc-status cs(User-Agent)"
    padded = f"2026-11-02  10:00:00    66.249.66.1   GET  /a    200  {GOOGLEBOT_IIS}"
    quoted = '"2026-11-02"   "10:00:00"  "66.249.66.1" GET  "/a b"  200   "Googlebot 2.1"'
    _, record, with_quotes = _read([fields, padded, quoted])
    assert (record.ts, record.client_ip, record.path, record.status) == (
        datetime(2026, 11, 2, 10, tzinfo=UTC), "66.249.66.1", "/a", 200)
    assert (with_quotes.path, with_quotes.user_agent) == ("/a b", "Googlebot 2.1")
    # a run of spaces never stands for a value: too few values is still no line of these fields
    assert _read([fields, "2026-11-02  10:00:00  66.249.66.1 GET  /a  200"])[1] == "no-match"


def test_a_doubled_quote_inside_a_quoted_value_is_one_quote():
    fields = "#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent) sc-substatus"
    line = '2026-11-02 10:00:00 "66.249.66.1" GET /a 404 "Googlebot ""2.1""" " ""garbage"" w/ spaces "'
    _, record = _read([fields, line])
    assert (record.status, record.user_agent) == (404, 'Googlebot "2.1"')
    assert _read([fields, '2026-11-02 10:00:00 "66.249.66.1" GET /a 404 "Googlebot ""2.1 0'])[1] == "no-match"  # never closed


def test_a_bare_dash_for_the_client_reads_the_request_from_an_unnamed_client():
    # IIS Advanced Logging quotes the client on most lines and writes a bare - where it has none
    fields = "#Fields: date-local time-local cs-method cs-uri-stem c-ip cs(User-Agent) cs(Host) sc-status"
    lines = ['2012-08-15 17:00:00.363 GET /a "70.95.0.0" "Mozilla/5.0 (X11)" "www.example.com" 200',
             '2012-08-15 17:00:00.660 GET /b - "Mozilla/5.0 (X11)" "www.example.com" 301']
    _, quoted, bare = _read([fields, *lines])
    assert (quoted.client_ip, bare.client_ip) == ("70.95.0.0", "-")
    assert (bare.path, bare.status, bare.host) == ("/b", 301, "www.example.com")
    assert _read([fields.replace(" c-ip", ""), lines[1].replace(" - ", " ")])[1] == "missing-field"


def test_tab_separated_values_keep_their_spaces():
    fields = "#Fields: date time c-ip cs-method cs-uri-stem sc-status x-edge-location"
    _, record = _read([fields, "2026-11-02\t10:00:00\t66.249.66.1\tGET\t/a  b\t200\tX"])
    assert record.path == "/a  b"


@pytest.mark.parametrize("blank", ["", "   ", "\t", "\r\n"])
def test_a_blank_line_in_a_w3c_file_is_no_request_and_no_error(blank):
    fields = "#Fields: date time c-ip cs-method cs-uri-stem sc-status"
    line = "2026-11-02 10:00:00 66.249.66.1 GET /a 200"
    _, first, between, second = _read([fields, line, blank, line])
    assert between == "blank" and is_not_request(between)
    assert first == second and first.path == "/a"


@pytest.mark.parametrize(("fields", "values", "host", "path"), [
    # cs-uri: the whole URI, query included
    ("cs-uri", "/a?b=1", None, "/a?b=1"),
    ("cs-uri cs(Host)", "/a?b=1 www.example.com", "www.example.com", "/a?b=1"),
    # an absolute cs-uri the server wrote down names the host, unless a host field is logged
    ("cs-uri", "https://www.example.com/a?b=1", "www.example.com", "/a?b=1"),
    # Incapsula writes the query apart, after a cs-uri without its scheme
    ("cs-uri cs-uri-query", "www.example.com/page.php variable=test", "www.example.com", "/page.php?variable=test"),
    ("cs-uri cs-uri-query", "www.example.com/page.php -", "www.example.com", "/page.php"),
    ("cs-uri cs-uri-query", "https://www.example.com/a?b=1 b=1", "www.example.com", "/a?b=1"),
    ("cs-uri cs(Host)", "https://other.example/a www.example.com", "www.example.com", "/a"),
    # the stem and the query apart
    ("cs-uri-stem cs-uri-query", "/a b=1", None, "/a?b=1"),
    ("cs-uri-stem cs-uri-query", "/a -", None, "/a"),
    ("cs-uri-stem cs-uri-query cs(Host)", "/a b=1 www.example.com:8080", "www.example.com", "/a?b=1"),
    ("cs-uri-stem cs-uri-query cs-host", "/a b=1 WWW.Example.COM", "www.example.com", "/a?b=1"),
])
def test_the_target_and_host_from_each_uri_and_host_field(fields, values, host, path):
    _, record = _read([f"#Fields: date time c-ip cs-method {fields}", f"2026-11-02 10:00:00 66.249.66.1 GET {values}"])
    assert (record.host, record.path) == (host, path)


@pytest.mark.parametrize(("logged", "user_agent"), [
    (GOOGLEBOT_IIS, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
    ("FeedFetcher-Google;+(+http://www.google.com/feedfetcher.html)",
     "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)"),
    ("a+++b", "a ++b"),
    ("curl/8.5.0", "curl/8.5.0"),
])
def test_iis_writes_a_space_as_plus_and_a_plus_as_itself(logged, user_agent):
    fields = "#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent) cs(Referer)"
    _, record = _read([fields, f"2026-11-02 10:00:00 66.249.66.1 GET /a 200 {logged} {logged}"])
    assert (record.user_agent, record.referer) == (user_agent, user_agent)


def test_cloudfront_s_distribution_name_in_cs_host_is_never_the_site():
    fields = "#Fields: date time x-edge-location c-ip cs-method cs(Host) cs-uri-stem sc-status cs(User-Agent)"
    line = "2026-11-02\t10:00:00\tFRA56-P1\t66.249.66.1\tGET\td111111abcdef8.cloudfront.net\t/a\t200\tGooglebot/2.1"
    _, record = _read([fields, line], default_host="www.example.com")
    assert record.host == "www.example.com"
    _, with_header = _read([fields + " x-host-header", line + "\tshop.example.net"], default_host="www.example.com")
    assert with_header.host == "shop.example.net"
