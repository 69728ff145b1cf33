"""The converters of command-line values: a wrong value is refused with the value named."""
from __future__ import annotations

import argparse

import pytest

from matcher.health import CHECKS
from pipeline.cli.arguments import health_checks


def test_fail_on_blames_the_unknown_check_not_any():
    with pytest.raises(argparse.ArgumentTypeError, match="unknown check 'bogus'"):
        health_checks("any,bogus")


@pytest.mark.parametrize("text", ["any", "any,dead-letters", "dead-letters , any"])
def test_fail_on_any_with_named_checks_is_every_check(text):
    assert health_checks(text) == frozenset(CHECKS)


def test_fail_on_named_checks_are_those_checks():
    assert health_checks("no-host,ranges") == {"no-host", "ranges"}
