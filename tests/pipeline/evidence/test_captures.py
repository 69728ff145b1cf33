"""Capture file names: the time a name spells is one every reader of the folder takes back."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.evidence.captures import CAPTURE_NAME, HostFolder, Outcome, capture_time, stamp


@pytest.mark.parametrize("moment", [datetime(1970, 1, 1, tzinfo=timezone.utc),
                                    datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc),
                                    datetime(2026, 11, 2, 10, 0, tzinfo=timezone(timedelta(hours=1)))])
def test_a_stamp_is_read_back_as_its_time(moment):
    name = f"{stamp(moment)}.txt"
    assert CAPTURE_NAME.fullmatch(name)
    assert capture_time(stamp(moment)) == moment.replace(microsecond=0)


@pytest.mark.parametrize("moment", [datetime(1, 1, 1, tzinfo=timezone.utc), datetime(1969, 12, 31, tzinfo=timezone.utc)])
def test_a_time_before_1970_is_refused_and_writes_no_file(tmp_path, moment):
    folder = HostFolder(tmp_path, "example.com")
    folder.path.mkdir()
    with pytest.raises(ValueError, match="outside 1970-01-01..9999-12-31"):
        folder.write(moment, Outcome(200, b"User-agent: *\n"))
    assert list(folder.path.iterdir()) == []
