"""`--log-format auto`, the default: each file's format told from its first lines, said, and kept in
the manifest; a file no format reads is refused before any work, with the best candidates."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, run_audit

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
COMBINED = f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"\n'
# IIS with a blank line after its directives and a value padded with spaces.
IIS = (
    "#Software: Microsoft Internet Information Services 10.0\r\n"
    "#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer)"
    " sc-status sc-substatus sc-win32-status time-taken\r\n"
    "\r\n"
    "2026-11-02 10:00:02  10.0.0.4 GET /c - 443 -   66.249.66.1 Mozilla/5.0+(compatible;+Googlebot/2.1;"
    "++http://www.google.com/bot.html) - 200 0 0 15\r\n"
)
CLOUDFLARE = json.dumps({"EdgeStartTimestamp": 1793613600, "ClientIP": "66.249.66.1", "ClientRequestHost": "www.example.com",
                         "ClientRequestMethod": "GET", "ClientRequestURI": "/b", "EdgeResponseStatus": 200,
                         "ClientRequestUserAgent": GOOGLEBOT}) + "\n"


def _argv(logs: Path, out: Path, *extra: str) -> list[str]:
    return [f"--logs={logs}", f"--robots={SAMPLES / 'robots' / 'history.jsonl'}", f"--ranges={SAMPLES / 'ranges'}",
            f"--out={out}", "--default-host=www.example.com", "--dns=off", *extra]


TRAEFIK = COMBINED.replace("\n", ' 1 "web@docker" "http://172.18.0.3:80" 3ms\n')
W3C_HEADERS = "#Version: 1.0\n#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent)\n"
W3C = "2026-11-02 10:00:00 66.249.66.1 GET /c 200 Mozilla/5.0+(compatible;+Googlebot/2.1)\n"


@pytest.mark.slow
def test_each_file_is_read_in_the_format_its_lines_are_in(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(COMBINED * 3 + '198.51.100.7 - - [02/Nov/2026:10:00:01 +0000] "-" 408 0 "-" "-"\n')
    with gzip.open(logs / "b.log.gz", "wt") as handle:
        handle.write(CLOUDFLARE * 2)
    (logs / "c.log").write_bytes(IIS.encode())
    # half its lines garbled, and no other format reads the rest: taken, the garbled lines dead letters
    (logs / "d.log").write_text((TRAEFIK + "garbled\n") * 4)
    # the headers are read but not counted: three of the four requests
    (logs / "e.log").write_text(W3C_HEADERS + W3C * 3 + "2026-11-02 10:00:01 garbled\n")
    assert run_audit(_argv(logs / "*", tmp_path / "out")) == 0
    printed = capsys.readouterr().out
    assert f"log format of {logs / 'a.log'}: combined (4 of 4 lines read, 100%)" in printed
    assert f"log format of {logs / 'b.log.gz'}: cloudflare (2 of 2 lines read, 100%)" in printed
    assert f"log format of {logs / 'c.log'}: w3c (1 of 1 lines read, 100%)" in printed
    assert f"log format of {logs / 'd.log'}: traefik (4 of 8 lines read, 50%)" in printed
    assert f"log format of {logs / 'e.log'}: w3c (3 of 4 lines read, 75%)" in printed
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {Path(f["path"]).name: f["log_format"] for f in manifest["inputs"]["log_files"]} == {
        "a.log": "combined", "b.log.gz": "cloudflare", "c.log": "w3c", "d.log": "traefik", "e.log": "w3c"}
    assert manifest["options"]["log_format"] == "auto"
    counts = manifest["counts"]
    # the blank line is no request, not an unreadable line the run would warn of
    assert (counts["verdicts"], counts["not_requests"], counts["not_request_reasons"], counts["dead_letters"]) == (
        13, 6, {"no-request": 1, "directive": 4, "blank": 1}, 5)
    assert "not requests                6  (" in printed
    assert "[dead-letters] 5 of" in printed


def test_a_file_no_format_reads_is_refused_with_the_best_candidates(tmp_path, capsys):
    log = tmp_path / "odd.log"
    log.write_text(COMBINED + "something else\n" * 3)
    assert run_audit(_argv(log, tmp_path / "out")) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("crawl-audit: no log format reads enough of the first lines of ")
    assert "best candidates: combined (1 of 4 lines read, 25%)" in said
    assert "--log-format 'nginx:<your log_format>'" in said and "docs/logformats.md#your-servers-own-format" in said
    assert "\n" not in said and not (tmp_path / "out").exists()


def test_a_field_map_that_cannot_work_is_refused_at_launch(tmp_path, capsys):
    log = tmp_path / "a.log"
    log.write_text(CLOUDFLARE)
    assert run_audit(_argv(log, tmp_path / "out", '--field-map={"ts": "t"}')) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("crawl-audit: --log-format jsonl: a mapping needs 'ts', 'client_ip'") and "\n" not in said


@pytest.mark.slow
def test_times_without_a_zone_are_read_in_the_zone_given_and_the_run_says_so(tmp_path, capsys):
    log = tmp_path / "haproxy.log"
    log.write_text('66.249.66.1:33317 [02/Nov/2026:11:00:00.655] in st/s1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 "GET /a HTTP/1.1"\n')
    assert run_audit(_argv(log, tmp_path / "out", "--log-timezone=Europe/Paris")) == 0
    printed = capsys.readouterr().out
    assert "haproxy times carry no zone: read as Europe/Paris (--log-timezone)" in printed
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["options"]["log_timezone"] == "Europe/Paris"
    assert run_audit(_argv(log, tmp_path / "out2", "--log-timezone=Mars/Olympus")) == 2
    assert "--log-timezone: unknown time zone 'Mars/Olympus'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_servers_own_format_string_is_read_and_a_broken_one_refused_at_launch(tmp_path, capsys):
    # Nginx Proxy Manager's stock format: its lines start with `[`, which makes them no JSON export
    log = tmp_path / "proxy-host-1_access.log"
    log.write_text(
        f'[02/Nov/2026:10:00:00 +0000] - 200 200 - GET https www.example.com "/a" [Client 66.249.66.1] [Length 5] '
        f'[Gzip -] [Sent-to 10.0.0.1] "{GOOGLEBOT}" "-"\n'
        f'[02/Nov/2026:10:00:01 +0000] - - 499 - GET https www.example.com "/b" [Client 66.249.66.1] [Length 0] '
        f'[Gzip -] [Sent-to 10.0.0.1, 10.0.0.2] "{GOOGLEBOT}" "-"\n'
    )
    spec = ('nginx:[$time_local] $upstream_cache_status $upstream_status $status - $request_method $scheme $host '
            '"$request_uri" [Client $remote_addr] [Length $body_bytes_sent] [Gzip $gzip_ratio] [Sent-to $server] '
            '"$http_user_agent" "$http_referer"')
    assert run_audit(_argv(log, tmp_path / "out", f"--log-format={spec}")) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"]["verdicts"] == 2 and manifest["options"]["log_format"] == spec
    assert manifest["counts"]["dead_letters"] == 0
    capsys.readouterr()
    assert run_audit(_argv(log, tmp_path / "out2", '--log-format=nginx:$host "$request"')) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("crawl-audit: ") and "lacks the client address" in said and "\n" not in said


@pytest.mark.slow
def test_xz_and_zstd_files_and_enveloped_lines_are_read(tmp_path, capsys):
    import lzma

    import zstandard

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log.xz").write_bytes(lzma.compress(("<190>Nov  2 10:00:00 web1 nginx: " + COMBINED).encode() * 2))
    frames = zstandard.ZstdCompressor().compress(CLOUDFLARE.encode()) * 2  # two frames, as `zstd -c a b` writes
    (logs / "b.log.zst").write_bytes(frames)
    assert run_audit(_argv(logs / "*", tmp_path / "out")) == 0
    printed = capsys.readouterr().out
    assert f"log format of {logs / 'a.log.xz'}: syslog+combined (2 of 2 lines read, 100%)" in printed
    assert f"log format of {logs / 'b.log.zst'}: cloudflare (2 of 2 lines read, 100%)" in printed
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]
    assert (counts["lines"], counts["verdicts"], counts["dead_letters"]) == (4, 4, 0)


@pytest.mark.slow
def test_a_json_export_an_array_or_entries_pretty_printed_is_read_entry_by_entry(tmp_path, capsys):
    entry = {"timestamp": "2026-11-02T10:00:00.123456789Z", "httpRequest": {
        "remoteIp": "66.249.66.1:9989", "requestMethod": "GET", "requestUrl": "https://www.example.com/a",
        "status": 200, "userAgent": GOOGLEBOT}}
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "array.json").write_text(json.dumps([entry, entry], indent=2))
    (logs / "pretty.json").write_text(json.dumps(entry, indent=2) + "\n" + json.dumps(entry, indent=2) + "\n")
    assert run_audit(_argv(logs / "*", tmp_path / "out")) == 0
    printed = capsys.readouterr().out
    assert f"log format of {logs / 'array.json'}: gcp_lb (2 of 2 lines read, 100%)" in printed
    assert f"log format of {logs / 'pretty.json'}: gcp_lb (2 of 2 lines read, 100%)" in printed
    counts = json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]
    assert (counts["lines"], counts["verdicts"], counts["dead_letters"]) == (4, 4, 0)
    verdicts = [json.loads(line) for part in (tmp_path / "out" / "verdicts").glob("part*") for line in part.read_text().splitlines()]
    assert {v["client_ip"] for v in verdicts} == {"66.249.66.1"} and {v["identity"] for v in verdicts} <= {"verified", "unverified"}


@pytest.mark.slow
def test_a_cloudfront_real_time_log_is_read_with_its_field_list_and_a_broken_list_refused(tmp_path, capsys):
    log = tmp_path / "realtime.log"
    log.write_text(f"1793613600.123\t66.249.66.1\tGET\twww.example.com\t/a\t{GOOGLEBOT.replace(' ', '%20')}\n")
    spec = "cloudfront_realtime:timestamp,c-ip,cs-method,cs-host,cs-uri-stem,cs-user-agent"
    assert run_audit(_argv(log, tmp_path / "out", f"--log-format={spec}")) == 0
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["counts"]["verdicts"] == 1
    capsys.readouterr()
    assert run_audit(_argv(log, tmp_path / "out2", "--log-format=cloudfront_realtime:timestamp,c-ip")) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("crawl-audit: ") and "lacks the method, the request path, the User-Agent" in said
    assert "\n" not in said


@pytest.mark.slow
def test_a_damaged_file_is_named_and_made_a_dead_letter_while_the_others_run(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(COMBINED * 3)
    (logs / "b.log.gz").write_bytes(b"this was never gzip\n" * 10)
    assert run_audit(_argv(logs / "*", tmp_path / "out")) == 0
    printed = capsys.readouterr().out
    assert f"log format of {logs / 'b.log.gz'}: none, the file cannot be read (BadGzipFile: " in printed
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert (manifest["counts"]["verdicts"], manifest["counts"]["dead_letters"]) == (3, 1)
    (dead,) = [json.loads(line) for path in (tmp_path / "out" / "dead_letters").glob("*") for line in path.open()]
    assert dead["source"].startswith(str(logs / "b.log.gz")) and dead["reason"] == "unreadable-rest-of-file"
