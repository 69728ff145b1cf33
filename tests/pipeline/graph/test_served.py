from matcher.summary import decisions_per_crawler, summary_row
from pipeline.columnar.served import served_in_block
from pipeline.graph.served import served_row, sum_tallies
from helpers import verdict_block


def verdict(status, size, decision="disallowed", crawler="GPTBot", identity="verified"):
    return {
        "host": "www.example.com", "crawler": crawler, "operator": "OpenAI", "identity": identity,
        "client_kind": "crawler", "purpose": ("ai-training",), "decision": decision, "status": status,
        "bytes": size, "preference_conflicts": [],
    }


def test_served_rows_count_requests_and_bytes_per_status_class():
    batches = [[verdict(403, 0), verdict(200, 900), verdict(200, None)], [verdict(403, 120), verdict(None, None)]]
    summed: dict = {}
    for batch in batches:
        for key, tally in served_in_block(verdict_block(batch)):
            summed[key] = sum_tallies([summed.get(key, (0, 0, 0)), tally])
    rows = sorted((served_row(key, tally) for key, tally in summed.items()), key=lambda r: r["status_class"])
    assert [(r["status_class"], r["requests"], r["bytes"]) for r in rows] == [
        ("2xx", 2, 900), ("4xx", 2, 120), ("none", 1, None),
    ]


def test_summary_bytes_are_null_when_no_request_of_the_row_logged_a_size():
    counts = dict(decisions_per_crawler([verdict(200, None, "allowed"), verdict(200, None, "allowed")]))
    (row,) = [summary_row(key, of) for key, of in counts.items()]
    assert (row["requests"], row["allowed"], row["bytes"]) == (2, 2, None)
    counts = dict(decisions_per_crawler([verdict(200, None, "allowed"), verdict(304, 0, "allowed")]))
    (row,) = [summary_row(key, of) for key, of in counts.items()]
    assert (row["requests"], row["bytes"]) == (2, 0)


def test_bytes_never_count_as_requests():
    counts = dict(decisions_per_crawler([verdict(200, 10_000, "allowed"), verdict(403, 7, "disallowed")]))
    (row,) = [summary_row(key, of) for key, of in counts.items()]
    assert (row["requests"], row["allowed"], row["disallowed"], row["bytes"]) == (2, 1, 1, 10_007)
