"""Web Bot Auth end to end: key directories served over loopback HTTPS, snapshotted by
`crawl-audit update-ranges`, then signatures made here over logged requests judged by `run`
and `verify`: valid, tampered, expired, another operator's key, replayed, and a bad signature
from an address the ranges prove."""
from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from config.registry import DEFAULT_PATH
from loopback import Server
from matcher.web_bot_auth import LoggedRequest, parse_signatures, signature_base
from pipeline.evidence import ranges_update

from helpers import crawl_audit, read_jsonl, run_audit, write_jsonl, write_range_snapshot

CHATGPT_USER = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
OPENAI_KEY, GOOGLE_KEY = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
DIRECTORY = "/.well-known/http-message-signatures-directory"
# the log's time; the snapshots are taken when the test runs, possibly after midnight, so the
# expected evidence names the day each snapshot was actually taken
NOW = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=10)
FIELD_MAP = {
    "ts": "time", "client_ip": "ip", "host": "host", "method": "method", "target": "uri", "user_agent": "ua",
    "signature_agent": "headers.signature-agent", "signature_input": "headers.signature-input",
    "signature": "headers.signature",
}


def jwk(private: Ed25519PrivateKey, kid: str) -> dict:
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


def _route(handler) -> None:
    directories = {
        DIRECTORY: {"keys": [jwk(OPENAI_KEY, "openai-1")]},
        "/google" + DIRECTORY: {"keys": [jwk(GOOGLE_KEY, "google-1")]},
        "/huge" + DIRECTORY: {"keys": [jwk(GOOGLE_KEY, "padding-" + "x" * 70_000)]},
    }
    if handler.path in directories:
        body = json.dumps(directories[handler.path]).encode()
        handler.answer(200, body, {"Content-Type": "application/http-message-signatures-directory+json"})
    else:
        handler.answer(404)


@pytest.fixture
def world(tls, tmp_path: Path, capsys):
    """A registry whose OpenAI and Google key directories are on the test server, and their
    snapshots taken by `update-ranges`."""
    with Server(tls, _route) as server:
        base = f"https://127.0.0.1:{server.port}"
        document = yaml.safe_load(DEFAULT_PATH.read_text())
        document["key_directories"] = {
            "openai": {"operator": "OpenAI", "url": base + DIRECTORY, "source": base, "signers": "test agents"},
            "google": {"operator": "Google", "url": base + "/google" + DIRECTORY, "source": base, "signers": "test"},
            "huge": {"operator": "Google", "url": base + "/huge" + DIRECTORY, "source": base, "signers": "test"},
        }
        registry = tmp_path / "registry.yaml"
        registry.write_text(yaml.safe_dump(document, sort_keys=False))
        ranges = tmp_path / "ranges"
        before = datetime.now(timezone.utc).date()
        status = crawl_audit([
            "update-ranges", "--registry", str(registry), "--ranges", str(ranges), "--ca-file", str(tls.ca),
            "--source", "openai", "--source", "google", "--source", "huge",
        ])
        taken = {before.isoformat(), datetime.now(timezone.utc).date().isoformat()}
        yield base, registry, ranges, (status, capsys.readouterr().out, taken)


def taken_on(ranges: Path, directory: str) -> str:
    """The day of the one snapshot of `directory`."""
    (snapshot,) = (ranges / "key-directories" / directory).glob("*.json")
    return snapshot.stem


