"""`--prior-run`: what an earlier run's robots.txt fetches carry over is what still decides each
crawler's held copy, however many rows the earlier run wrote."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from pipeline.tables.run_folder import MANIFEST, MANIFEST_FORMAT, MANIFEST_VERSION
from pipeline.tables.prior_run import prior_fetches

T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)


def _row(n: int, status: int | None, crawler: str = "Googlebot") -> dict:
    ts = (T0 + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"host": "example.com", "family": crawler, "identity": "spoofed", "crawler": crawler, "ts": ts,
            "status": status, "source": f"access.log:{n}", "held": "ok", "served_at": None, "version": None,
            "carried": False}


def test_a_prior_run_of_many_fetches_carries_over_only_what_decides_the_held_copy(tmp_path):
    rows = [_row(n, 200) for n in range(2_000)] + [_row(2_000 + n, 503) for n in range(2_000)]
    rows += [_row(n, 404, "bingbot") for n in range(3)]
    (tmp_path / "robots_fetches").mkdir()
    (tmp_path / "robots_fetches" / "part-0.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / MANIFEST).write_text(json.dumps({
        "format": MANIFEST_FORMAT, "format_version": MANIFEST_VERSION, "counts": {"lines": 0},
        "tables": {"robots_fetches": {"format": "jsonl", "files": ["robots_fetches/part-0.jsonl"]}},
    }))
    carried = prior_fetches(tmp_path)
    google = [fetch.source for key, fetch in carried if key[1] == "Googlebot"]
    # the last 200 (what it held before the errors), the first error and the latest
    assert google == ["access.log:1999", "access.log:2000", "access.log:3999"]
    assert [fetch.source for key, fetch in carried if key[1] == "bingbot"] == ["access.log:2"]
