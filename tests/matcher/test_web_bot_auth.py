"""Web Bot Auth (`matcher.web_bot_auth`): RFC 9421's own Ed25519 example, the signature base from
logged components, the validity window, and the verdicts against key snapshots made here."""
from __future__ import annotations

import base64
from datetime import date, datetime, timedelta, timezone

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from matcher.web_bot_auth import (
    KeyDirectories,
    LoggedRequest,
    SignedRequest,
    check_request,
    parse_key_snapshot,
    parse_signatures,
    signature_agent_url,
    signature_base,
    verify_signature,
)

# RFC 9421 Appendix B.1.4 (test-key-ed25519, public part) and B.2.6 (signing with it)
RFC_KEY = {"kty": "OKP", "crv": "Ed25519", "kid": "test-key-ed25519", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}
RFC_INPUT = 'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"'
RFC_SIGNATURE = "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:"
RFC_REQUEST = LoggedRequest(
    "POST", "example.com", "/foo?param=Value&Pet=dog",
    {"date": "Tue, 20 Apr 2021 02:07:55 GMT", "content-type": "application/json", "content-length": "18"},
)
RFC_BASE = (
    '"date": Tue, 20 Apr 2021 02:07:55 GMT\n'
    '"@method": POST\n'
    '"@path": /foo\n'
    '"@authority": example.com\n'
    '"content-type": application/json\n'
    '"content-length": 18\n'
    '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length")'
    ';created=1618884473;keyid="test-key-ed25519"'
)


def test_the_rfc_9421_ed25519_example_verifies():
    (signature,), problem = parse_signatures(RFC_INPUT, RFC_SIGNATURE)
    assert problem is None and signature.keyid == "test-key-ed25519"
    base, missing = signature_base(signature, RFC_REQUEST)
    assert (base, missing) == (RFC_BASE.encode(), None)
    snapshot, problems = parse_key_snapshot("rfc", "Example", date(2021, 4, 20), {"keys": [RFC_KEY]})
    assert problems == ()
    key = snapshot.keys["test-key-ed25519"][0]
    assert verify_signature(key, base, signature.value)
    # RFC 9421 §2.2.3: @authority is lower case and drops the default port, so these are one
    for host in ("EXAMPLE.com", "example.com:443"):
        logged = LoggedRequest("POST", host, RFC_REQUEST.target, RFC_REQUEST.fields)
        assert signature_base(signature, logged) == (RFC_BASE.encode(), None)
    # one byte of one component changed: the same signature no longer holds
    for host in ("example.com:8443", "example.org"):
        changed = LoggedRequest("POST", host, RFC_REQUEST.target, RFC_REQUEST.fields)
        assert not verify_signature(key, signature_base(signature, changed)[0], signature.value)
    # port 80 is the default of http only
    assert b'"@authority": example.com:80\n' in signature_base(signature, LoggedRequest("POST", "example.com:80", "/foo", RFC_REQUEST.fields))[0]
    http = LoggedRequest("POST", "example.com:80", "/foo", RFC_REQUEST.fields, scheme="http")
    assert b'"@authority": example.com\n' in signature_base(signature, http)[0]


def test_a_component_the_log_does_not_carry_is_named():
    (signature,), _ = parse_signatures(RFC_INPUT, RFC_SIGNATURE)
    bare = LoggedRequest("POST", "example.com", "/foo", {})
    assert signature_base(signature, bare) == (None, 'signed component "date" is not in the log')


@pytest.mark.parametrize(
    "header, url",
    [
        ('"https://chatgpt.com"', "https://chatgpt.com/.well-known/http-message-signatures-directory"),
        ('sig1="https://Agent.Example/"', "https://agent.example/.well-known/http-message-signatures-directory"),
        ('"https://agent.example/keys.json"', "https://agent.example/keys.json"),
        ('"http://agent.example"', None),
        ("not a structured field (", None),
    ],
)
def test_the_signature_agent_names_a_directory(header, url):
    assert signature_agent_url(header) == url


# ------------------------------------------------------------------ verdicts on logged requests

NOW = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
OWN, OTHER = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()


def jwk(private: Ed25519PrivateKey, kid: str) -> dict:
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