def sign(private, kid: str, agent: str, authority: str, created: datetime, lifetime: int = 300) -> tuple[str, str]:
    params = (
        f'("@authority" "signature-agent");created={int(created.timestamp())};expires={int(created.timestamp()) + lifetime};'
        f'keyid="{kid}";alg="ed25519";tag="web-bot-auth"'
    )
    (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
    base, _ = signature_base(signature, LoggedRequest("GET", authority, "/", {"signature-agent": agent}))
    return f"sig1={params}", f"sig1=:{base64.b64encode(private.sign(base)).decode()}:"


@pytest.mark.slow
def test_key_directories_are_snapshotted_with_a_size_cap(world):
    _, _, ranges, (status, out, taken) = world
    day = taken_on(ranges, "openai")
    assert day in taken  # dated by the UTC day it was taken
    assert json.loads((ranges / "key-directories" / "openai" / f"{day}.json").read_text())["keys"][0]["kid"] == "openai-1"
    assert taken_on(ranges, "google") in taken
    assert not (ranges / "key-directories" / "huge").exists()
    assert status == 1  # the directory over the cap was not saved
    assert "openai: 1 keys -> " in out
    assert f"huge: NOT SAVED\n  {world[0]}/huge{DIRECTORY} is larger than {ranges_update.MAX_KEY_DIRECTORY_BYTES} bytes" in out


@pytest.mark.slow
def test_signed_requests_through_run_and_verify(world, tmp_path, capsys):
    base, registry, ranges, _ = world
    day, keys_day = NOW.date().isoformat(), taken_on(ranges, "openai")
    write_range_snapshot(ranges, "openai-chatgpt-user", day, "198.51.100.0/24")
    agent = f'"{base}"'
    authority = "www.example.com:8443"
    valid = sign(OPENAI_KEY, "openai-1", agent, authority, NOW)
    in_range_note = f"198.51.100.0/24 in openai-chatgpt-user snapshot {day}; signature: "
    cases = [
        # (ip, authority as logged, (signature-input, signature), identity, method, evidence starts with)
        ("192.0.2.10", authority, valid, "verified", "web-bot-auth", f"keyid openai-1 in openai keys {keys_day}"),
        # the same signature again within its window
        ("192.0.2.11", authority, valid, "verified", "web-bot-auth", f"keyid openai-1 in openai keys {keys_day}"),
        ("192.0.2.12", "www.example.com:8444", valid, "spoofed", "web-bot-auth", "bad signature for keyid openai-1"),
        ("192.0.2.13", authority, sign(OPENAI_KEY, "openai-1", agent, authority, NOW - timedelta(hours=2)),
         "spoofed", "web-bot-auth", "signature expired"),
        ("192.0.2.14", authority, sign(GOOGLE_KEY, "google-1", agent, authority, NOW),
         "spoofed", "web-bot-auth", f"keyid google-1 is a key of Google (google keys {taken_on(ranges, 'google')}"),
        # a key the snapshot does not hold says nothing; the complete range list decides
        ("192.0.2.15", authority, sign(OPENAI_KEY, "openai-9", agent, authority, NOW),
         "spoofed", "ip-range", f"not in openai-chatgpt-user snapshot {day}; signature: keyid openai-9 not in openai keys"),
        # a bad signature from an address the ranges prove: verified by the range, the failure noted
        ("198.51.100.7", "www.example.com:8444", valid, "verified", "ip-range", in_range_note + "bad signature"),
    ]
    rows = [
        {
            "time": (NOW + timedelta(seconds=index)).isoformat(), "ip": ip, "host": logged, "method": "GET", "uri": "/",
            "ua": CHATGPT_USER, "headers": {"signature-agent": agent, "signature-input": signed[0], "signature": signed[1]},
        }
        for index, (ip, logged, signed, *_) in enumerate(cases)
    ]
    write_jsonl(tmp_path / "access.jsonl", rows)
    (tmp_path / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    write_jsonl(tmp_path / "robots.jsonl", [
        {"host": "www.example.com", "effective_from": "2025-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"},
    ])
    assert run_audit([
        f"--logs={tmp_path / 'access.jsonl'}", "--log-format=jsonl", f"--field-map={json.dumps(FIELD_MAP)}",
        f"--robots={tmp_path / 'robots.jsonl'}", f"--ranges={ranges}", f"--registry={registry}",
        f"--out={tmp_path / 'out'}", "--runner=FnApiRunner",
    ]) == 0
    verdicts = sorted(read_jsonl(tmp_path / "out" / "verdicts"), key=lambda v: int(v["source"].rsplit(":", 1)[1]))
    assert len(verdicts) == len(cases)
    for verdict, (ip, _, _, identity, method, evidence) in zip(verdicts, cases):
        assert (verdict["client_ip"], verdict["identity"], verdict["identity_method"]) == (ip, identity, method)
        assert verdict["identity_evidence"].startswith(evidence), verdict["identity_evidence"]

    # the valid signature was sent twice within its window, and once more with a changed authority
    reuse = read_jsonl(tmp_path / "out" / "signature_reuse", "*.jsonl")
    assert [(r["signature"], r["crawler"], r["requests"], r["verified"]) for r in reuse] == [
        (valid[1], "ChatGPT-User", 4, 2)
    ]
    assert reuse[0]["first_ts"] == NOW.isoformat().replace("+00:00", "Z")

    capsys.readouterr()
    for index, (ip, logged, signed, identity, method, evidence) in enumerate(cases):
        status = crawl_audit([
            "verify", ip, CHATGPT_USER, "--ranges", str(ranges), "--registry", str(registry), "--json",
            "--at", (NOW + timedelta(seconds=index)).isoformat(), "--authority", logged,
            "--signature-agent", agent, "--signature-input", signed[0], "--signature", signed[1],
        ])
        shown = json.loads(capsys.readouterr().out)
        assert (shown["identity"], shown["method"]) == (identity, method)
        assert shown["evidence"].startswith(evidence)
        assert status == (0 if identity == "verified" else 1)
