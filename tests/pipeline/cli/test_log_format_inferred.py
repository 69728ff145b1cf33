"""`--log-format auto` on files no preset reads: the layout inferred from their lines is printed as a
reusable `--log-format`, written in the manifest and used to read each file; a line it cannot read
is a dead letter."""
from __future__ import annotations

import contextlib
import io
import json
import shlex
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, read_jsonl, run_audit

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
# Envoy's default access-log format, the client in X-Forwarded-For, the Host in :authority
ENVOY = ('[2026-11-02T10:00:0{second}.250Z] "GET {path} HTTP/1.1" {status} - 0 512 3 2 "66.249.66.1" '
         f'"{GOOGLEBOT}" "cc21d9b0-cf5c-432b-8c7e-98aeb798800{{second}}" "www.example.com" "10.0.2.1:80"\n')
ENVOY_VALUE = ('apache:[%{%Y-%m-%dT%H:%M:%S.%f%z}t] "%r" %>s %{field4}e %b %{field6}e %{field7}e %{field8}e "%h" '
               '"%{User-Agent}i" "%{field11}e" "%{Host}i" "%{field13}e"')
ZEEK = {"ts": 1793613610.5, "uid": "CHhAvVGS1DHFjwGM9", "id.orig_h": "66.249.66.1", "id.orig_p": 46378,
        "id.resp_h": "10.0.0.5", "id.resp_p": 80, "method": "GET", "host": "www.example.com", "uri": "/search",
        "user_agent": GOOGLEBOT, "request_body_len": 0, "response_body_len": 512, "status_code": 200}


@pytest.fixture(scope="module")
def inferred_run(tmp_path_factory):
    """The run of a folder holding an Envoy text log and a Zeek JSON log: its folder, its logs and
    what it printed."""
    folder = tmp_path_factory.mktemp("inferred")
    logs = folder / "logs"
    logs.mkdir()
    (logs / "envoy.log").write_text(
        ENVOY.format(second=1, path="/search", status=200) + ENVOY.format(second=2, path="/search/about", status=200)
        + ENVOY.format(second=3, path="/a?sessionid=9", status=404) + "upstream connect error or disconnect\n")
    (logs / "zeek.log").write_text(json.dumps(ZEEK) + "\n" + json.dumps({**ZEEK, "uri": "/b", "ts": 1793613611.5}) + "\n")
    argv = [f"--logs={logs / '*.log'}", f"--robots={SAMPLES / 'robots' / 'history.jsonl'}",
            f"--ranges={SAMPLES / 'ranges'}", f"--out={folder / 'out'}", "--dns=off", "--log-format=auto"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert run_audit(argv) == 0
    return folder / "out", logs, printed.getvalue()


def _inferred_options(printed: str, log: Path) -> list[str]:
    """The options the run printed for LOG's inferred layout, as a shell passes them."""
    said = next(line for line in printed.splitlines() if line.startswith(f"log format of {log}: "))
    return shlex.split(said.split(" inferred ", 1)[1].rsplit(" (", 1)[0])


@pytest.mark.slow
def test_the_inferred_layout_is_printed_as_options_to_pass_again(inferred_run):
    _, logs, printed = inferred_run
    assert (f"log format of {logs / 'envoy.log'}: no known format; inferred --log-format {shlex.quote(ENVOY_VALUE)} "
            "(3 of 4 lines read, 75%)") in printed.splitlines()
    assert _inferred_options(printed, logs / "envoy.log") == ["--log-format", ENVOY_VALUE]
    zeek = _inferred_options(printed, logs / "zeek.log")
    assert zeek[:3] == ["--log-format", "jsonl", "--field-map"] and json.loads(zeek[3])["client_ip"] == "[id.orig_h]"


@pytest.mark.slow
def test_the_manifest_keeps_each_files_inferred_layout(inferred_run):
    out, logs, printed = inferred_run
    manifest = json.loads((out / "manifest.json").read_text())
    files = {Path(entry["path"]).name: entry for entry in manifest["inputs"]["log_files"]}
    assert files["envoy.log"]["log_format"] == ENVOY_VALUE
    assert files["envoy.log"]["log_format_inferred"] == {
        "option": f"--log-format {shlex.quote(ENVOY_VALUE)}", "read": 3, "sample": 4}
    assert files["zeek.log"]["log_format"] == "jsonl"
    assert files["zeek.log"]["field_map"] == json.loads(_inferred_options(printed, logs / "zeek.log")[3])


@pytest.mark.slow
def test_the_lines_are_audited_in_the_inferred_layout_and_the_rest_are_dead_letters(inferred_run):
    out, _, _ = inferred_run
    decided = sorted((v["path"], v["host"], v["client_ip"], v["status"], v["decision"])
                     for v in read_jsonl(out / "verdicts"))
    assert decided == [
        ("/a?sessionid=9", "www.example.com", "66.249.66.1", 404, "disallowed"),
        ("/b", "www.example.com", "66.249.66.1", 200, "allowed"),
        ("/search", "www.example.com", "66.249.66.1", 200, "disallowed"),
        ("/search", "www.example.com", "66.249.66.1", 200, "disallowed"),
        ("/search/about", "www.example.com", "66.249.66.1", 200, "allowed"),
    ]
    dead = read_jsonl(out / "dead_letters")
    assert [(row["reason"], row["raw"]) for row in dead] == [("no-match", "upstream connect error or disconnect")]
    assert json.loads((out / "manifest.json").read_text())["counts"]["dead_letters"] == 1


@pytest.mark.slow
def test_run_health_counts_the_lines_the_inferred_layout_does_not_read(inferred_run):
    _, _, printed = inferred_run
    assert "  [dead-letters] 1 of 6 lines (17%) could not be read as --log-format apache:[" in printed


def test_a_layout_inferred_from_too_few_lines_is_named_in_the_refusal(tmp_path, capsys):
    log = tmp_path / "odd.log"
    log.write_text(ENVOY.format(second=1, path="/a", status=200) + "upstream connect error\n" * 3)
    argv = [f"--logs={log}", f"--robots={SAMPLES / 'robots' / 'history.jsonl'}", f"--out={tmp_path / 'out'}",
            "--dns=off"]
    assert run_audit(argv) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith(f"crawl-audit: no log format reads enough of the first lines of {log}; best candidates: ")
    assert f"; the layout inferred from them reads 1 of 4: --log-format {shlex.quote(ENVOY_VALUE)}; " in said
    assert "\n" not in said and not (tmp_path / "out").exists()
