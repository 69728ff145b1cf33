"""A batch run's output folder holds one complete run or nothing, and says what it holds."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apache_beam as beam
import pytest

from matcher import records
from helpers import BINGBOT, log_line, run_audit, write_jsonl
from pipeline.graph import build as graph
from pipeline.report import text as report
from pipeline.cli.main import main
from pipeline.tables.run_folder import MANIFEST, RunFolder, RunFolderError

LINES = [
    log_line("example.com", f"02/Nov/2026:10:00:0{n} +0000", f"/p{n}", BINGBOT, size=5) for n in range(4)
] + ["not a log line"]


def _write_site(folder: Path) -> Path:
    (folder / "access.log").write_text("\n".join(LINES) + "\n")
    row = {"host": "example.com", "effective_from": "2026-11-01T00:00:00Z", "status": 200,
           "body": "User-agent: *\nCrawl-delay: 2\nDisallow: /p3\n"}
    write_jsonl(folder / "robots.jsonl", [row])
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return _write_site(tmp_path)


@pytest.fixture(scope="module")
def audited_site(tmp_path_factory) -> Path:
    """The site audited once into SITE/out, for the tests that only read a finished run."""
    site = _write_site(tmp_path_factory.mktemp("audited"))
    assert run_audit(_argv(site)) == 0
    return site


@pytest.fixture
def site_with_run(site: Path, audited_site: Path) -> Path:
    """The site with a finished run of it in SITE/out, the test's own to change."""
    shutil.copytree(audited_site / "out", site / "out")
    return site


def _argv(site: Path, *extra: str) -> list[str]:
    return [
        f"--logs={site / 'access.log'}", "--log-format=host_combined", f"--robots={site / 'robots.jsonl'}",
        f"--out={site / 'out'}", "--runner=FnApiRunner", *extra,
    ]


