"""The record a log line becomes and the error of a line that becomes none
(`matcher.logformats.record`)."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from helpers import GOOGLEBOT
from matcher.logformats import LogParseError, LogRecord, parser_for


def combined(request: str = "GET / HTTP/1.1", *, tail: str = f'"-" "{GOOGLEBOT}"') -> str:
    return f'66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] "{request}" 200 512 {tail}'


def test_record_is_frozen_comparable_and_picklable():
    record = parser_for("combined_xrt")(combined(tail=f'"-" "{GOOGLEBOT}" "1.2.3.4" "noindex"'))
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.host = "x"  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(record))
    assert copy == record and hash(copy) == hash(record)
    assert dataclasses.replace(record, host="h").host == "h"


def test_record_constructor_sets_exactly_the_declared_fields():
    names = [field.name for field in dataclasses.fields(LogRecord)]
    record = LogRecord(*[f"v{index}" for index in range(len(names))])  # type: ignore[arg-type]
    assert [getattr(record, name) for name in names] == [f"v{index}" for index in range(len(names))]
    assert vars(record).keys() == set(names)


def test_parse_error_carries_reason_and_survives_pickling():
    error = LogParseError("no-match", "line does not have the combined layout")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.reason, copy.message, str(copy)) == (error.reason, error.message, str(error))
    assert isinstance(copy, ValueError)
