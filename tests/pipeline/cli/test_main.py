"""`crawl-audit check` and `lint` as a user runs them: output, JSON and exit codes."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from helpers import REPO
from pipeline.cli.main import EXIT_ERROR, main

ROBOTS = b"# example\nUser-agent: *\nDisallow: /\nUser-agent: Googlebot\nDisallow: /%7Euser/\nAllow: /\n"


@pytest.fixture
def robots_file(tmp_path):
    path = tmp_path / "robots.txt"
    path.write_bytes(ROBOTS)
    return str(path)


def test_check_prints_the_decision_chain(robots_file, capsys):
    code = main(["check", robots_file, "Googlebot-Image/1.0", "/~user/photo.jpg"])
    out = capsys.readouterr().out
    assert code == 1
    assert "/~user/photo.jpg: DISALLOWED" in out
    assert "tokens: googlebot-image, googlebot" in out
    assert "group:  User-agent: Googlebot (line 4)" in out
    assert "rule:   Disallow: /%7Euser/ (line 5), normalized /~user/" in out
    assert "why:    longest match: 7 octets beat 1 of Allow: / (line 6)" in out


def test_check_exits_zero_when_everything_is_allowed(robots_file, capsys):
    assert main(["check", robots_file, "Googlebot", "/about", "/robots.txt"]) == 0
    assert "robots.txt is always allowed" in capsys.readouterr().out


def test_check_json_is_one_object_per_url(robots_file, capsys):
    main(["check", "--json", robots_file, "Googlebot", "http://x.test/a?b", "/%7euser/"])
    objects = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert objects == [
        {"url": "http://x.test/a?b", "allowed": True, "reason": "rule",
         "rule": {"kind": "allow", "pattern": "/", "line": 6, "normalized": "/"}, "group": ["Googlebot"]},
        {"url": "/%7euser/", "allowed": False, "reason": "rule",
         "rule": {"kind": "disallow", "pattern": "/%7Euser/", "line": 5, "normalized": "/~user/"},
         "group": ["Googlebot"]},
    ]


def test_missing_file_is_one_line_error(tmp_path, capsys):
    code = main(["check", str(tmp_path / "absent.txt"), "Googlebot", "/"])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR
    assert err.count("\n") == 1 and "cannot read" in err and "absent.txt" in err


def test_lint_lists_findings_with_line_numbers(tmp_path, capsys):
    path = tmp_path / "robots.txt"
    path.write_text("Disallow: /early\nUser-agent: *\nDisalow: /x\nCrawl-delay: soon\n")
    code = main(["lint", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out == [
        f"{path}:1: rule-outside-group: disallow before any user-agent line; ignored",
        f"{path}:3: misspelled-field: 'Disalow' read as 'disallow'",
        f"{path}:4: invalid-crawl-delay: crawl-delay 'soon' is not a number of seconds",
    ]


def test_lint_of_a_clean_file_says_so_and_exits_zero(robots_file, capsys):
    assert main(["lint", robots_file]) == 0
    assert capsys.readouterr().out == f"{robots_file}: no findings\n"


def test_run_help_lists_every_option_a_run_reads_with_its_default(capsys):
    from pipeline.cli.parser import parser

    assert main(["run", "--help"]) == 0
    shown = capsys.readouterr().out
    commands = next(action for action in parser()._actions if isinstance(action, argparse._SubParsersAction))
    run_actions = commands.choices["run"]._actions
    flags = {flag for action in run_actions for flag in action.option_strings if flag not in ("-h", "--help")}
    assert {"--dns", "--dns-server", "--dns-record", "--trusted-proxies", "--overwrite", "--logs"} <= flags
    missing = sorted(flag for flag in flags if flag not in shown.split() and f"{flag}," not in shown)
    assert not missing, f"run --help leaves out {missing}"
    assert "(default: 24h)" in shown and "(default: 30d)" in shown and "(default: off)" in shown


def test_run_refuses_bad_identity_flags_at_launch_with_every_other_problem(tmp_path, capsys):
    argv = ["run", f"--logs={tmp_path / '*.log'}", f"--robots={tmp_path / 'r.jsonl'}", f"--out={tmp_path / 'out'}"]
    code = main([*argv, "--window=soon", "--dns-timeout=0", "--dns-retries=-1", "--trusted-proxies=lan"])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR
    assert err.splitlines() == [
        "crawl-audit: --window: not a duration: 'soon' (try 24h, 90m, 30d); "
        "--dns-timeout: expected a number of at least 0.001, got '0'; "
        "--dns-retries: expected a number of at least 0, got '-1'; "
        "--trusted-proxies: not a network or address: 'lan' (e.g. 10.0.0.0/8, 2001:db8::/32)"
        " (see crawl-audit run --help)"
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_reader_that_leaves_early_ends_the_command_quietly(tmp_path):
    """`crawl-audit run ... | head -c 1`: exit 0 and nothing on stderr, though the report was still
    being printed (unbuffered, so each print meets the closed pipe at once)."""
    command = [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))"]
    sample = [
        "run", "--logs", str(REPO / "samples/logs/*.log.gz"), "--log-format", "host_combined",
        "--robots", str(REPO / "samples/robots/history.jsonl"), "--ranges", str(REPO / "samples/ranges"),
        "--out", str(tmp_path / "out"), "--runner=FnApiRunner",
    ]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    audit = subprocess.run(
        [*command, *sample], stdout=reader.stdin, stderr=subprocess.PIPE, cwd=REPO, timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    reader.stdin.close()
    reader.wait(timeout=60)
    assert audit.returncode == 0, audit.stderr
    assert b"Broken pipe" not in audit.stderr and b"Traceback" not in audit.stderr
    assert (tmp_path / "out" / "report.html").exists()
