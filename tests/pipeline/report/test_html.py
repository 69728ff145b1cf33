"""The HTML report and `crawl-audit report` / `whatif` on real runs of the bundled sample."""
from __future__ import annotations

import json
import shutil
import statistics
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import htmldom
from config.registry import load_registry
from helpers import read_jsonl, write_jsonl
from matcher import records, robots
from pipeline.cli import main as cli
from pipeline.report import html as html_report
from pipeline.tables import run_folder
from pipeline.tables import reading as tables

PROPOSAL = (
    "User-agent: *\nDisallow: /cart\nDisallow: /search\n\n"
    "User-agent: GPTBot\nAllow: /\n\n"
    "User-agent: Googlebot\nDisallow: /docs/\n"
)


def test_the_run_writes_a_small_self_contained_report_with_every_section(sample_run):
    page = (sample_run / "report.html").read_text(encoding="utf-8")
    dom = htmldom.read(page)
    expected = {ident for ident, _ in html_report.SECTIONS} - {"whatif"}
    assert expected <= dom.ids and "whatif" not in dom.ids
    tags = {tag for tag, _ in dom.elements}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed"}
    assert all(not name.startswith("on") and name != "style" for _, attrs in dom.elements for name in attrs)
    # Only in-page links: nothing to fetch, nothing to run.
    assert all(attrs["href"].startswith("#") for tag, attrs in dom.elements if tag == "a")
    (csp,) = [a["content"] for t, a in dom.elements if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'none'" in csp
    assert len(page.encode("utf-8")) < 1_000_000


def test_the_crawler_table_equals_the_summary_and_the_counts(sample_run):
    dom = htmldom.read((sample_run / "report.html").read_text(encoding="utf-8"))
    header, rows, totals = dom.table("crawler-table")
    assert header == [
        "crawler", "identity", "requests", "bytes", "allowed", "disallowed", "within grace", "before refetch",
        "between captures", "unknown",
    ]
    _, claims, claimed = dom.table("claims-table")
    summary = read_jsonl(sample_run / "summary", "part*")
    columns = ("requests", "bytes", "allowed", "disallowed", "within_grace", "before_refetch", "between_captures", "unknown")
    crawlers = [r for r in summary if r["client_kind"] == "crawler"]
    words = {"unverifiable": "no way to verify"}
    expected = {(r["crawler"] or "(none)", words.get(r["identity"], r["identity"])): tuple(r[c] for c in columns) for r in crawlers}
    assert {(r[0], r[1]): tuple(map(htmldom.number, r[2:])) for r in rows + claims} == expected
    assert {r[1] for r in claims} <= {"spoofed", "unverified"} and not {r[1] for r in rows} & {"spoofed", "unverified"}
    counts = json.loads((sample_run / "counts.json").read_text())
    automated = sum(r["requests"] for r in summary if r["client_kind"] == "automated")
    assert automated > 0
    assert htmldom.number(totals[2]) + htmldom.number(claimed[2]) == counts["verdicts"] - automated == sum(
        v[0] for v in expected.values()
    )
    _, lines, read = dom.table("lines-table")
    assert htmldom.number(read[1]) == counts["lines"]
    assert [htmldom.number(r[1]) for r in lines] == [
        counts["verdicts"] - automated, automated, 0, counts["skipped"], counts["not_requests"], counts["dead_letters"],
    ]


def test_automated_clients_have_their_own_table_never_the_crawlers(sample_run):
    dom = htmldom.read((sample_run / "report.html").read_text(encoding="utf-8"))
    _, rows, totals = dom.table("automated-table")
    summary = [r for r in read_jsonl(sample_run / "summary", "part*") if r["client_kind"] == "automated"]
    # Nothing proves who runs them: unverifiable, which a table calls "no way to verify".
    assert {s["identity"] for s in summary} == {"unverifiable"}
    assert {(r[0], r[1], htmldom.number(r[2])) for r in rows} == {(s["crawler"], "no way to verify", s["requests"]) for s in summary}
    assert {"curl", "python-requests", "wget", "go-http-client"} <= {s["crawler"] for s in summary}
    _, crawler_rows, _ = dom.table("crawler-table")
    assert not {r[0] for r in crawler_rows} & {s["crawler"] for s in summary}


def test_the_purpose_table_counts_a_crawler_under_each_of_its_purposes(sample_run):
    dom = htmldom.read((sample_run / "report.html").read_text(encoding="utf-8"))
    rows = dom.tables["purpose-table"][1:]  # no footer: a sum over purposes would count some crawlers twice
    crawlers = [
        r for r in read_jsonl(sample_run / "summary", "part*")
        if r["client_kind"] == "crawler" and r["identity"] not in ("spoofed", "unverified")
    ]
    expected = Counter()
    for row in crawlers:
        for purpose in row["purpose"]:
            expected[purpose] += row["requests"]
    assert {r[0]: htmldom.number(r[1]) for r in rows} == dict(expected)
    assert sum(expected.values()) >= sum(r["requests"] for r in crawlers)


def test_the_robots_versions_section_shows_the_history_and_its_diffs(sample_run):
    rows = list(tables.rows(sample_run, "robots_versions"))
    assert len(rows) == 6 and {r["kind"] for r in rows} == {"ok", "unavailable", "error"}
    www = sorted((r for r in rows if r["host"] == "www.example.com"), key=lambda r: r["effective_from"])
    page = (sample_run / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="robots-versions"'):page.index('id="indexing"')]
    before, after = (set(r["body"].splitlines()) for r in www)
    for line in after - before:
        assert f'<span class="add">+{html_escape(line)}</span>' in section
    for line in before - after:
        assert f'<span class="del">-{html_escape(line)}</span>' in section


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_parquet_and_json_lines_runs_give_the_same_report(sample_run, sample_run_parquet):
    assert list((sample_run_parquet / "robots_versions").glob("part*.parquet"))
    assert pq.read_table(sample_run_parquet / "robots_versions").num_rows == 6
    # The change audit, read back from Parquet, is the JSON Lines run's row for row.
    def changes(out):
        times = {column.name for column in records.CHANGES if column.type == "timestamp"}
        return sorted(
            tuple((k, tables.moment(v) if k in times and isinstance(v, str) else v) for k, v in row.items())
            for row in tables.rows(out, "changes")
        )

    assert changes(sample_run_parquet) == changes(sample_run) and changes(sample_run)
    assert list((sample_run_parquet / "changes").glob("part*.parquet"))
    assert (sample_run_parquet / "report.html").read_bytes() == (sample_run / "report.html").read_bytes()


def test_report_command_rebuilds_the_same_page(sample_run, tmp_path, capsys):
    target = tmp_path / "again.html"
    assert cli.main(["report", str(sample_run), "--html", str(target)]) == 0
    assert target.read_bytes() == (sample_run / "report.html").read_bytes()
    assert "lines read" in capsys.readouterr().out


def test_report_command_refuses_a_folder_without_a_run(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path)]) == 2
    assert "no complete run" in capsys.readouterr().err


