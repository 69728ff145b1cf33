"""Whether the NXDOMAINs of a run's reverse DNS can disprove a claim."""
from __future__ import annotations

from helpers import write_range_snapshot
from config.registry import default_registry
from config.snapshots import load_ranges
from matcher.dns_trust import checked_dns, distrust_of
from matcher.reverse_dns import DnsAnswer, Lookup


def ranges(tmp_path):
    write_range_snapshot(tmp_path, "google-common-crawlers", "2026-11-01", "66.249.66.0/27")
    return load_ranges(tmp_path, default_registry())


def test_an_nxdomain_for_a_range_proven_address_distrusts_the_answers(tmp_path):
    index = ranges(tmp_path)
    answers = {"66.249.66.1": DnsAnswer("66.249.66.1", Lookup(error="nxdomain"))}
    assert "66.249.66.1, which the published ranges prove" in distrust_of(checked_dns(answers, index))


def test_an_nxdomain_for_an_address_no_range_holds_is_believed(tmp_path):
    index = ranges(tmp_path)
    answers = {"203.0.113.9": DnsAnswer("203.0.113.9", Lookup(error="nxdomain"))}
    checked = checked_dns(answers, index)
    assert distrust_of(checked) is None and checked["203.0.113.9"] == answers["203.0.113.9"]
    assert distrust_of(answers) is None  # plain answers carry no judgement
