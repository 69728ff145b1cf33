"""The visits an operator's services sent: the referrals the audit counted per batch, summed
into one `referrals` row per host, operator, day and way."""
from __future__ import annotations

import apache_beam as beam

from matcher.line_auditor import Referral


class Referrals(beam.PTransform):
    """Lists of (Referral, visits) per batch -> `records.REFERRALS` rows."""

    def expand(self, referral_counts):
        return (
            referral_counts
            | "EachReferral" >> beam.FlatMap(iter)
            | "SumVisits" >> beam.CombinePerKey(sum)
            | "ReferralRows" >> beam.MapTuple(referral_row)
        )


def referral_row(key: Referral, visits: int) -> dict:
    host, operator, day, via = key
    return {"host": host, "operator": operator, "day": day, "via": via, "visits": visits}
