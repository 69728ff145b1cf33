"""The one format detector: every format scored on a sample, the best chosen only when it reads most."""
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
    # OVH's host in the identd field's place reads as combined: ovh is named, not guessed
    (COMBINED.replace(" - - ", " www.example.com - "), "combined"),
])
def test_the_format_that_reads_the_lines_comes_first(line, name):
    ranked = rank_formats([line.encode()] * 10)
    assert ranked[0] == Candidate(name, 10, 10)
    assert chosen_format(ranked) == ranked[0]


def test_lines_with_no_request_count_as_read_blank_lines_not_at_all():
    lines = [COMBINED, "", "   ", CLF.replace('"GET /a HTTP/1.1"', '"-"').replace(" 200 ", " 408 ") + ' "-" "-"']
    best = rank_formats(lines)[0]
    assert (best.name, best.read, best.sample) == ("combined", 2, 2)


def test_nothing_is_chosen_when_no_format_reads_most_of_the_sample():
    ranked = rank_formats([COMBINED, "garbage", "more garbage"])
    assert ranked[0] == Candidate("combined", 1, 3) and not ranked[0].reads_most()
    assert chosen_format(ranked) is None
    assert chosen_format(rank_formats([])) is None


def test_a_mixed_file_goes_to_the_format_of_most_of_its_lines():
    ranked = rank_formats([COMBINED] * 3 + [CLOUDFLARE] * 2)
    assert (ranked[0].name, ranked[0].read) == ("combined", 3)
    assert next(c.read for c in ranked if c.name == "cloudflare") == 2
    assert str(ranked[0]) == "combined (3 of 5 sample lines)"


def test_only_the_first_lines_are_sampled_and_bytes_are_decoded_as_the_pipeline_does():
    lines = [COMBINED.encode()] * SAMPLE_LINES + [b"\xff junk"] * 50
    assert rank_formats(lines)[0] == Candidate("combined", SAMPLE_LINES, SAMPLE_LINES)
    assert rank_formats([COMBINED.replace("/a", "/caf\xe9").encode("latin-1")])[0].read == 1


def test_the_formats_tried_can_be_narrowed():
    assert [c.name for c in rank_formats([COMBINED], ["gcp_lb", "combined"])] == ["combined", "gcp_lb"]
