"""The one format detector: every format scored on a sample, the best chosen only when it reads the sample clearly."""
from __future__ import annotations

import json

import pytest

from helpers import GOOGLEBOT
from matcher.logformats import FORMATS
from matcher.logformats.detect import SAMPLE_LINES, Candidate, chosen_format, detectable_formats, rank_formats

CLF = '66.249.66.1 - - [10/Oct/2026:20:55:36 +0000] "GET /a HTTP/1.1" 200 5'
COMBINED = f'{CLF} "-" "{GOOGLEBOT}"'
CLOUDFLARE = json.dumps({"EdgeStartTimestamp": 1791665736, "ClientIP": "66.249.66.1", "ClientRequestMethod": "GET",
                         "ClientRequestURI": "/a", "ClientRequestUserAgent": GOOGLEBOT})


def test_every_format_but_the_mapped_json_one_is_a_candidate():
    assert set(detectable_formats()) == set(FORMATS) - {"jsonl"}
    assert {c.name for c in rank_formats([COMBINED.encode()])} == set(detectable_formats())


@pytest.mark.parametrize(("line", "name"), [
    (COMBINED, "combined"),
    (CLF, "common"),
    (f"www.example.com {COMBINED}", "vhost_combined"),  # the first of the two that read it alike
    # a trailing quoted field reads as combined's X-Forwarded-For as well: combined_xrt is named, not guessed
    (f'{COMBINED} "noindex"', "combined"),
    (CLOUDFLARE, "cloudflare"),
    (f'www.example.com {CLF.replace("] ", "] (0 s) ")} "-" "{GOOGLEBOT}"', "gandi"),
    (f"{COMBINED} 3600", "icecast2"),
    (f"www.example.com {CLF}", "vhost_common"),
    # the host in the identd field's place: combined reads the line too, but without its host
    (COMBINED.replace(" - - ", " www.example.com - "), "lighttpd"),
    # varnishncsa's absolute URLs: combined reads them too, keeping their host as evidence only
    (COMBINED.replace(" /a ", " http://www.example.com/a "), "varnishncsa"),
])
def test_the_format_that_reads_the_lines_comes_first(line, name):
    ranked = rank_formats([line.encode()] * 10)
    assert ranked[0] == Candidate(name, 10, 10)
    assert chosen_format(ranked) == ranked[0]


def test_lines_with_no_request_count_as_read_blank_lines_not_at_all():
    lines = [COMBINED, "", "   ", CLF.replace('"GET /a HTTP/1.1"', '"-"').replace(" 200 ", " 408 ") + ' "-" "-"']
    best = rank_formats(lines)[0]
    assert (best.name, best.read, best.sample) == ("combined", 2, 2)


def test_nothing_is_chosen_when_no_format_reads_enough_of_the_sample():
    ranked = rank_formats([COMBINED, "garbage", "more garbage", "still garbage"])
    assert ranked[0] == Candidate("combined", 1, 4) and not ranked[0].reads_most()
    assert chosen_format(ranked) is None
    assert chosen_format(rank_formats([])) is None
    assert chosen_format(rank_formats(["garbage"] * 3)) is None


TRAEFIK = (f'{CLF.replace(" 5", " 512")} "-" "{GOOGLEBOT}" 1 "web@docker" "http://172.18.0.3:80" 3ms')
IIS_HEADERS = [
    "#Software: Microsoft Internet Information Services 10.0", "#Version: 1.0", "#Date: 2026-11-02 10:00:00",
    "#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer)"
    " sc-status sc-substatus sc-win32-status time-taken",
]
IIS = "2026-11-02 10:00:00 10.0.0.1 GET /a - 443 - 66.249.66.1 Mozilla/5.0+(compatible;+Googlebot/2.1) - 200 0 0 15"


def test_a_format_reading_half_the_lines_with_no_rival_is_taken_and_the_rest_left_to_dead_letters():
    chosen = chosen_format(rank_formats([TRAEFIK] * 4 + [f"garbled {n}" for n in range(4)]))
    assert chosen == Candidate("traefik", 4, 8)
    assert str(chosen) == "traefik (4 of 8 lines read, 50%)"


