"""Web Bot Auth end to end, beside an independent implementation: requests signed by the project
and by `http-message-signatures` (dictionary-form Signature-Agent, a Host in another case or with
its default port, a browser's User-Agent from a signed agent, a signature that covers too little,
a nonce sent twice), written to a JSON Lines log and to an nginx log of a format string, audited
by `crawl-audit run`, and each verdict compared with the library's own on the same request."""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from helpers import read_jsonl, run_audit, write_jsonl, write_range_snapshot
from matcher.web_bot_auth import LoggedRequest, parse_signatures, signature_base
from pipeline.graph.signature_reuse import combine_seen, reused, signature_reuse_row, signatures_seen
from second_signer import Message, sign as peer_sign, verifies as peer_verifies

CHATGPT_USER = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
OPENAI, FORGER = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
NOW = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
ELSEWHERE = "192.0.2.10"  # outside ChatGPT-User's published range, 198.51.100.0/24
ITEM, DICTIONARY = '"https://chatgpt.com"', 'sig1="https://chatgpt.com"'
COVERED = ('"@authority"', '"signature-agent";key="sig1"')
JSON_FIELDS = {
    "ts": "time", "client_ip": "ip", "host": "host", "method": "method", "target": "uri", "user_agent": "ua",
    "signature_agent": "headers.signature-agent", "signature_input": "headers.signature-input",
    "signature": "headers.signature",
}
NGINX = (
    'nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_host" '
    '"$http_user_agent" "$http_signature_agent" "$http_signature_input" "$http_signature"'
)


@dataclass(frozen=True)
class Case:
    name: str
    user_agent: str
    host: str  # as logged
    agent: str | None
    signer: str | None  # "library", "project" or None
    components: tuple[str, ...] = COVERED
    uri: str = "/page"
    key: Ed25519PrivateKey = OPENAI
    nonce: str | None = None
    ip: str = ELSEWHERE
    # what the audit must say: identity, method, client kind, and a text the evidence holds
    identity: str = "verified"
    method: str = "web-bot-auth"
    kind: str = "crawler"
    evidence: str = "keyid k1 in openai keys 2026-11-01"
    library: bool = True  # the library's verdict on the same request


CASES = (
    Case("dictionary, signed by the library", CHATGPT_USER, "www.example.com", DICTIONARY, "library"),
    Case("dictionary, signed here", CHATGPT_USER, "www.example.com", DICTIONARY, "project"),
    Case("Host in capitals", CHATGPT_USER, "WWW.Example.com", ITEM, "library", ('"@authority"', '"signature-agent"')),
    Case("Host with port 443", CHATGPT_USER, "www.example.com:443", ITEM, "library", ('"@authority"', '"signature-agent"')),
    Case("query parameter and target URI", CHATGPT_USER, "www.example.com", DICTIONARY, "library",
         ('"@target-uri"', '"@query-param";name="q"', '"signature-agent";key="sig1"'), uri="/search?q=big+dog"),
    Case("signed agent", BROWSER, "www.example.com", ITEM, "library", ('"@authority"', '"signature-agent"'), kind="agent"),
    Case("signed agent, signed here", BROWSER, "www.example.com", DICTIONARY, "project", kind="agent"),
    Case("signed agent without a signature", BROWSER, "www.example.com", ITEM, None, kind="agent",
         identity="unverified", evidence="Signature-Agent without Signature and Signature-Input", library=False),
    Case("signed agent, forged", BROWSER, "www.example.com", DICTIONARY, "library", key=FORGER, kind="agent",
         identity="spoofed", evidence="bad signature for keyid k1", library=False),
    # GHSA-x9cc-346q-g27m: the library verifies it, and would on any site; the audit ignores it
    Case("no @authority", CHATGPT_USER, "www.example.com", DICTIONARY, "library",
         ('"@method"', '"@path"', '"signature-agent";key="sig1"'), identity="spoofed", method="ip-range",
         evidence="; signature ignored: does not cover @authority"),
    Case("Signature-Agent not covered", CHATGPT_USER, "www.example.com", DICTIONARY, "project", ('"@authority"', '"@path"'),
         identity="spoofed", method="ip-range", evidence="; signature ignored: does not cover Signature-Agent"),
    Case("nonce, first", CHATGPT_USER, "www.example.com", DICTIONARY, "library", uri="/a", nonce="n-twice"),
    Case("nonce, again", CHATGPT_USER, "www.example.com", DICTIONARY, "project", uri="/b", nonce="n-twice"),
)


