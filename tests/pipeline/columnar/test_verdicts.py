"""The columnar audit against the per-line audit it stands for (`LineAuditor.audit_lines`, the
oracle): the same verdict rows, row for row, the same dead letters, not-requests and skipped lines,
the same referrals among the skipped, the same summary rows, on the bundled sample and on drawn logs; and the keys it decides once per are sound: two lines
that agree on a key get the same answer from the per-line audit."""
from __future__ import annotations

import dataclasses
import gzip
from bisect import bisect_left, bisect_right
from collections import Counter
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import BINGBOT, GOOGLEBOT, REPO, run_settings
from matcher import records
from matcher.audit import audit
from matcher.clientip import trusted_proxies
from matcher.history import HostHistory, RobotsVersion
from matcher.line_auditor import DEAD_LETTER, NOT_REQUEST, SKIPPED, VERDICT, LineAuditor, host_versions, robots_by_host
from matcher.logformats import parser_for
from matcher.logformats.text import TEXT_LAYOUTS
from matcher.reverse_dns import DnsAnswer, Lookup
from matcher.robots_fetches import FetchHistory
from matcher.summary import decisions_per_crawler, summary_row
from pipeline.columnar.summary import summary_counts
from pipeline.columnar.verdicts import BlockAuditor
from pipeline.evidence.robots_table import read_robots_table
from pipeline.graph import build as graph
from pipeline.tables.schema import arrow_schema

SAMPLES = REPO / "samples"
ROBOTS = str(SAMPLES / "robots" / "history.jsonl")
RANGES = str(SAMPLES / "ranges")
SAMPLE_FILES = sorted(str(path) for path in (SAMPLES / "logs").glob("*.log.gz"))
SAMPLE_ROBOTS = robots_by_host(read_robots_table(ROBOTS))
SCHEMA = arrow_schema(records.VERDICTS)
HOST = "www.example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def _auditor(log_format: str, **changes) -> LineAuditor:
    argv = [f"--logs={SAMPLES}", f"--log-format={log_format}", f"--robots={ROBOTS}", f"--ranges={RANGES}", "--out=unused"]
    return dataclasses.replace(graph.line_auditor(run_settings(argv)[0]), **changes)


AUDITORS = {name: _auditor(name) for name in ("host_combined", "vhost_combined", "combined", "combined_xrt", "common")}


def _fetches(auditor: LineAuditor, files: dict[str, list[str]], dns=None) -> dict:
    """The run's robots.txt fetches by key, read before the audit as a batch run reads them."""
    found: dict = {}
    for path, lines in files.items():
        for key, fetch in auditor.robots_fetches((path, 1, lines), dns):
            found.setdefault(key, []).append(fetch)
    return {key: FetchHistory(fetches) for key, fetches in found.items()}


def _outcome_by_line(auditor: LineAuditor, files: dict[str, list[str]], robots, dns=None, fetches=None):
    """The verdict rows, dead letters, not-requests, skipped lines, referrals (visits per
    `Referral`) and summary rows of the per-line audit."""
    verdicts, dead, not_requests, skipped, referrals, summary = [], [], Counter(), 0, Counter(), {}
    for path, lines in files.items():
        for kind, record in auditor.audit_lines(path, 1, lines, robots, dns, fetches):
            if kind == VERDICT:
                for key, counts in decisions_per_crawler([record]):
                    summary.setdefault(key, Counter()).update(counts)
                verdicts.append(records.shaper(records.VERDICTS)(record))
            elif kind == DEAD_LETTER:
                dead.append(record)
            elif kind == NOT_REQUEST:
                not_requests[record] += 1
            else:
                assert kind == SKIPPED
                skipped += 1
                if record is not None:
                    referrals[record] += 1
    rows = pa.Table.from_pylist(verdicts, schema=SCHEMA).to_pylist()
    return _sorted(rows), _sorted(dead), not_requests, skipped, referrals, _summary_rows(summary)