def _files(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


def _manifest(folder: Path) -> dict:
    return json.loads((folder / MANIFEST).read_text())


@pytest.mark.slow
def test_a_run_writes_a_manifest_that_lists_every_file(audited_site):
    site = audited_site
    out = site / "out"
    manifest = _manifest(out)
    listed = {name for table in manifest["tables"].values() for name in table["files"]}
    assert _files(out) == listed | {MANIFEST, "report.html"}
    assert set(manifest["tables"]) == {
        "verdicts", "dead_letters", "crawl_delay_violations", "crawl_delay_windows", "summary",
        "indexing_findings", "between_captures", "signature_reuse", "robots_versions", "robots_fetches", "changes", "served", "referrals", "backoff", "counts", "report_counts",
    }
    assert manifest["tables"]["verdicts"]["format"] == "jsonl"
    assert manifest["tables"]["counts"] == {"format": "json", "files": ["counts.json"]}
    assert manifest["tables"]["report_counts"] == {"format": "json", "files": ["report_counts.json"]}
    assert manifest["counts"] == json.loads((out / "counts.json").read_text())
    assert manifest["counts"] == {"lines": 5, "verdicts": 4, "skipped": 0, "dead_letters": 1, "not_requests": 0, "not_request_reasons": {}}
    assert manifest["inputs"]["log_files"] == [{"path": str(site / "access.log"), "bytes": (site / "access.log").stat().st_size}]
    assert manifest["inputs"]["robots"] == str(site / "robots.jsonl")
    assert manifest["options"]["format"] == "jsonl" and manifest["options"]["log_format"] == "host_combined"
    assert manifest["format"] == "crawl-audit-run" and manifest["format_version"] == 1
    assert manifest["schema_version"] == records.SCHEMA_VERSION
    assert manifest["crawl_audit_version"]
    assert sorted(p.name for p in site.iterdir()) == ["access.log", "out", "robots.jsonl"]  # nothing left aside


def test_a_used_out_is_refused_without_overwrite(site_with_run, capsys):
    site = site_with_run
    before = (site / "out" / MANIFEST).read_bytes()
    capsys.readouterr()
    assert main(["run", *_argv(site, "--format=parquet")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "is not empty: give --overwrite" in error
    assert (site / "out" / MANIFEST).read_bytes() == before
    assert sorted(p.name for p in site.iterdir()) == ["access.log", "out", "robots.jsonl"]


@pytest.mark.slow
def test_overwrite_replaces_a_run_whole_whatever_its_format(site_with_run, capsys):
    site = site_with_run
    assert run_audit(_argv(site, "--format=parquet", "--overwrite")) == 0
    out = site / "out"
    assert not [name for name in _files(out) if name.endswith(".jsonl") and name.startswith("verdicts/")]
    assert _manifest(out)["tables"]["verdicts"]["format"] == "parquet"
    assert _files(out) == {n for t in _manifest(out)["tables"].values() for n in t["files"]} | {MANIFEST, "report.html"}
    assert report.load(str(out)).counts["verdicts"] == 4  # one run's, not two runs' added up
    assert sorted(p.name for p in site.iterdir()) == ["access.log", "out", "robots.jsonl"]


def test_overwrite_removes_only_what_a_run_wrote(site, audited_site, capsys):
    out = site / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["run", *_argv(site, "--overwrite")]) == 2
    assert "replaces only a complete run" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"
    shutil.rmtree(out)
    shutil.copytree(audited_site / "out", out)
    (out / "verdicts" / "mine.txt").write_text("also mine")
    assert main(["run", *_argv(site, "--overwrite")]) == 2
    assert "verdicts/mine.txt is not listed" in capsys.readouterr().err
    assert (out / "verdicts" / "mine.txt").exists()


@pytest.mark.slow
def test_a_run_that_fails_half_way_leaves_nothing(site, monkeypatch):
    real_write = graph.write_outputs

    def write_then_fail(outputs, out, output_format):
        real_write(outputs, out, output_format)
        # the tables are being written when a worker dies
        outputs["verdict_batches"] | "Die" >> beam.Map(lambda verdicts: 1 / 0)

    monkeypatch.setattr(graph, "write_outputs", write_then_fail)
    with pytest.raises(ZeroDivisionError):
        run_audit(_argv(site))
    assert sorted(p.name for p in site.iterdir()) == ["access.log", "robots.jsonl"]


def test_the_report_reads_only_a_complete_run_and_only_its_files(site_with_run, capsys):
    site = site_with_run
    out = site / "out"
    # a part file the run did not write (an older run's, say) is not counted
    stray = json.loads(next((out / "summary").glob("part*")).read_text().splitlines()[0])
    (out / "summary" / "part-00001-of-00002.jsonl").write_text(json.dumps({**stray, "requests": 1000}) + "\n")
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1,000" not in printed and "bingbot" in printed and "lines read                    5" in printed
    # a run killed before it completed: its folder aside has no manifest
    killed = RunFolder.prepare(str(site / "killed"), overwrite=False)
    (killed.staging / "verdicts").mkdir()
    (killed.staging / "verdicts" / "part-00000-of-00001.jsonl").write_text("{}\n")
    for folder in (killed.staging, site / "nowhere"):
        assert main(["report", str(folder)]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "holds no complete run" in error
    with pytest.raises(RunFolderError):
        report.load(str(killed.staging))


def test_a_manifest_cannot_point_outside_its_folder(site_with_run, capsys):
    site = site_with_run
    manifest = _manifest(site / "out")
    manifest["tables"]["summary"]["files"] = ["../robots.jsonl"]
    (site / "out" / MANIFEST).write_text(json.dumps(manifest))
    assert main(["report", str(site / "out")]) == 2
    assert "files inside the run's folder" in capsys.readouterr().err


def test_a_batch_out_must_be_a_local_folder():
    with pytest.raises(RunFolderError, match="writes a local folder"):
        RunFolder.prepare("gs://bucket/out", overwrite=False)


@pytest.mark.slow
def test_a_run_killed_outright_leaves_no_out_folder(site):
    """kill -9 while the pipeline runs: `out` never appears; the partial folder beside it is no run."""
    line = LINES[0]
    (site / "access.log").write_text("".join(line.replace("/p0", f"/p{n}") + "\n" for n in range(50_000)))
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "run", *_argv(site)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(site.glob("out.partial-*/*")) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert not (site / "out").exists()
    (partial,) = site.glob("out.partial-*")
    with pytest.raises(RunFolderError, match="holds no complete run"):
        report.load(str(partial))
