"""A stream's new files under `--log-format auto`: each stamped with its first request's time, read
in the format its first lines are in, or in the layout inferred from them."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from apache_beam.utils.timestamp import Timestamp

from helpers import GOOGLEBOT
from pipeline.graph import stream_sources

ZEEK = json.dumps({"ts": 1793613600.5, "id.orig_h": "66.249.66.1", "method": "GET", "host": "www.example.com",
                   "uri": "/a", "user_agent": GOOGLEBOT, "status_code": 200})
ENVOY = (f'[2026-11-02T10:00:01.250Z] "GET /a HTTP/1.1" 200 - 0 512 3 2 "66.249.66.1" "{GOOGLEBOT}" '
         '"cc21d9b0-cf5c-432b-8c7e-98aeb7988001" "www.example.com" "10.0.2.1:80"')


def test_a_new_file_no_preset_reads_is_stamped_with_its_first_request_read_in_the_inferred_layout(tmp_path):
    (tmp_path / "zeek.log").write_text(ZEEK + "\n")
    (tmp_path / "envoy.log").write_text(ENVOY + "\n")
    poll = stream_sources.LogFolderPoll("auto", None, None)
    found = {Path(out.value).name: out.timestamp for out in poll(str(tmp_path / "*.log")).outputs}
    assert found == {
        "zeek.log": Timestamp.from_utc_datetime(datetime(2026, 11, 2, 10, 0, 0, 500000, tzinfo=timezone.utc)),
        "envoy.log": Timestamp.from_utc_datetime(datetime(2026, 11, 2, 10, 0, 1, 250000, tzinfo=timezone.utc)),
    }
