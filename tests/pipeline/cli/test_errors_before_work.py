"""Everything knowable at launch is one line, exit 2, before any work: a log format its flags
cannot make, a robots.txt file where a robots table belongs (with the one command that makes a
table from it), runner flags. Run as a user runs it, in a process of its own, so that a
traceback from anywhere would show."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, REPO, crawl_audit, log_line, run_audit

COMMAND = [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))"]


def crawl_audit_process(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *argv], capture_output=True, text=True, cwd=REPO, timeout=300)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    log = tmp_path / "access.jsonl"
    log.write_text(json.dumps({"time": "2026-11-02T10:00:00Z", "ip": "66.249.66.1", "ua": GOOGLEBOT}) + "\n")
    robots = tmp_path / "robots.txt"
    robots.write_text("# my site\nUser-agent: *\nDisallow: /private/\n")
    return {"log": log, "robots": robots, "out": tmp_path / "out"}


def refused(result: subprocess.CompletedProcess, out: Path) -> str:
    """The one line a refused run printed; nothing was written."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crawl-audit: "), result.stderr
    assert not out.exists()
    return lines[0]


@pytest.mark.parametrize(("flags", "said"), [
    (["--log-format=jsonl"], "--log-format jsonl: format 'jsonl' needs a field mapping"),
    (["--log-format=jsonl", '--field-map={"ts": "time"}'], "--log-format jsonl: a mapping needs 'ts', 'client_ip'"),
    (["--log-format=combined", '--field-map={"ts": "time"}'], "format 'combined' is not JSON and takes no field mapping"),
    (["--log-format=jsonl", '--field-map={"ts": 5}'], "mapping for 'ts' must be a dotted field path, got 5"),
])
def test_a_log_format_its_flags_cannot_make_is_refused_at_launch(inputs, flags, said):
    table = REPO / "samples/robots/history.jsonl"
    result = crawl_audit_process(
        "run", f"--logs={inputs['log']}", f"--robots={table}", f"--out={inputs['out']}", *flags
    )
    assert said in refused(result, inputs["out"])


@pytest.mark.parametrize(("flag", "said"), [
    ("--runner=NoSuchRunner", "Unexpected pipeline runner: NoSuchRunner"),
    ("--direct_num_workers=x", "--direct_num_workers: invalid int value: 'x'"),
    ("--no_such_beam_flag=1", "unknown option --no_such_beam_flag"),
])
def test_runner_flags_are_refused_at_launch(inputs, flag, said):
    table = REPO / "samples/robots/history.jsonl"
    result = crawl_audit_process(
        "run", f"--logs={inputs['log']}", f"--robots={table}", f"--out={inputs['out']}", "--log-format=combined", flag
    )
    assert said in refused(result, inputs["out"])


@pytest.mark.slow
def test_a_robots_txt_file_given_as_the_table_says_what_a_table_is_and_how_to_make_one(inputs, tmp_path, capsys):
    result = crawl_audit_process(
        "run", f"--logs={inputs['log']}", f"--robots={inputs['robots']}", f"--out={inputs['out']}",
        "--log-format=combined",
    )
    line = refused(result, inputs["out"])
    assert f"{inputs['robots']} is a robots.txt file, not a robots table" in line
    assert "each version of a host's robots.txt with the moment it took effect" in line
    command = f"crawl-audit history import-file {inputs['robots']} --host HOST --effective-from WHEN --into robots/"
    assert command in line
    # The command said, run as said, makes a table the audit reads.
    captures = tmp_path / "robots"
    assert crawl_audit([
        "history", "import-file", str(inputs["robots"]), "--host", "www.mysite.test",
        "--effective-from", "2026-11-01", "--into", str(captures),
    ]) == 0
    assert [p.name for p in (captures / "www.mysite.test").iterdir()] == ["20261101T000000Z.txt"]
    log = tmp_path / "access.log"
    log.write_text(log_line("www.mysite.test", datetime(2026, 11, 2, 10, tzinfo=timezone.utc), "/private/a", GOOGLEBOT,
                            ip="66.249.66.1") + "\n")
    capsys.readouterr()
    assert run_audit([
        f"--logs={log}", "--log-format=host_combined", f"--robots={captures}", f"--ranges={REPO / 'samples/ranges'}",
        f"--out={tmp_path / 'audited'}", "--runner=FnApiRunner",
    ]) == 0
    verdict = json.loads(next((tmp_path / "audited" / "verdicts").glob("part*")).read_text().splitlines()[0])
    assert (verdict["decision"], verdict["rule_pattern"], verdict["rule_line"]) == ("disallowed", "/private/", 3)


def test_import_file_needs_the_moment_it_took_effect(inputs, tmp_path, capsys):
    status = crawl_audit(["history", "import-file", str(inputs["robots"]), "--host", "a.test", "--into", str(tmp_path / "r")])
    assert status == 2
    assert "--effective-from" in capsys.readouterr().err