def directories() -> KeyDirectories:
    own, _ = parse_key_snapshot("openai", "OpenAI", date(2026, 11, 1), {"keys": [jwk(OWN, "own-1")]})
    other, _ = parse_key_snapshot("elsewhere", "Elsewhere", date(2026, 11, 1), {"keys": [jwk(OTHER, "other-1")]})
    urls = {"openai": "https://chatgpt.com/.well-known/http-message-signatures-directory", "elsewhere": "https://elsewhere.example/.well-known/http-message-signatures-directory"}
    return KeyDirectories([own, other], urls, {"openai": "OpenAI", "elsewhere": "Elsewhere"})


def signed(private, kid: str, *, authority: str = "www.example.com:8443", created: datetime = NOW, lifetime: int = 300):
    request = LoggedRequest("GET", authority, "/page", {"signature-agent": '"https://chatgpt.com"'})
    params = (
        f'("@authority" "signature-agent");created={int(created.timestamp())};'
        f'expires={int(created.timestamp()) + lifetime};keyid="{kid}";alg="ed25519";tag="web-bot-auth"'
    )
    (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
    base, _ = signature_base(signature, request)
    value = base64.b64encode(private.sign(base)).decode()
    return request, f"sig1={params}", f"sig1=:{value}:"


def test_valid_tampered_expired_and_foreign_signatures():
    keys = directories()
    def check(request, signature_input, signature, at=NOW):
        return check_request(SignedRequest(request, signature_input, signature), "OpenAI", keys, at)

    good = check(*signed(OWN, "own-1"))
    assert (good.status, good.evidence) == ("verified", "keyid own-1 in openai keys 2026-11-01")
    request, signature_input, signature = signed(OWN, "own-1")
    # the port is part of @authority as logged: a log that dropped it cannot prove the signature
    moved = LoggedRequest(request.method, "www.example.com", request.target, request.fields)
    assert check(moved, signature_input, signature).status == "spoofed"
    expired = check(*signed(OWN, "own-1", created=NOW - timedelta(hours=1)))
    assert expired.status == "spoofed" and "expired 2026-11-02T09:05:00Z" in expired.evidence
    foreign = check(*signed(OTHER, "other-1"))
    assert foreign == type(foreign)(
        "spoofed", "keyid other-1 is a key of Elsewhere (elsewhere keys 2026-11-01), not of OpenAI", "Elsewhere"
    )
    rotated = check(*signed(OWN, "own-2"))
    assert (rotated.status, rotated.evidence) == ("unverified", "keyid own-2 not in openai keys 2026-11-01 (a rotated key?)")


def test_a_directory_saved_after_the_request_proves_it_within_thirty_days():
    """The usual first audit: the key directory is saved today, the log is of last week."""
    keys = directories()
    def check(days_before: int, private=OWN, kid="own-1"):
        at = NOW - timedelta(days=days_before)
        return check_request(SignedRequest(*signed(private, kid, created=at)), "OpenAI", keys, at)

    week = check(5)
    assert (week.status, week.evidence) == (
        "verified", "keyid own-1 in openai keys 2026-11-01 (later: 4 days after the request)"
    )
    day = check(2)
    assert day.evidence == "keyid own-1 in openai keys 2026-11-01 (later: 1 day after the request)"
    assert check(31).status == "verified"
    foreign = check(5, OTHER, "other-1")
    assert (foreign.status, foreign.evidence) == (
        "spoofed",
        "keyid other-1 is a key of Elsewhere (elsewhere keys 2026-11-01 (later: 4 days after the request)), not of OpenAI",
    )
    too_old = check(32)
    assert (too_old.status, too_old.evidence) == ("unverified", "no key snapshot for openai on 2026-10-01")


def test_a_signature_logged_by_iis_verifies_after_its_plus_signs_are_undone():
    from matcher.audit import signed_request
    from matcher.logformats import parser_for

    # a signature whose base64 holds a `+`, which must survive the W3C reading
    request, signature_input, signature = next(
        made for made in (signed(OWN, "own-1", created=NOW - timedelta(seconds=s)) for s in range(200)) if "+" in made[2]
    )
    fields = "date time c-ip cs-method cs-uri-stem cs-uri-query cs-host cs(User-Agent) cs(Signature-Agent) cs(Signature-Input) cs(Signature) sc-status"
    values = [
        "2026-11-02", "10:00:00", "192.0.2.10", "GET", "/page", "-", "www.example.com:8443", "ChatGPT-User/1.0",
        request.fields["signature-agent"], signature_input, signature, "200",
    ]
    parse = parser_for("w3c")
    with pytest.raises(ValueError):
        parse("#Fields: " + fields)
    record = parse(" ".join(value.replace(" ", "+") for value in values))
    assert (record.host, record.signed.authority, record.signed.signature) == ("www.example.com", "www.example.com:8443", signature)
    result = check_request(signed_request(record), "OpenAI", directories(), NOW)
    assert result.status == "verified", result.evidence


@pytest.mark.parametrize(
    "kind, spec, escape",
    [
        ("apache", '%h %l %u %t "%r" %>s %b "%{Host}i" "%{User-Agent}i" "%{Signature-Agent}i" "%{Signature-Input}i" "%{Signature}i"',
         lambda value: value.replace("\\", "\\\\").replace('"', '\\"')),
        ("nginx", '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_host" '
         '"$http_user_agent" "$http_signature_agent" "$http_signature_input" "$http_signature"',
         lambda value: value.replace("\\", "\\x5C").replace('"', "\\x22")),
    ],
)
def test_a_signature_logged_through_a_format_string_verifies(kind, spec, escape):
    from matcher.audit import signed_request
    from matcher.logformats import parser_for

    request, signature_input, signature = signed(OWN, "own-1")
    headers = [request.fields["signature-agent"], signature_input, signature]
    line = (
        '192.0.2.10 - - [02/Nov/2026:10:00:00 +0000] "GET /page HTTP/1.1" 200 512 "www.example.com:8443" '
        '"ChatGPT-User/1.0" ' + " ".join(f'"{escape(value)}"' for value in headers)
    )
    record = parser_for(f"{kind}:{spec}")(line)
    assert record.signed.signature_input == signature_input and record.signed.authority == "www.example.com:8443"
    assert check_request(signed_request(record), "OpenAI", directories(), NOW).status == "verified"


# ------------------------------------------------------------------ RFC 9421 as a second implementation reads it

from second_signer import Message, sign as peer_sign, verifies as peer_verifies  # noqa: E402

from matcher.web_bot_auth import coverage_problem, nonce_reused, nonce_use  # noqa: E402

DICTIONARY_AGENT = 'sig1="https://chatgpt.com"'
# (Host as logged, target, Signature-Agent, covered components): every form the audit must read
FORMS = [
    ("www.example.com", "/page", DICTIONARY_AGENT, ('"@authority"', '"signature-agent";key="sig1"')),
    ("WWW.Example.com", "/page", '"https://chatgpt.com"', ('"@authority"', '"signature-agent"')),
    ("www.example.com:443", "/page", '"https://chatgpt.com"', ('"@authority"', '"signature-agent"')),
    ("www.example.com:8443", "/a?q=big+dog&x=%7E", DICTIONARY_AGENT,
     ('"@method"', '"@target-uri"', '"@query-param";name="q"', '"@query"', '"signature-agent";key="sig1"', '"@scheme"')),
    ("www.example.com", "/p", 'other="https://elsewhere.example", sig1="https://chatgpt.com"',
     ('"@authority"', '"@path"', '"@request-target"', '"signature-agent";bs', '"signature-agent";key="sig1"')),
    # a member with parameters, in a header the library cannot read with `;sf` (it knows no type
    # for signature-agent): the member is serialized with its parameters
    ("www.example.com", "/p", 'sig1="https://chatgpt.com";a=1,  sig2="x"', ('"@authority"', '"signature-agent";key="sig1"')),
]


def _logged(host: str, target: str, agent: str, signature_input: str, signature: str) -> SignedRequest:
    return SignedRequest(LoggedRequest("GET", host, target, {"signature-agent": agent}), signature_input, signature)


@pytest.mark.parametrize("host, target, agent, components", FORMS)
def test_requests_signed_by_either_implementation_verify_in_both(host, target, agent, components):
    message = Message("GET", f"https://{host}{target}", {"Signature-Agent": agent})
    # signed by the independent library, verified here
    by_peer = peer_sign(OWN, "own-1", message, components, NOW, nonce="n-1")
    result = check_request(_logged(host, target, agent, *by_peer), "OpenAI", directories(), NOW)
    assert (result.status, result.evidence) == ("verified", "keyid own-1 in openai keys 2026-11-01")
    # signed here over the base the audit builds, verified by the library
    params = f'({" ".join(components)});created={int(NOW.timestamp())};expires={int(NOW.timestamp()) + 300};keyid="own-1";tag="web-bot-auth"'
    (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
    base, problem = signature_base(signature, LoggedRequest("GET", host, target, {"signature-agent": agent}))
    assert problem is None
    ours = (f"sig1={params}", f"sig1=:{base64.b64encode(OWN.sign(base)).decode()}:")
    message.headers.update({"Signature-Input": ours[0], "Signature": ours[1]})
    assert peer_verifies({"own-1": OWN.public_key()}, message, NOW)
    # and neither accepts the other's signature on another site
    moved = _logged("www.example.org", target, agent, *by_peer)
    assert check_request(moved, "OpenAI", directories(), NOW).status == "spoofed"
    assert not peer_verifies({"own-1": OWN.public_key()}, Message("GET", f"https://www.example.org{target}", message.headers), NOW)


def test_component_parameters_are_applied_as_rfc_9421_writes_them():
    params = (
        '("signature-agent";key="sig1" "signature-agent";sf "signature-agent";bs "@query-param";name="q" '
        '"@target-uri" "@authority");created=1;keyid="k"'
    )
    (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
    logged = LoggedRequest("GET", "WWW.Example.COM:443", "/s?q=a+b%2Bc&r", {"signature-agent": ' sig1="https://chatgpt.com",sig2=?1 '})
    base, problem = signature_base(signature, logged)
    assert problem is None
    assert base.decode().splitlines() == [
        '"signature-agent";key="sig1": "https://chatgpt.com"',
        '"signature-agent";sf: sig1="https://chatgpt.com", sig2',
        '"signature-agent";bs: :' + base64.b64encode(b'sig1="https://chatgpt.com",sig2=?1').decode() + ":",
        '"@query-param";name="q": a%20b%2Bc',
        # the target URI keeps the Host as sent; only @authority is normalized
        '"@target-uri": https://WWW.Example.COM:443/s?q=a+b%2Bc&r',
        '"@authority": www.example.com',
        f'"@signature-params": {params}',
    ]


@pytest.mark.parametrize(
    "component, problem",
    [
        ('"signature-agent";key="sig9"', 'signed component "signature-agent";key="sig9": the logged value has no member sig9'),
        ('"@authority";req', 'signed component "@authority";req names a response\'s request; a logged request has none'),
        ('"@status"', 'signed component "@status" is no component of a request'),
        ('"@query-param";name="z"', 'signed component "@query-param";name="z": the parameter is not in the logged query'),
        ('"signature-agent";bs;sf', 'signed component "signature-agent";bs;sf has parameters RFC 9421 does not allow'),
    ],
)
def test_a_component_that_cannot_be_derived_says_why(component, problem):
    (signature,), _ = parse_signatures(f'sig1=({component});created=1;keyid="k"', "sig1=:AA==:")
    logged = LoggedRequest("GET", "www.example.com", "/s?q=1", {"signature-agent": DICTIONARY_AGENT})
    assert signature_base(signature, logged) == (None, problem)


def _signed_by_peer(components, *, agent=DICTIONARY_AGENT, host="www.example.com", key=OWN, kid="own-1", nonce=None):
    message = Message("GET", f"https://{host}/page", {"Signature-Agent": agent})
    return _logged(host, "/page", agent, *peer_sign(key, kid, message, components, NOW, nonce=nonce))


def test_the_member_a_dictionary_signature_covers_must_name_the_keys_directory():
    keys = directories()
    two = 'sig1="https://elsewhere.example", sig2="https://chatgpt.com"'
    right = _signed_by_peer(('"@authority"', '"signature-agent";key="sig2"'), agent=two)
    assert check_request(right, "OpenAI", keys, NOW).status == "verified"
    wrong = _signed_by_peer(('"@authority"', '"signature-agent";key="sig1"'), agent=two)
    assert (check_request(wrong, "OpenAI", keys, NOW).status, check_request(wrong, "OpenAI", keys, NOW).evidence) == (
        "spoofed",
        "Signature-Agent member sig1 names https://elsewhere.example/.well-known/http-message-signatures-directory,"
        " but keyid own-1 is in openai keys 2026-11-01",
    )


def test_a_signature_that_covers_neither_the_authority_nor_the_signature_agent_is_ignored():
    """GHSA-x9cc-346q-g27m: such a signature verifies, and verifies again on any other request."""
    keys = directories()
    no_authority = _signed_by_peer(('"@method"', '"@path"', '"signature-agent";key="sig1"'))
    no_agent = _signed_by_peer(('"@authority"', '"@path"'))
    for signed_request, problem in ((no_authority, "does not cover @authority"), (no_agent, "does not cover Signature-Agent")):
        message = Message("GET", "https://www.example.com/page", {
            "Signature-Agent": DICTIONARY_AGENT, "Signature-Input": signed_request.signature_input,
            "Signature": signed_request.signature,
        })
        assert peer_verifies({"own-1": OWN.public_key()}, message, NOW)  # the cryptography holds
        assert check_request(signed_request, "OpenAI", keys, NOW) == type(check_request(signed_request, "OpenAI", keys, NOW))(
            "ignored", problem
        )
    # covering @target-uri covers the authority; a request that sent no Signature-Agent needs none covered
    target_only = _signed_by_peer(('"@target-uri"', '"signature-agent";key="sig1"'))
    assert check_request(target_only, "OpenAI", keys, NOW).status == "verified"
    (signature,), _ = parse_signatures(no_agent.signature_input, no_agent.signature)
    assert coverage_problem(signature, LoggedRequest("GET", "www.example.com", "/page", {})) is None


def test_a_log_without_a_signature_agent_field_is_said_to_be_one():
    request = _signed_by_peer(('"@authority"', '"@path"'))
    unlogged = SignedRequest(
        LoggedRequest("GET", "www.example.com", "/page", {}, agent_logged=False), request.signature_input, request.signature
    )
    result = check_request(unlogged, "OpenAI", directories(), NOW)
    assert (result.status, result.evidence) == (
        "verified",
        "keyid own-1 in openai keys 2026-11-01; the log does not record Signature-Agent,"
        " so whether the signature had to cover it is unknown",
    )


def test_a_nonce_sent_again_while_its_signature_holds_is_reuse():
    first = _signed_by_peer(('"@authority"', '"signature-agent";key="sig1"'), nonce="n-7")
    use = nonce_use(first.signature_input, first.signature)
    assert (use.keyid, use.nonce, use.expires) == ("own-1", "n-7", int(NOW.timestamp()) + 300)
    assert nonce_use(*signed(OWN, "own-1")[1:]) is None  # no nonce
    later = NOW + timedelta(seconds=200)
    assert nonce_reused([(NOW, use.expires, "A"), (later, use.expires + 200, "B")])
    # the same signature again is a reused signature, not a reused nonce
    assert not nonce_reused([(NOW, use.expires, "A"), (later, use.expires, "A")])
    # once every signature that carried it has expired, the nonce may come back
    assert not nonce_reused([(NOW, use.expires, "A"), (NOW + timedelta(seconds=361), use.expires + 361, "B")])


@pytest.mark.parametrize("bound", [{"nbf": "2026"}, {"exp": True}, {"nbf": 1e30}, {"exp": -1}])
def test_a_key_whose_nbf_or_exp_is_no_time_is_an_error_not_an_unbounded_key(bound):
    snapshot, problems = parse_key_snapshot("openai", "OpenAI", date(2026, 11, 1), {"keys": [{**RFC_KEY, **bound}]})
    assert snapshot is None
    (name,) = bound
    assert problems[0].startswith(f"openai/2026-11-01.json: keys[0] has '{name}' that is not a Unix time")


def test_a_fractional_nbf_is_a_numeric_date():
    snapshot, problems = parse_key_snapshot("openai", "OpenAI", date(2026, 11, 1), {"keys": [{**RFC_KEY, "nbf": 1.5}]})
    assert snapshot is not None and problems == ()


@pytest.mark.parametrize(("signature_input", "signature", "header"), [
    ("(", RFC_SIGNATURE, "Signature-Input"), (RFC_INPUT, "sig=:", "Signature"), ("a=1,", RFC_SIGNATURE, "Signature-Input"),
])
def test_unreadable_signature_headers_say_which_header_and_why(signature_input, signature, header):
    signatures, problem = parse_signatures(signature_input, signature)
    assert signatures == []
    assert problem.startswith(f"unreadable signature headers ({header}: ")
    assert problem[len(f"unreadable signature headers ({header}: "):-1].strip()
