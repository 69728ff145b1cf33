"""What checking a Web Bot Auth signature costs per logged request, and where the time goes.

    python bench/signature_bench.py [--requests 20000] [--repeat 3]

Signs N requests (distinct authorities and times, one Ed25519 key, a directory snapshot holding
it), then times, best of --repeat: reading the two headers with http-sfv (`parse_signatures`),
rebuilding the signature base from the logged components (`signature_base`), the Ed25519
verification alone (`cryptography`), and the whole verdict (`check_request`). It prints
microseconds per request and requests per second for each.
"""
from __future__ import annotations

import argparse
import base64
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402

from matcher.web_bot_auth import (  # noqa: E402
    KeyDirectories,
    LoggedRequest,
    SignedRequest,
    check_request,
    parse_key_snapshot,
    parse_signatures,
    signature_base,
    verify_signature,
)

NOW = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
AGENT = '"https://chatgpt.com"'


def signed_requests(count: int) -> tuple[list[tuple[SignedRequest, datetime]], KeyDirectories]:
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    jwk = {"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}
    snapshot, _ = parse_key_snapshot("openai", "OpenAI", date(2026, 11, 1), {"keys": [jwk]})
    directories = KeyDirectories([snapshot], {}, {"openai": "OpenAI"})
    made = []
    for index in range(count):
        at = NOW + timedelta(seconds=index % 3600)
        created = int(at.timestamp())
        params = (f'("@authority" "signature-agent");created={created};expires={created + 300};'
                  f'keyid="k1";alg="ed25519";tag="web-bot-auth"')
        request = LoggedRequest("GET", f"site{index % 500}.example:443", "/", {"signature-agent": AGENT})
        (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
        base, _ = signature_base(signature, request)
        value = base64.b64encode(key.sign(base)).decode()
        made.append((SignedRequest(request, f"sig1={params}", f"sig1=:{value}:"), at))
    return made, directories


def best(repeat: int, step) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--requests", type=int, default=20000)
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()
    made, directories = signed_requests(args.requests)
    parsed = [parse_signatures(s.signature_input, s.signature)[0][0] for s, _ in made]
    bases = [signature_base(p, s.request)[0] for p, (s, _) in zip(parsed, made)]
    key = next(iter(directories.in_force(NOW.date())[0].keys.values()))[0]
    steps = {
        "parse headers (http-sfv)": lambda: [parse_signatures(s.signature_input, s.signature) for s, _ in made],
        "signature base": lambda: [signature_base(p, s.request) for p, (s, _) in zip(parsed, made)],
        "Ed25519 verify (cryptography)": lambda: [verify_signature(key, b, p.value) for b, p in zip(bases, parsed)],
        "whole verdict (check_request)": lambda: [check_request(s, "OpenAI", directories, at) for s, at in made],
    }
    assert all(check_request(s, "OpenAI", directories, at).status == "verified" for s, at in made[:100])
    print(f"{args.requests:,} signed requests, best of {args.repeat}")
    for name, step in steps.items():
        seconds = best(args.repeat, step)
        print(f"  {name:32} {seconds / args.requests * 1e6:8.1f} us/request  {args.requests / seconds:10,.0f} requests/s")


if __name__ == "__main__":
    main()