def _outcome_by_column(auditor: LineAuditor, files, robots, dns=None, fetches=None, block_lines: int = 2000):
    columnar = BlockAuditor(auditor)
    tables, dead, not_requests, skipped, referrals, summary = [], [], Counter(), 0, Counter(), {}
    for path, lines in files.items():
        for start in range(0, len(lines), block_lines):
            block = columnar.audit_block(path, 1 + start, lines[start:start + block_lines], robots, dns, fetches)
            assert block.verdicts.schema == SCHEMA
            tables.append(block.verdicts)
            dead += block.dead_letters
            not_requests.update(block.not_requests)
            skipped += block.skipped
            referrals.update(block.referrals)
            for key, counts in summary_counts(block.verdicts).items():
                summary.setdefault(key, Counter()).update(counts)
    rows = pa.concat_tables([SCHEMA.empty_table(), *tables]).to_pylist()
    return _sorted(rows), _sorted(dead), not_requests, skipped, referrals, _summary_rows(summary)


def _summary_rows(counts: dict) -> list[dict]:
    return sorted((summary_row(key, of_key) for key, of_key in counts.items()), key=repr)


def _sorted(rows: list[dict]) -> list[dict]:
    def line(row: dict) -> tuple[str, int]:
        path, _, number = row["source"].rpartition(":")
        return path, int(number)

    return sorted(rows, key=line)