def _at(index: int) -> datetime:
    return NOW + timedelta(seconds=index)


def _headers(case: Case, index: int) -> dict[str, str]:
    """The request's signature headers, signed by the library or by the project's own base."""
    headers = {"Signature-Agent": case.agent} if case.agent else {}
    created = _at(index)
    if case.signer == "library":
        message = Message("GET", f"https://{case.host}{case.uri}", dict(headers))
        headers["Signature-Input"], headers["Signature"] = peer_sign(
            case.key, "k1", message, case.components, created, nonce=case.nonce
        )
    elif case.signer == "project":
        nonce = f';nonce="{case.nonce}"' if case.nonce else ""
        params = (
            f'({" ".join(case.components)});created={int(created.timestamp())};'
            f'expires={int(created.timestamp()) + 300}{nonce};keyid="k1";alg="ed25519";tag="web-bot-auth"'
        )
        (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
        fields = {"signature-agent": case.agent} if case.agent else {}
        base, problem = signature_base(signature, LoggedRequest("GET", case.host, case.uri, fields))
        assert problem is None
        headers["Signature-Input"] = f"sig1={params}"
        headers["Signature"] = f"sig1=:{base64.b64encode(case.key.sign(base)).decode()}:"
    return headers


def _nginx_escaped(value: str | None) -> str:
    return "-" if value is None else value.replace("\\", "\\x5C").replace('"', "\\x22")


def _nginx_line(case: Case, index: int, headers: dict[str, str]) -> str:
    stamp = _at(index).strftime("%d/%b/%Y:%H:%M:%S +0000")
    values = (case.host, case.user_agent, headers.get("Signature-Agent"), headers.get("Signature-Input"), headers.get("Signature"))
    return f'{case.ip} - - [{stamp}] "GET {case.uri} HTTP/1.1" 200 512 ' + " ".join(f'"{_nginx_escaped(v)}"' for v in values)


def _jwk(private: Ed25519PrivateKey) -> dict:
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


@dataclass(frozen=True)
class Runs:
    verdicts: dict[str, list[dict]]  # by log kind, in the cases' order
    reuse: dict[str, list[dict]]
    summary: dict[str, list[dict]]
    report: dict[str, str]
    library: list[bool]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    """One audit of the cases logged as JSON Lines and one of them logged by nginx."""
    root = tmp_path_factory.mktemp("signed")
    ranges = root / "ranges"
    write_range_snapshot(ranges, "openai-chatgpt-user", "2026-11-01", "198.51.100.0/24")
    keys = ranges / "key-directories" / "openai"
    keys.mkdir(parents=True)
    (keys / "2026-11-01.json").write_text(json.dumps({"keys": [_jwk(OPENAI)]}))
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /b\n")
    write_jsonl(root / "robots.jsonl", [
        {"host": "www.example.com", "effective_from": "2025-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"},
    ])
    made = [_headers(case, index) for index, case in enumerate(CASES)]
    library = [
        "Signature" in headers
        and peer_verifies({"k1": OPENAI.public_key()}, Message("GET", f"https://{case.host}{case.uri}", headers), _at(index))
        for index, (case, headers) in enumerate(zip(CASES, made))
    ]
    write_jsonl(root / "access.jsonl", [
        {
            "time": _at(index).isoformat(), "ip": case.ip, "host": case.host, "method": "GET", "uri": case.uri,
            "ua": case.user_agent, "headers": {name.lower(): value for name, value in headers.items()},
        }
        for index, (case, headers) in enumerate(zip(CASES, made))
    ])
    (root / "access.log").write_text("".join(_nginx_line(c, i, h) + "\n" for i, (c, h) in enumerate(zip(CASES, made))))
    logs = {
        "jsonl": [f"--logs={root / 'access.jsonl'}", "--log-format=jsonl", f"--field-map={json.dumps(JSON_FIELDS)}"],
        "nginx": [f"--logs={root / 'access.log'}", f"--log-format={NGINX}"],
    }
    found: dict[str, dict] = {"verdicts": {}, "reuse": {}, "summary": {}, "report": {}}
    for kind, log in logs.items():
        out = root / kind
        assert run_audit([
            *log, f"--robots={root / 'robots.jsonl'}", f"--ranges={ranges}", f"--out={out}", "--runner=FnApiRunner",
        ]) == 0
        verdicts = sorted(read_jsonl(out / "verdicts"), key=lambda v: int(v["source"].rsplit(":", 1)[1]))
        found["verdicts"][kind] = verdicts
        found["reuse"][kind] = read_jsonl(out / "signature_reuse", "*.jsonl")
        found["summary"][kind] = read_jsonl(out / "summary", "*.jsonl")
        found["report"][kind] = (out / "report.html").read_text()
    return Runs(found["verdicts"], found["reuse"], found["summary"], found["report"], library)


LOGS = ("jsonl", "nginx")


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS)
def test_every_logged_request_gets_a_verdict(runs, log):
    assert len(runs.verdicts[log]) == len(CASES)


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS)
@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_each_verdict_beside_the_librarys(runs, log, index):
    case, verdict = CASES[index], runs.verdicts[log][index]
    assert runs.library[index] == case.library, "the independent implementation's verdict"
    assert (verdict["identity"], verdict["identity_method"], verdict["client_kind"]) == (case.identity, case.method, case.kind)
    assert case.evidence in verdict["identity_evidence"], verdict["identity_evidence"]
    if case.signer is not None and case.method == "web-bot-auth":
        # where the audit judges the signature, it agrees with the library
        assert (verdict["identity"] == "verified") == runs.library[index]


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS)
def test_a_signed_agent_is_named_with_its_operator_and_purpose(runs, log):
    agents = [v for v, case in zip(runs.verdicts[log], CASES) if case.kind == "agent"]
    assert {(v["crawler"], v["operator"], tuple(v["purpose"]), tuple(v["tokens"])) for v in agents} == {
        ("ChatGPT agent", "OpenAI", ("ai-user-triggered",), ()),
    }
    rows = {(r["crawler"], r["identity"]): r["requests"] for r in runs.summary[log] if r["client_kind"] == "agent"}
    assert rows == {("ChatGPT agent", "verified"): 2, ("ChatGPT agent", "unverified"): 1, ("ChatGPT agent", "spoofed"): 1}
    assert all(r["crawler"] != "ChatGPT agent" for r in runs.summary[log] if r["client_kind"] != "agent")
    assert 'id="agents-table"' in runs.report[log] and "ChatGPT agent" in runs.report[log]


