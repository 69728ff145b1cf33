"""The converters of command-line values: a wrong value is refused with the value named."""
from __future__ import annotations

import argparse
from datetime import datetime, timezone

import pytest

from matcher.health import CHECKS
from pipeline.cli.arguments import health_checks, moment


def test_fail_on_blames_the_unknown_check_not_any():
    with pytest.raises(argparse.ArgumentTypeError, match="unknown check 'bogus'"):
        health_checks("any,bogus")


@pytest.mark.parametrize("text", ["any", "any,dead-letters", "dead-letters , any"])
def test_fail_on_any_with_named_checks_is_every_check(text):
    assert health_checks(text) == frozenset(CHECKS)


def test_fail_on_named_checks_are_those_checks():
    assert health_checks("no-host,ranges") == {"no-host", "ranges"}


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "1969-12-31T23:59:59Z", "9999-12-31T23:00:00-05:00"])
def test_a_time_outside_1970_to_9999_is_refused_in_one_line(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"is outside 1970-01-01\.\.9999-12-31 in UTC"):
        moment(text)


def test_a_time_inside_the_span_is_read_in_utc():
    assert moment("1970-01-01T01:00:00+01:00") == datetime(1970, 1, 1, tzinfo=timezone.utc)