@pytest.fixture(scope="module")
def sample_files() -> dict[str, list[str]]:
    with_errors = {}
    for path in SAMPLE_FILES:
        with gzip.open(path, "rb") as handle:
            with_errors[path] = [raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace") for raw in handle]
    return with_errors


@pytest.mark.parametrize(
    ("followed", "block_lines"), [(False, 100_000), (True, 700)], ids=["fixed-grace-whole-files", "fetches-followed-blocks"]
)
def test_the_sample_gets_the_per_line_tables_row_for_row(sample_files, followed, block_lines):
    auditor = AUDITORS["host_combined"]
    fetches = _fetches(auditor, sample_files) if followed else None
    by_line = _outcome_by_line(auditor, sample_files, SAMPLE_ROBOTS, None, fetches)
    by_column = _outcome_by_column(auditor, sample_files, SAMPLE_ROBOTS, None, fetches, block_lines)
    assert len(by_line[0]) > 4000 and by_line[1] and by_line[3] > 10_000 and len(by_line[5]) > 10
    # visits several operators referred, on both hosts and each day
    assert sum(by_line[4].values()) > 1000 and len(by_line[4]) > 20
    assert by_column == by_line


def test_the_columns_take_all_but_the_lines_that_need_the_parser(sample_files):
    columnar = BlockAuditor(AUDITORS["host_combined"])
    lines = sum(len(lines) for lines in sample_files.values())
    left = [columnar.audit_block(path, 1, lines, SAMPLE_ROBOTS) for path, lines in sample_files.items()]
    dead = sum(len(block.dead_letters) for block in left)
    # the dead letters, and a few lines with an escape or an absolute-form target
    assert dead <= sum(block.left for block in left) < dead + lines / 200


def test_every_sample_line_is_accounted_for(sample_files):
    columnar = BlockAuditor(AUDITORS["host_combined"])
    for path, lines in sample_files.items():
        block = columnar.audit_block(path, 1, lines, SAMPLE_ROBOTS)
        assert block.verdicts.num_rows + len(block.dead_letters) + len(block.not_requests) + block.skipped == len(lines)


FORMAT_SAMPLES = sorted((REPO / "tests" / "data" / "logformats").glob("*.log"))
TEXT_LAYOUT_SAMPLES = {"gandi", "icecast2", "ovh", "vhost_common"}  # varnishncsa's one line: an absolute URL


@pytest.mark.parametrize("sample", FORMAT_SAMPLES, ids=lambda path: path.stem)
def test_every_format_gets_the_per_line_tables_whichever_reads_it(sample):
    """`auto` finds each file's format; the Apache and nginx layouts are read in columns, every
    other format (presets, W3C, JSON) line by line, with the same rows either way."""
    auditor = _auditor("auto")
    files = {str(sample): sample.read_text("utf-8").splitlines()}
    by_column = _outcome_by_column(auditor, files, SAMPLE_ROBOTS)
    assert by_column == _outcome_by_line(auditor, files, SAMPLE_ROBOTS)
    left = BlockAuditor(auditor).audit_block(str(sample), 1, files[str(sample)], SAMPLE_ROBOTS).left
    if sample.stem in TEXT_LAYOUT_SAMPLES:
        assert left < len(files[str(sample)]) / 2
    elif sample.stem != "varnishncsa":
        assert left == len(files[str(sample)])


BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
# Referers and utm_source values of the registry's referrers (config/crawlers.yaml) and of nobody's
REFERERS = (
    "https://chatgpt.com/", "https://chat.openai.com/c/1", "https://www.perplexity.ai/search?q=a", "perplexity.com",
    "https://claude.ai/chat/2", "https://gemini.google.com/app", "https://www.google.co.uk/", "https://www.bing.com/search",
    "https://copilot.microsoft.com/", "https://duckduckgo.com/", "https://yandex.ru/", "https://CHATGPT.COM./",
    "https://notchatgpt.com/", "https://news.ycombinator.com/", "https://www.example.com/", "android-app://x", "-", "",
)
UTM_QUERIES = (
    "utm_source=chatgpt.com", "utm_source=Perplexity", "utm_source=claude&utm_medium=referral", "x=1&utm_source=gemini",
    "utm_source=www.bing.com", "utm_source=copilot.com", "utm_source=newsletter", "utm_source=", "utm_sourcex=chatgpt.com",
)


def _referred(line: str, stem: str, referer: str, query: str) -> str:
    """A line of a text layout's sample as a reader's browser sends it, with `referer` (if the
    layout logs Referers) and `query` in its target."""
    match = TEXT_LAYOUTS[stem].plain.match(line)
    if match is None:
        return line
    fields = {"target": match.group("target").partition("?")[0] + (f"?{query}" if query else "")}
    if line[match.start("referer") - 1:match.start("referer")] == '"':  # a layout that logs them
        fields |= {"referer": referer, "user_agent": BROWSER}
    for name in sorted(fields, key=match.start, reverse=True):
        line = line[:match.start(name)] + fields[name] + line[match.end(name):]
    return line


@pytest.mark.parametrize("stem", sorted(TEXT_LAYOUT_SAMPLES))
def test_every_text_layout_counts_the_visits_each_operator_referred(stem):
    """The lines of a text layout's sample with each Referer and utm_source: the visits among them
    (the lines that get no verdict) counted per host, operator, day and way, as the per-line audit
    counts them; a layout that logs no Referer still counts those of utm_source."""
    sample = (REPO / "tests" / "data" / "logformats" / f"{stem}.log").read_text("utf-8").splitlines()
    lines = [
        _referred(line, stem, referer, query)
        for line in sample for referer in REFERERS for query in ("", *UTM_QUERIES[(len(referer) % 3)::3])
    ]
    auditor, files = _auditor("auto"), {stem: lines}
    by_line = _outcome_by_line(auditor, files, SAMPLE_ROBOTS)
    assert {via for _, _, _, via in by_line[4]} == ({"utm_source"} if stem == "vhost_common" else {"referer", "utm_source"})
    assert _outcome_by_column(auditor, files, SAMPLE_ROBOTS, block_lines=37) == by_line
    assert BlockAuditor(auditor).audit_block(stem, 1, lines, SAMPLE_ROBOTS).left < len(lines) / 2


def test_a_block_holding_a_lone_surrogate_is_audited_line_by_line():
    # text handed over by a stream may hold one; Arrow's strings are UTF-8, which cannot
    lines = [
        f'{HOST} 66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "{GOOGLEBOT} \ud800"',
        f'{HOST} 66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /private/a HTTP/1.1" 200 1 "-" "{GOOGLEBOT}"',
        f'{HOST} 192.0.2.5 - - [02/Nov/2026:10:00:00 +0000] "GET /?utm_source=chatgpt.com HTTP/1.1" 200 1 "-" "{BROWSER}"',
    ]
    files, auditor = {"log": lines}, AUDITORS["host_combined"]
    block = BlockAuditor(auditor).audit_block("log", 1, lines, SAMPLE_ROBOTS)
    assert block.left == 3 and block.verdicts.num_rows == 2
    assert block.referrals == {(HOST, "OpenAI", "2026-11-02", "utm_source"): 1}
    assert _outcome_by_column(auditor, files, SAMPLE_ROBOTS) == _outcome_by_line(auditor, files, SAMPLE_ROBOTS)


# ------------------------------------------------------------------ drawn logs

BODIES = (
    "User-agent: *\nDisallow: /private\n",
    "User-agent: *\nDisallow:\n",
    "User-agent: googlebot\nDisallow: /\nCrawl-delay: 5\n\nUser-agent: *\nAllow: /private/open\nDisallow: /private\n",
    "User-agent: *\nDisallow: /\nContent-Signal: search=yes, ai-train=no\n",
)
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
AGENTS = (
    GOOGLEBOT, BINGBOT, GPTBOT, BINGBOT, "curl/8.5.0", "FooBot/1.0 (+http://foo.example/bot)", "-", "",
    BROWSER,
    r"Mozilla/5.0 \"quoted\" (compatible; Googlebot/2.1)", "Mozilla/5.0 (compatible; Googlebot/2.1; caf\u00e9)",
)
ADDRESSES = (
    "66.249.66.1", "66.249.66.40", "157.55.39.75", "207.46.13.51", "20.171.206.9", "192.0.2.10", "198.51.100.7",
    "2001:db8::1", "10.0.0.2", "unknown", "-",
)
PATHS = ("/", "/private/a", "/private/open/x", "/robots.txt", "/%72obots.txt", "/docs/?q=1", "/private")
HOSTS = (HOST, HOST, "WWW.EXAMPLE.COM:443", "other.example.org", "-")
STATUSES = ("200", "200", "304", "404", "429", "500", "503", "-")
DNS = {
    "66.249.66.40": DnsAnswer("66.249.66.40", Lookup(("crawl-66-249-66-40.googlebot.com",)),
                              (("crawl-66-249-66-40.googlebot.com", Lookup(("66.249.66.40",))),)),
    "198.51.100.7": DnsAnswer("198.51.100.7", Lookup(error="nxdomain")),
    "207.46.13.51": DnsAnswer("207.46.13.51", Lookup(error="servfail")),
}

version_rows = st.tuples(
    st.integers(-48, 5 * 24),  # hours after T0
    st.sampled_from([200, 200, 200, 404, 500, 503, None]),
    st.sampled_from(BODIES),
    st.none() | st.integers(1, 36),  # hours its change may have happened before it
)


def _versions(rows) -> list[RobotsVersion]:
    versions, previous = [], None
    for hours, status, body, unseen_for in sorted(rows):
        when = T0 + timedelta(hours=hours)
        seen = None if unseen_for is None or previous is None else max(previous, when - timedelta(hours=unseen_for))
        versions.append(RobotsVersion(HOST, when, status, body.encode() if status == 200 else None,
                                      None if seen == when else seen))
        previous = when
    return versions


def _rarely(draw, usual, *odd):
    """`usual`, or one in eight times one of `odd`: lines the columns leave to the parser."""
    return draw(st.sampled_from(odd)) if draw(st.integers(0, 7)) == 3 else usual


@st.composite
def log_lines(draw, log_format: str) -> str:
    when = T0 + timedelta(minutes=draw(st.integers(-3 * 24 * 60, 6 * 24 * 60)), seconds=draw(st.integers(0, 2)))
    zone = draw(st.sampled_from(("+0000", "+0100", "-0530")))
    time = _rarely(draw, when.strftime("%d/%b/%Y:%H:%M:%S ") + zone, "32/Nov/2026:01:00:00 +0100")
    target = draw(st.sampled_from(PATHS))
    if draw(st.booleans()):
        target += ("&" if "?" in target else "?") + draw(st.sampled_from(UTM_QUERIES))
    request = draw(st.sampled_from(("GET", "GET", "HEAD"))) + " " + target + " HTTP/1.1"
    request = _rarely(draw, request, "-", "GET http://www.example.com/private/x HTTP/1.1", r"GET /a\"b HTTP/1.1")
    address = draw(st.sampled_from((*ADDRESSES, *["10.0.0.2"] * 3)))  # a trusted proxy's, when proxies are on
    line = f'{address} - - [{time}] "{request}" {draw(st.sampled_from(STATUSES))} 512'
    if log_format != "common":
        referer = _rarely(draw, draw(st.sampled_from(REFERERS)), r"https://chatgpt.com/c/\"1\"", "https://gemini.google.com/\u00e9")
        line += f' "{referer}" "{draw(st.sampled_from(AGENTS))}"'
        if draw(st.booleans()):
            line += f' "{draw(st.sampled_from(("10.0.0.9", "66.249.66.1, 10.0.0.9", "-")))}"'
    if log_format == "combined_xrt":
        line += f' "{draw(st.sampled_from(("-", "noindex", "googlebot: nofollow, unavailable_after: 2026-11-03")))}"'
    if log_format in ("host_combined", "vhost_combined"):
        line = f"{draw(st.sampled_from(HOSTS))} {line}"
    return _rarely(draw, "", " ", "\ufeff") + line


@st.composite
def drawn_runs(draw):
    log_format = draw(st.sampled_from(sorted(AUDITORS)))
    files = {
        f"log-{index}": draw(st.lists(st.one_of(*[log_lines(log_format)] * 7, st.text(max_size=40)), max_size=40))
        for index in range(draw(st.integers(1, 2)))
    }
    return log_format, files


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    run=drawn_runs(),
    rows=st.lists(version_rows, min_size=1, max_size=5, unique_by=lambda row: row[0]),
    grace_hours=st.sampled_from([0, 1, 24]),
    limit_hours=st.sampled_from([0, 12, 30 * 24]),
    proxies=st.booleans(),
    truncate=st.booleans(),
    dns=st.sampled_from([None, DNS]),
    followed=st.booleans(),
    block_lines=st.integers(1, 50),
)
def test_drawn_logs_get_the_per_line_tables_row_for_row(
    run, rows, grace_hours, limit_hours, proxies, truncate, dns, followed, block_lines
):
    log_format, files = run
    auditor = dataclasses.replace(
        AUDITORS[log_format], default_host=HOST if log_format in ("combined", "combined_xrt", "common") else None,
        grace=timedelta(hours=grace_hours), error_limit=timedelta(hours=limit_hours),
        proxies=trusted_proxies(["10.0.0.0/8"] if proxies else []), truncate_addresses=truncate,
    )
    robots = {HOST: host_versions(_versions(rows))}
    fetches = _fetches(auditor, files, dns) if followed else None
    by_line = _outcome_by_line(auditor, files, robots, dns, fetches)
    assert _outcome_by_column(auditor, files, robots, dns, fetches, block_lines) == by_line