def brute_force_flips(out: Path, host: str, proposal: bytes, start: str = "", end: str = "") -> Counter:
    """Every verdict of the host, one by one, through `RobotsFile.decide_path`."""
    rf = robots.parse(proposal)
    registry = load_registry()
    flips = Counter()
    for row in tables.rows(out, "verdicts"):
        if row["host"] != host or not (start <= row["ts"] and (not end or row["ts"] < end)):
            continue
        registered = registry.get(row["crawler"]) if row["crawler"] else None
        catch_all = not (registered and registered.ignores_catch_all)
        now = rf.decide_path(row["tokens"], row["path"], catch_all).allowed
        was = row["decision"] == "allowed"
        if row["decision"] != "unknown" and now != was:
            flips[(row["crawler"], row["identity"], "disallowed-to-allowed" if now else "allowed-to-disallowed")] += 1
    return flips


@pytest.fixture
def whatif_out(sample_run, tmp_path) -> Path:
    # Its own copy: the what-if writes into the folder and changes the report.
    out = tmp_path / "out"
    shutil.copytree(sample_run, out)
    return out


@pytest.mark.slow
def test_whatif_counts_every_flip_of_the_host_and_writes_them(whatif_out, tmp_path, capsys):
    proposed = tmp_path / "robots-next.txt"
    proposed.write_text(PROPOSAL)
    argv = ["whatif", str(whatif_out), "--host", "WWW.example.com.", "--proposed", str(proposed)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    expected = brute_force_flips(whatif_out, "www.example.com", PROPOSAL.encode())
    assert expected  # the proposal changes something in both directions
    assert {change for *_, change in expected} == {"allowed-to-disallowed", "disallowed-to-allowed"}
    flips = [json.loads(line) for line in (whatif_out / "whatif" / "flips.jsonl").read_text().splitlines()]
    got = Counter()
    for flip in flips:
        got[(flip["crawler"], flip["identity"], flip["change"])] += flip["requests"]
        assert flip["host"] == "www.example.com"
        if flip["change"] == "allowed-to-disallowed":
            assert flip["rule_kind"] == "disallow" and PROPOSAL.splitlines()[flip["rule_line"] - 1].endswith(flip["rule_pattern"])
    assert got == expected
    digest = json.loads((whatif_out / "whatif" / "summary.json").read_text())
    assert digest["flipped"]["allowed-to-disallowed"] == sum(n for k, n in expected.items() if k[2] == "allowed-to-disallowed")
    assert (whatif_out / "whatif" / "proposed.txt").read_text() == PROPOSAL
    assert "allowed -> disallowed" in printed and "Disallow: /docs/ (line 9)" in printed
    dom = htmldom.read((whatif_out / "report.html").read_text(encoding="utf-8"))
    assert "whatif" in dom.ids
    _, rows, _ = dom.table("whatif-table")
    assert htmldom.number(rows[2][1]) == digest["flipped"]["allowed-to-disallowed"]


@pytest.mark.slow
def test_whatif_reads_a_parquet_run_alike(whatif_out, sample_run_parquet, tmp_path):
    proposed = tmp_path / "robots-next.txt"
    proposed.write_text(PROPOSAL)
    parquet_copy = tmp_path / "parquet"
    shutil.copytree(sample_run_parquet, parquet_copy)
    for out in (whatif_out, parquet_copy):
        assert cli.main(["whatif", str(out), "--host", "shop.example.net", "--proposed", str(proposed)]) == 0
    assert (parquet_copy / "whatif" / "summary.json").read_text() == (whatif_out / "whatif" / "summary.json").read_text()
    assert (parquet_copy / "whatif" / "flips.jsonl").read_text() == (whatif_out / "whatif" / "flips.jsonl").read_text()


@pytest.mark.slow
def test_whatif_takes_only_the_requests_in_the_time_range(whatif_out, tmp_path, capsys):
    proposed = tmp_path / "robots-next.txt"
    proposed.write_text(PROPOSAL)
    argv = ["whatif", str(whatif_out), "--host", "www.example.com", "--proposed", str(proposed),
            "--from", "2026-11-03T10:00:00Z", "--to", "2026-11-04"]
    assert cli.main(argv) == 0
    digest = json.loads((whatif_out / "whatif" / "summary.json").read_text())
    in_range = [
        row for row in tables.rows(whatif_out, "verdicts")
        if row["host"] == "www.example.com" and "2026-11-03T10:00:00Z" <= row["ts"] < "2026-11-04"
    ]
    assert digest["requests"] == len(in_range) > 0
    expected = brute_force_flips(whatif_out, "www.example.com", PROPOSAL.encode(), "2026-11-03T10:00:00Z", "2026-11-04")
    assert sum(digest["flipped"].values()) == sum(expected.values())
    assert digest["from"] == "2026-11-03T10:00:00Z" and digest["to"] == "2026-11-04T00:00:00Z"


def test_whatif_says_what_is_wrong_with_its_input(whatif_out, tmp_path, capsys):
    assert cli.main(["whatif", str(whatif_out), "--host", "x", "--proposed", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
    proposed = tmp_path / "p.txt"
    proposed.write_text(PROPOSAL)
    assert cli.main(["whatif", str(whatif_out), "--host", "x", "--proposed", str(proposed), "--from", "soon"]) == 2
    assert "not a date or time" in capsys.readouterr().err
    assert cli.main(["whatif", str(whatif_out), "--host", "www.example.org", "--proposed", str(proposed)]) == 2
    assert "no verdicts of www.example.org" in capsys.readouterr().err
    assert not (whatif_out / "whatif").exists()


def _describe_run(out: Path) -> None:
    """The manifest a run writes last, for a folder of tables made by hand."""
    files: dict[str, list[str]] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        relative = path.relative_to(out)
        files.setdefault(relative.parts[0] if len(relative.parts) > 1 else relative.stem, []).append(relative.as_posix())
    manifest = {
        "format": run_folder.MANIFEST_FORMAT, "format_version": run_folder.MANIFEST_VERSION,
        "counts": json.loads((out / "counts.json").read_text()),
        "tables": {table: {"format": "jsonl", "files": names} for table, names in files.items()},
    }
    (out / run_folder.MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.slow
def test_the_report_stays_small_however_many_hosts_crawlers_and_paths(tmp_path):
    """Top-N lists and per-bucket totals: a run with 400 hosts, 300 crawlers, 40,000 distinct
    paths over 90 days gives a page of the same size class as the sample's."""
    out = tmp_path / "out"
    rows, summary = [], Counter()
    for i in range(80_000):
        crawler, identity = f"bot{i % 300}", ("verified", "spoofed")[i % 7 == 0]
        decision = ("allowed", "disallowed", "disallowed-within-grace", "disallowed-between-captures", "unknown")[i % 5]
        rows.append({
            "ts": f"2026-{8 + i % 3:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z", "host": f"h{i % 400}.example",
            "client_ip": f"203.0.113.{i % 250}", "user_agent": f"{crawler}/1.0 (+https://example.org/{i % 50})",
            "path": f"/p/{i % 40_000}", "source": f"access.log:{i + 1}", "crawler": crawler, "operator": None,
            "tokens": [crawler], "identity": identity, "identity_method": "ip-range", "identity_evidence": None,
            "robots_version": {"effective_from": "2026-08-01T00:00:00Z", "status": "200", "sha256": "0" * 64},
            "rule_kind": "disallow", "rule_pattern": "/p/", "rule_line": 3, "decision": decision, "reason": "rule",
            "client_kind": "crawler", "purpose": ["unknown"], "preference_conflicts": [],
        })
        summary[(crawler, identity, decision)] += 1
    (out / "verdicts").mkdir(parents=True)
    write_jsonl(out / "verdicts" / "part-00000.jsonl", rows)
    columns = {
        "allowed": "allowed", "disallowed": "disallowed", "disallowed-within-grace": "within_grace",
        "disallowed-between-captures": "between_captures", "unknown": "unknown",
        "disallowed-before-refetch": "before_refetch",
    }
    summary_rows = []
    for crawler, identity in {(c, i) for c, i, _ in summary}:
        counts = {column: summary[(crawler, identity, decision)] for decision, column in columns.items()}
        summary_rows.append({
            "crawler": crawler, "identity": identity, "client_kind": "crawler", "purpose": ["unknown"],
            "requests": sum(counts.values()), **counts, "preference_conflicts": 0,
        })
    (out / "summary").mkdir()
    write_jsonl(out / "summary" / "part-00000.jsonl", summary_rows)
    body = "".join(f"Disallow: /p/{n}\n" for n in range(2_000))
    versions = [
        {"host": f"h{h}.example", "effective_from": f"2026-0{8 + v}-01T00:00:00Z", "status": "200", "kind": "ok",
         "sha256": f"{h}-{v}", "body": f"User-agent: *\n# {v}\n" + body[v * 1000:]}
        for h in range(400) for v in range(2)
    ]
    (out / "robots_versions").mkdir()
    write_jsonl(out / "robots_versions" / "part-00000.jsonl", versions)
    (out / "counts.json").write_text(json.dumps({"lines": 100_000, "verdicts": 80_000, "skipped": 20_000, "dead_letters": 0}))
    changes = [
        {"host": f"h{h}.example", "crawler": "bot1", "effective_from": "2026-09-01T00:00:00Z",
         "later_effective_from": "2026-09-02T00:00:00Z", "observed_before": "2026-09-01T12:00:00Z", "requests": h + 1}
        for h in range(150)
    ]
    (out / "between_captures").mkdir()
    write_jsonl(out / "between_captures" / "part-00000.jsonl", changes)
    _describe_run(out)
    page = Path(html_report.write(str(out))).read_text(encoding="utf-8")
    assert len(page.encode("utf-8")) < 1_500_000
    dom = htmldom.read(page)
    assert {ident for ident, _ in html_report.SECTIONS} - {"whatif"} <= dom.ids
    _, crawler_rows, totals = dom.table("crawler-table")
    _, claim_rows, claimed = dom.table("claims-table")
    assert len(crawler_rows) + len(claim_rows) == len(summary_rows)
    assert htmldom.number(totals[2]) + htmldom.number(claimed[2]) == 80_000
    assert "The 25 largest of 300 are shown" in page and "The 20 largest of 400 are shown" in page
    _, changes_shown, last = dom.table("between-captures-table")
    assert len(changes_shown) + 1 == html_report.TOP_ROWS and htmldom.number(changes_shown[0][5]) == 150
    assert last[:2] == ["h50.example", "bot1"]  # the 100th largest of 150


def test_whatif_says_when_each_crawler_would_read_the_proposal_from_its_fetches(whatif_out, tmp_path, capsys):
    proposed = tmp_path / "robots-next.txt"
    proposed.write_text(PROPOSAL)
    assert cli.main(["whatif", str(whatif_out), "--host", "www.example.com", "--proposed", str(proposed)]) == 0
    printed = capsys.readouterr().out
    digest = json.loads((whatif_out / "whatif" / "summary.json").read_text())
    by_crawler = {(r["crawler"], r["identity"]): r for r in digest["when_read"]}
    fetched = sorted(
        tables.moment(row["ts"]) for row in tables.rows(whatif_out, "robots_fetches")
        if (row["host"], row["family"], row["identity"]) == ("www.example.com", "Google", "verified")
    )
    gaps = [(b - a).total_seconds() for a, b in zip(fetched, fetched[1:])]
    googlebot = by_crawler["Googlebot", "verified"]
    assert (googlebot["typical_s"], googlebot["longest_s"]) == (statistics.median(gaps), max(gaps))
    assert not googlebot["grace_assumed"] and googlebot["fetches"] == len(fetched)
    assert by_crawler["Googlebot", "spoofed"]["grace_assumed"]
    assert "Googlebot (spoofed): no robots.txt fetch seen on this host" in printed
