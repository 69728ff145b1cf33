"""The parser `LineAuditor` reads each file with under `--log-format auto`: the format detected at
launch, the layout inferred for a file no preset reads, or, in a stream, the one its first batch is in."""
from __future__ import annotations

import json
from datetime import timedelta

from helpers import GOOGLEBOT
from matcher.agents import Registry
from matcher.ip_ranges import RangeIndex
from matcher.line_auditor import LineAuditor

ZEEK = [json.dumps({"ts": 1793613600.5 + n, "id.orig_h": f"66.249.66.{n}", "id.resp_h": "10.0.0.5", "method": "GET",
                    "host": "www.example.com", "uri": f"/{n}", "user_agent": GOOGLEBOT, "status_code": 200})
        for n in range(4)]
ENVOY = [f'[2026-11-02T10:00:0{n}.250Z] "GET /{n} HTTP/1.1" 200 - 0 512 3 2 "66.249.66.{n}" "{GOOGLEBOT}" '
         f'"cc21d9b0-cf5c-432b-8c7e-98aeb798800{n}" "www.example.com" "10.0.2.1:80"' for n in range(4)]
COMBINED = [f'66.249.66.{n} - - [02/Nov/2026:10:00:00 +0000] "GET /{n} HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"'
            for n in range(4)]


def _auditor(**options) -> LineAuditor:
    return LineAuditor(log_format="auto", registry=Registry((), {}), ranges=RangeIndex(()), error_limit=timedelta(days=1),
                       grace=timedelta(days=1), **options)


def test_a_streamed_file_no_preset_reads_is_read_in_the_layout_inferred_from_its_first_batch():
    auditor = _auditor()
    for path, lines in (("zeek.log", ZEEK), ("envoy.log", ENVOY), ("combined.log", COMBINED)):
        parse = auditor.parser(path, lines)
        records = [parse(line) for line in lines]
        assert [(r.client_ip, r.path, r.host) for r in records] == [
            (f"66.249.66.{n}", f"/{n}", "www.example.com" if path != "combined.log" else None) for n in range(4)]
        # later batches of the file are read the same way, without its first lines
        assert auditor.parser(path, ["anything"]) is parse
    assert auditor.parser("odd.log", ["hello world"] * 3) is None


def test_a_field_map_inferred_at_launch_reads_its_own_file_only():
    zeek_map = {"ts": "ts", "client_ip": "[id.orig_h]", "method": "method", "target": "uri", "host": "host"}
    auditor = _auditor(file_formats={"zeek.log": "jsonl", "other.log": "combined"},
                       file_field_maps={"zeek.log": zeek_map})
    assert auditor.parser("zeek.log")(ZEEK[1]).client_ip == "66.249.66.1"
    assert auditor.parser("other.log")(COMBINED[2]).path == "/2"