def test_a_crawler_that_held_errors_is_judged_by_how_long_it_held_them():
    """A verified crawler whose robots.txt fetch got a 503: its requests are disallowed for the
    error limit after that fetch, then judged by what it held before (here: none, a 404). The
    hourly requests of one path share every other key, so the limit alone splits them."""
    auditor = dataclasses.replace(AUDITORS["host_combined"], error_limit=timedelta(hours=12))
    robots = {HOST: host_versions([RobotsVersion(HOST, T0 - timedelta(days=5), 200, BODIES[0].encode())])}

    def line(when: datetime, path: str, status: int = 200) -> str:
        return f'{HOST} 66.249.66.1 - - [{when.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET {path} HTTP/1.1" {status} 1 "-" "{GOOGLEBOT}"'

    lines = [line(T0, "/robots.txt", 404), line(T0 + timedelta(hours=1), "/robots.txt", 503)]
    lines += [line(T0 + timedelta(hours=hours, minutes=30), "/private/a") for hours in range(1, 30)]
    files = {"log": lines}
    fetches = _fetches(auditor, files)
    by_line = _outcome_by_line(auditor, files, robots, None, fetches)
    assert [(row["decision"], row["reason"]) for row in by_line[0][2:]] == (
        [("disallowed", "rule")] * 12 + [("allowed", "fetched-robots-unavailable")] * 17
    )
    assert _outcome_by_column(auditor, files, robots, None, fetches) == by_line