@pytest.mark.slow
@pytest.mark.parametrize("log", LOGS)
def test_a_nonce_sent_in_two_signatures_is_listed_and_changes_no_verdict(runs, log):
    nonce = [r for r in runs.reuse[log] if r["kind"] == "nonce"]
    assert [(r["signature"], r["crawler"], r["requests"], r["verified"]) for r in nonce] == [
        ("k1 n-twice", "ChatGPT-User", 2, 2)
    ]
    assert [r for r in runs.reuse[log] if r["kind"] == "signature"] == []


def test_reuse_rows_of_signatures_and_nonces_from_verdicts():
    def verdict(second: int, signature: str, signature_input: str | None) -> dict:
        return {
            "ts": NOW + timedelta(seconds=second), "signature": signature, "signature_input": signature_input,
            "identity": "verified", "identity_method": "web-bot-auth", "crawler": "ChatGPT-User", "operator": "OpenAI",
        }
    created = int(NOW.timestamp())
    with_nonce = f'sig1=("@authority");created={created};expires={created + 60};keyid="k1";nonce="n";tag="web-bot-auth"'
    verdicts = [verdict(0, "sig1=:AA==:", with_nonce), verdict(30, "sig1=:AQ==:", with_nonce), verdict(40, "sig1=:AA==:", None)]
    grouped: dict = {}
    for key, seen in signatures_seen(verdicts):
        grouped.setdefault(key, []).append(seen)
    rows = [signature_reuse_row(key, combine_seen(seen)) for key, seen in grouped.items() if reused(key, combine_seen(seen))]
    assert sorted((r["kind"], r["signature"], r["requests"]) for r in rows) == [
        ("nonce", "k1 n", 2), ("signature", "sig1=:AA==:", 2),
    ]
    # the nonce again after its signature expired is no reuse
    late = [verdict(0, "sig1=:AA==:", with_nonce), verdict(200, "sig1=:AQ==:", with_nonce)]
    keyed = [(key, seen) for key, seen in signatures_seen(late) if key[0] == "nonce"]
    assert not reused(keyed[0][0], combine_seen(seen for _, seen in keyed))