def test_header_lines_are_read_in_their_place_but_not_counted():
    lines = [*IIS_HEADERS, IIS, IIS, IIS, "2026-11-02 10:00:01 garbled"]
    chosen = chosen_format(rank_formats(lines))
    assert str(chosen) == "w3c (3 of 4 lines read, 75%)"
    # the #Fields: line still says how the lines after it read: a second one moves c-ip first
    moved = [*lines, "#Fields: c-ip date time cs-method cs-uri-stem", "66.249.66.1 2026-11-02 10:00:02 GET /b"]
    assert chosen_format(rank_formats(moved)) == Candidate("w3c", 4, 5)
    # a file of nothing but headers is judged on them
    assert chosen_format(rank_formats(IIS_HEADERS)).name == "w3c"


@pytest.mark.parametrize(("combined", "cloudflare", "garbage", "chosen"), [
    (6, 4, 0, "combined"),  # 60%: taken whatever the rest reads
    (5, 5, 0, None),  # a tie is no choice
    (4, 2, 4, "combined"),  # 40% and twice the runner-up
    (3, 2, 5, None),  # 30% but less than twice the runner-up
    (3, 0, 7, "combined"),  # 30% and no rival
    (2, 0, 8, None),  # under 30%
])
def test_the_best_is_taken_at_sixty_percent_or_at_thirty_and_twice_the_runner_up(combined, cloudflare, garbage, chosen):
    lines = [COMBINED] * combined + [CLOUDFLARE] * cloudflare + ["garbage"] * garbage
    best = chosen_format(rank_formats(lines))
    assert (best.name if best else None) == chosen


def test_a_format_reading_only_lines_the_best_reads_is_no_rival():
    # varnishncsa reads what combined reads, line for line: it does not halve combined's lead
    ranked = rank_formats([COMBINED] * 4 + ["garbage"] * 6)
    assert [(c.name, c.read) for c in ranked[:2]] == [("combined", 4), ("varnishncsa", 4)]
    assert chosen_format(ranked).name == "combined"


def test_of_formats_reading_as_many_lines_one_that_names_the_host_on_most_of_them_comes_first():
    lighttpd = COMBINED.replace(" - - ", " www.example.com - ")
    ranked = rank_formats([lighttpd] * 3 + [COMBINED])
    assert [(c.name, c.read, c.hosts) for c in ranked[:3]] == [("lighttpd", 4, 3), ("ovh", 4, 3), ("combined", 4, 0)]
    # an origin server's log with a few absolute-form targets (proxy probes) stays combined
    probe = COMBINED.replace(" /a ", " http://www.example.com/a ")
    assert chosen_format(rank_formats([COMBINED] * 3 + [probe] * 2)).name == "combined"
    # the same with an identd user on a few lines
    assert chosen_format(rank_formats([COMBINED] * 3 + [lighttpd] * 2)).name == "combined"


def test_a_mixed_file_goes_to_the_format_of_most_of_its_lines():
    ranked = rank_formats([COMBINED] * 3 + [CLOUDFLARE] * 2)
    assert (ranked[0].name, ranked[0].read) == ("combined", 3)
    assert next(c.read for c in ranked if c.name == "cloudflare") == 2
    assert str(ranked[0]) == "combined (3 of 5 lines read, 60%)"


def test_only_the_first_lines_are_sampled_and_bytes_are_decoded_as_the_pipeline_does():
    lines = [COMBINED.encode()] * SAMPLE_LINES + [b"\xff junk"] * 50
    assert rank_formats(lines)[0] == Candidate("combined", SAMPLE_LINES, SAMPLE_LINES)
    assert rank_formats([COMBINED.replace("/a", "/caf\xe9").encode("latin-1")])[0].read == 1


def test_the_formats_tried_can_be_narrowed():
    assert [c.name for c in rank_formats([COMBINED], ["gcp_lb", "combined"])] == ["combined", "gcp_lb"]