def test_the_summary_counts_the_requests_that_conflict_with_a_usage_preference():
    auditor = AUDITORS["host_combined"]
    robots = {HOST: host_versions([RobotsVersion(HOST, T0 - timedelta(days=1), 200, BODIES[3].encode())])}
    lines = [
        f'{HOST} 20.171.206.9 - - [02/Nov/2026:10:0{n}:00 +0000] "GET /x{n} HTTP/1.1" 200 1 "-" "{agent}"'
        for n, agent in enumerate((GPTBOT, GPTBOT, GOOGLEBOT))
    ]
    by_line = _outcome_by_line(auditor, {"log": lines}, robots)
    assert sorted((row["crawler"], row["requests"], row["preference_conflicts"]) for row in by_line[5]) == [
        ("GPTBot", 2, 2), ("Googlebot", 1, 0)
    ]
    assert _outcome_by_column(auditor, {"log": lines}, robots) == by_line


# ------------------------------------------------------------------ the keys

IDENTITY_COLUMNS = ("client_ip", "crawler", "client_kind", "purpose", "operator", "tokens", "identity",
                    "identity_method", "identity_evidence", "honours_robots", "honours_crawl_delay")
DECISION_COLUMNS = tuple(
    column.name for column in records.VERDICTS[[c.name for c in records.VERDICTS].index("robots_version"):]
    if column.name != "unread_for_s"  # how long a change went unread: the one that follows the request's time
)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(version_rows, min_size=1, max_size=5, unique_by=lambda row: row[0]),
    agent=st.sampled_from(AGENTS),
    address=st.sampled_from(ADDRESSES),
    path=st.sampled_from(PATHS),
    first_minute=st.integers(-3 * 24 * 60, 6 * 24 * 60),
    place=st.floats(0, 1),
    statuses=st.tuples(st.sampled_from(STATUSES), st.sampled_from(STATUSES)),
)
def test_two_lines_that_agree_on_a_key_get_the_same_answer(rows, agent, address, path, first_minute, place, statuses):
    """Lines of one claim, address, host, path and span of the host's history, at different times
    and with different statuses: the per-line audit decides them alike, and identifies them alike
    on the same UTC day, as the columnar audit assumes when it decides each key once."""
    history = HostHistory(_versions(rows))
    points = history.turning_points()  # all on whole seconds, as logged times are
    first = T0 + timedelta(minutes=first_minute)
    before, through = bisect_left(points, first), bisect_right(points, first)
    second = first
    if before == through:  # strictly between two points (or outside them all): anywhere in there
        low = points[before - 1] + timedelta(seconds=1) if before else first - timedelta(days=2)
        high = points[before] - timedelta(seconds=1) if before < len(points) else first + timedelta(days=2)
        second = low + timedelta(seconds=int((high - low).total_seconds() * place))
    assert (bisect_left(points, second), bisect_right(points, second)) == (before, through)
    auditor, parse = AUDITORS["host_combined"], parser_for("host_combined")
    verdicts = [
        audit(parse(
            f'{HOST} {address} - - [{when.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET {path} HTTP/1.1" {status} 1 "-" "{agent}"'
        ), "log:1", auditor.registry, auditor.ranges, history)
        for when, status in zip((first, second), statuses)
    ]
    same_day = first.date() == second.date()
    if verdicts[0] is None or verdicts[1] is None:
        assert not same_day or verdicts == [None, None]
        return
    assert {name: verdicts[0][name] for name in DECISION_COLUMNS} == {name: verdicts[1][name] for name in DECISION_COLUMNS}
    if same_day:
        assert {name: verdicts[0][name] for name in IDENTITY_COLUMNS} == {name: verdicts[1][name] for name in IDENTITY_COLUMNS}
