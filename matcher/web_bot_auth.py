"""Web Bot Auth after the fact: a logged request's HTTP Message Signature (RFC 9421, profiled by
draft-ietf-webbotauth-httpsig-protocol) checked against a dated snapshot of the key directory
of the operator its crawler claims.

The signature base is rebuilt from the components as logged, as RFC 9421 §2 derives them:
`@authority` is the logged Host in lower case without the scheme's default port (§2.2.3), a
header component is the logged value with its surrounding blanks removed, and a component's
parameters (`;key`, `;sf`, `;bs`, `;name`) are applied to it. A component the log does not carry
leaves the signature undecided, never failed. Only signatures tagged `web-bot-auth` and made with
Ed25519 count, and only those that cover the request's authority (`@authority` or `@target-uri`)
and, when the request sent one, its Signature-Agent: a signature that covers less can be replayed
onto any request (`coverage_problem`).

The validity window (`check_window`): `created` may lie at most `CLOCK_SKEW` after the
request's time, `expires` at most `CLOCK_SKEW` before it; a signature without either is not a
Web Bot Auth signature. Logs stamp a request when it was received or when its answer was
finished, a few seconds apart, hence the skew.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
from urllib.parse import parse_qs, quote
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Literal

import http_sfv
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from matcher.in_effect import HISTORY_EDGE, index_in_effect, later_note

__all__ = [
    "CLOCK_SKEW",
    "DIRECTORY_PATH",
    "Component",
    "KeyDirectories",
    "KeySnapshot",
    "LoggedRequest",
    "NonceUse",
    "Signature",
    "SignatureCheck",
    "SignedRequest",
    "check_request",
    "check_window",
    "coverage_problem",
    "nonce_reused",
    "nonce_use",
    "normalized_authority",
    "parse_key_snapshot",
    "parse_signatures",
    "signature_agent_url",
    "signature_agent_urls",
    "signature_base",
    "verify_signature",
]

CLOCK_SKEW = timedelta(seconds=60)
DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"
TAG = "web-bot-auth"
_DEFAULT_PORTS = {"https": "443", "http": "80"}
# The parameters RFC 9421 §2.1 defines for a header component; `key` implies `sf`.
_FIELD_PARAMS = frozenset({"sf", "key", "bs", "req", "tr"})
# What covers the request's authority: without either, a signature holds for any site (§7.2.1).
_AUTHORITY_COMPONENTS = ("@authority", "@target-uri")
AGENT_FIELD = "signature-agent"

Outcome = Literal["verified", "spoofed", "unverified", "ignored"]


@dataclass(frozen=True)
class LoggedRequest:
    """What a log line tells of a signed request: the method, the authority and the target as
    written, the header fields it carries by lower-case name, the scheme it came in on (https
    when the log does not say), and whether the log has a Signature-Agent field at all."""

    method: str
    authority: str | None
    target: str
    fields: Mapping[str, str]
    scheme: str = "https"
    agent_logged: bool = True


@dataclass(frozen=True)
class Component:
    """A covered component: its name, its parameters, and its identifier as the base writes it
    (`"signature-agent";key="sig1"`)."""

    name: str
    params: Mapping[str, object]
    identifier: str


@dataclass(frozen=True)
class Signature:
    label: str
    components: tuple[Component, ...]
    params_text: str  # the serialized inner list: the value of `@signature-params`
    params: Mapping[str, object]
    value: bytes

    @property
    def keyid(self) -> str | None:
        keyid = self.params.get("keyid")
        return keyid if isinstance(keyid, str) else None

    @property
    def nonce(self) -> str | None:
        nonce = self.params.get("nonce")
        return nonce if isinstance(nonce, str) else None

    def covers(self, name: str) -> bool:
        return any(component.name == name for component in self.components)

    def agent_member(self) -> str | None:
        """The Signature-Agent dictionary member the signature covers (`;key=`), if it names one."""
        for component in self.components:
            key = component.params.get("key")
            if component.name == AGENT_FIELD and isinstance(key, str):
                return key
        return None


@dataclass(frozen=True)
class NonceUse:
    """The nonce of a request's Web Bot Auth signature, with the key it goes with and the end of
    the signature's validity."""

    keyid: str
    nonce: str
    expires: int


@dataclass(frozen=True)
class KeySnapshot:
    """One dated copy of a key directory: raw Ed25519 public keys by key id (the JWK `kid` and
    its RFC 7638 thumbprint), each with its `nbf`/`exp` bounds when the directory gives them.
    Raw bytes rather than key objects: the index travels to workers pickled."""

    directory: str
    operator: str
    taken: date
    keys: Mapping[str, tuple[bytes, int | None, int | None]] = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.directory} keys {self.taken.isoformat()}"


@dataclass(frozen=True)
class SignedRequest:
    """A logged request with its `Signature-Input` and `Signature` headers."""

    request: LoggedRequest
    signature_input: str
    signature: str

    @property
    def value(self) -> str:
        """The signature as sent: the same value on two requests is one signature used twice."""
        return self.signature


@dataclass(frozen=True)
class SignatureCheck:
    status: Outcome
    evidence: str
    operator: str | None = None


class KeyDirectories:
    """Every directory's dated key snapshots, and each directory's URL and operator by name."""

    def __init__(
        self,
        snapshots: Iterable[KeySnapshot] = (),
        urls: Mapping[str, str] | None = None,
        operators: Mapping[str, str] | None = None,
    ):
        by_directory: dict[str, list[KeySnapshot]] = {}
        for snapshot in sorted(snapshots, key=lambda s: (s.directory, s.taken)):
            by_directory.setdefault(snapshot.directory, []).append(snapshot)
        self._snapshots = {name: tuple(items) for name, items in by_directory.items()}
        self._days = {name: [s.taken for s in items] for name, items in by_directory.items()}
        self.urls = dict(urls or {})
        self.operators = dict(operators or {})

    def __bool__(self) -> bool:
        return bool(self._snapshots)

    def snapshot_at(self, directory: str, day: date) -> KeySnapshot | None:
        """The snapshot in force on `day`: the latest on or before it. Before the first, the first
        if it was taken within `HISTORY_EDGE` after `day`: a key can only sign for its holder, so
        a directory published a little later still proves signatures made with it (each key's own
        `nbf`/`exp` still apply), which is what lets last week's logs be checked against the
        directory saved today."""
        items = self._snapshots.get(directory)
        if not items:
            return None
        index = index_in_effect(self._days[directory], day)
        if index >= 0:
            return items[index]
        return items[0] if items[0].taken - day <= HISTORY_EDGE else None

    def in_force(self, day: date) -> list[KeySnapshot]:
        return [s for s in (self.snapshot_at(name, day) for name in self._snapshots) if s is not None]

    def of_operator(self, operator: str) -> list[str]:
        return [name for name, owner in self.operators.items() if owner == operator]


def parse_key_snapshot(directory: str, operator: str, taken: date, document: object) -> tuple[KeySnapshot | None, tuple[str, ...]]:
    """A JWKS (`{"keys": [...]}`); keys that are not Ed25519 public keys are reported and skipped."""
    name = f"{directory}/{taken.isoformat()}.json"
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        return None, (f"{name}: no 'keys' list; snapshot ignored",)
    problems: list[str] = []
    found: dict[str, tuple[bytes, int | None, int | None]] = {}
    for index, jwk in enumerate(keys):
        key = _ed25519_key(jwk)
        if key is None:
            problems.append(f"{name}: keys[{index}] is not an Ed25519 public key (kty OKP, crv Ed25519, x); ignored")
            continue
        wrong = [name for name in ("nbf", "exp") if jwk.get(name) is not None and _epoch(jwk[name]) is None]
        if wrong:
            problems.append(f"{name}: keys[{index}] has {' and '.join(repr(w) for w in wrong)} that is not a Unix time"
                            f" in seconds from 1970 to 9999 ({_shown(jwk[wrong[0]])}); ignored")
            continue
        bounds = (key, _epoch(jwk.get("nbf")), _epoch(jwk.get("exp")))
        found[_thumbprint(jwk["x"])] = bounds
        if isinstance(jwk.get("kid"), str):
            found[jwk["kid"]] = bounds
    if not found:
        problems.append(f"{name}: no usable key; snapshot ignored")
        return None, tuple(problems)
    return KeySnapshot(directory, operator, taken, found), tuple(problems)


def parse_signatures(signature_input: str, signature: str) -> tuple[list[Signature], str | None]:
    """Every labelled signature of the two headers; a problem when they cannot be read."""
    parsed = []
    for header, text in (("Signature-Input", signature_input), ("Signature", signature)):
        dictionary = http_sfv.Dictionary()
        try:
            dictionary.parse(text.encode("latin-1"))
        except UnicodeEncodeError:
            return [], f"unreadable signature headers ({header}: a character outside Latin-1)"
        except ValueError as error:
            # the parser's errors often carry no text: the header and what it must be still say why
            reason = str(error).strip() or "not a Structured Fields dictionary (RFC 8941)"
            return [], f"unreadable signature headers ({header}: {reason})"
        parsed.append(dictionary)
    inputs, values = parsed
    signatures = []
    for label, member in inputs.items():
        value = values.get(label) if label in values else None
        if not isinstance(member, http_sfv.InnerList) or value is None or not isinstance(value.value, bytes):
            continue
        components = tuple(
            Component(item.value, {name: _plain(v) for name, v in item.params.items()}, str(item))
            for item in member
            if isinstance(item.value, str)
        )
        params = {name: _plain(v) for name, v in member.params.items()}
        signatures.append(Signature(label, components, str(member), params, value.value))
    return signatures, None


def signature_base(signature: Signature, request: LoggedRequest) -> tuple[bytes | None, str | None]:
    """The RFC 9421 signature base (§2.5), or why a covered component cannot be derived from the
    logged request."""
    lines = []
    for component in signature.components:
        value, problem = _component(component, request)
        if value is None:
            return None, problem
        lines.append(f"{component.identifier}: {value}")
    lines.append(f'"@signature-params": {signature.params_text}')
    return "\n".join(lines).encode("utf-8", "surrogateescape"), None


def normalized_authority(authority: str, scheme: str = "https") -> str:
    """`@authority` as RFC 9421 §2.2.3 writes it: lower case, without the scheme's default port."""
    host = authority.lower()
    default = _DEFAULT_PORTS.get(scheme.lower())
    head, colon, port = host.rpartition(":")
    if colon and default is not None and port.isdigit() and port.lstrip("0") == default and not head.endswith(":"):
        return head
    return host


def coverage_problem(signature: Signature, request: LoggedRequest) -> str | None:
    """Why a signature proves nothing of this request whatever its key: it covers neither
    `@authority` nor `@target-uri`, or it leaves out the Signature-Agent the request sent; None
    when it covers both."""
    if not any(signature.covers(name) for name in _AUTHORITY_COMPONENTS):
        return "does not cover @authority"
    if AGENT_FIELD in request.fields and not signature.covers(AGENT_FIELD):
        return "does not cover Signature-Agent"
    return None


def verify_signature(key: bytes, base: bytes, value: bytes) -> bool:
    """Whether `value` is the Ed25519 signature of `base` by the raw public key `key`."""
    try:
        _public_key(key).verify(value, base)
    except InvalidSignature:
        return False
    return True


def check_window(signature: Signature, at: datetime) -> str | None:
    """Why `created`/`expires` do not hold the request's time, or None when they do."""
    created, expires = _epoch(signature.params.get("created")), _epoch(signature.params.get("expires"))
    if created is None or expires is None:
        return "signature without created and expires"
    moment = at.timestamp()
    skew = CLOCK_SKEW.total_seconds()
    if created > moment + skew:
        return f"signature created {_when(created)}, after the request"
    if expires < moment - skew:
        return f"signature expired {_when(expires)}, before the request"
    return None


def signature_agent_url(value: str, member: str | None = None) -> str | None:
    """The directory URL a Signature-Agent names: an sf-string, or in dictionary form the member
    `member` (without one, the first), an origin gaining the well-known path."""
    urls = signature_agent_urls(value)
    if member is not None:
        return urls.get(member)
    return next(iter(urls.values()), None)


def signature_agent_urls(value: str) -> dict[str | None, str | None]:
    """Every directory URL a Signature-Agent names, by dictionary member (None for the sf-string
    form); a member that is no https URL maps to None."""
    text = value.strip().encode("latin-1", "replace")
    item = http_sfv.Item()
    try:
        item.parse(text)
        return {None: _directory_url(item.value)}
    except ValueError:
        pass
    dictionary = http_sfv.Dictionary()
    try:
        dictionary.parse(text)
    except ValueError:
        return {}
    return {name: _directory_url(getattr(member, "value", None)) for name, member in dictionary.items()}


def nonce_use(signature_input: str, signature: str) -> NonceUse | None:
    """The nonce of the request's first `web-bot-auth` signature that has one, with its keyid and
    expiry; None when none does."""
    signatures, problem = parse_signatures(signature_input, signature)
    for parsed in signatures:
        expires = _epoch(parsed.params.get("expires"))
        if parsed.params.get("tag") == TAG and parsed.keyid and parsed.nonce and expires is not None:
            return NonceUse(parsed.keyid, parsed.nonce, expires)
    return None


def nonce_reused(uses: Iterable[tuple[datetime, int, str]]) -> bool:
    """Whether one key's nonce came in another signature while a signature that carried it still
    held: the (request time, expiry, Signature value) of each request that carried it. A nonce
    is the signer's promise that it signs once with it, and a verifier remembers it for as long as
    the signature holds. The same signature sent again is a reused signature, told apart."""
    holds_until: dict[str, int] = {}
    skew = CLOCK_SKEW.total_seconds()
    for at, expires, value in sorted(uses):
        moment = at.timestamp()
        if any(other != value and moment <= until + skew for other, until in holds_until.items()):
            return True
        holds_until[value] = max(expires, holds_until.get(value, expires))
    return False


def check_request(signed: SignedRequest, operator: str, directories: KeyDirectories, at: datetime) -> SignatureCheck:
    """The Web Bot Auth verdict of a signed request claiming a crawler of `operator`."""
    request = signed.request
    own = directories.of_operator(operator)
    signatures, problem = parse_signatures(signed.signature_input, signed.signature)
    if problem is not None:
        return SignatureCheck("unverified", problem)
    tagged = [s for s in signatures if s.params.get("tag") == TAG]
    if not tagged:
        return SignatureCheck("unverified", f"no signature tagged {TAG}")
    covering = [s for s in tagged if coverage_problem(s, request) is None]
    if not covering:
        return SignatureCheck("ignored", str(coverage_problem(tagged[0], request)))
    signature = covering[0]
    keyid = signature.keyid
    if keyid is None:
        return SignatureCheck("unverified", f"signature {signature.label} names no keyid")
    alg = signature.params.get("alg")
    if alg is not None and alg != "ed25519":
        return SignatureCheck("unverified", f"signature {signature.label} uses {alg}, not ed25519")
    day = at.astimezone(timezone.utc).date()
    # the claimed operator's own directories are searched first
    in_force = sorted(directories.in_force(day), key=lambda s: s.directory not in own)
    holder = _holder(in_force, keyid, at)
    if holder is None:
        covering = [directories.snapshot_at(name, day) for name in own]
        shown = ", ".join(s.label for s in covering if s is not None)
        if shown:
            return SignatureCheck("unverified", f"keyid {keyid} not in {shown} (a rotated key?)")
        names = ", ".join(own) or f"no key directory of {operator}"
        return SignatureCheck("unverified", f"no key snapshot for {names} on {day.isoformat()}")
    snapshot, key = holder
    label = snapshot.label if snapshot.taken <= day else f"{snapshot.label} ({later_note(snapshot.taken, day)})"
    if snapshot.operator != operator:
        return SignatureCheck(
            "spoofed", f"keyid {keyid} is a key of {snapshot.operator} ({label}), not of {operator}",
            snapshot.operator,
        )
    agent = request.fields.get(AGENT_FIELD)
    member = signature.agent_member()
    named = signature_agent_url(agent, member) if agent is not None else None
    if member is not None and agent is not None and named is None:
        return SignatureCheck("spoofed", f"Signature-Agent has no directory URL as member {member}, which keyid {keyid} signs")
    if named is not None and snapshot.directory in directories.urls and named != directories.urls[snapshot.directory]:
        which = "Signature-Agent" if member is None else f"Signature-Agent member {member}"
        return SignatureCheck("spoofed", f"{which} names {named}, but keyid {keyid} is in {label}")
    base, missing = signature_base(signature, request)
    if base is None:
        return SignatureCheck("unverified", str(missing))
    if not verify_signature(key, base, signature.value):
        return SignatureCheck("spoofed", f"bad signature for keyid {keyid} ({label})")
    outside = check_window(signature, at)
    if outside is not None:
        return SignatureCheck("spoofed", f"{outside} (keyid {keyid}, {label})")
    unseen = "" if request.agent_logged else "; the log does not record Signature-Agent, so whether the signature had to cover it is unknown"
    return SignatureCheck("verified", f"keyid {keyid} in {label}{unseen}", operator)


@functools.lru_cache(maxsize=256)
def _public_key(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(raw)


def _holder(snapshots: Iterable[KeySnapshot], keyid: str, at: datetime) -> tuple[KeySnapshot, bytes] | None:
    moment = at.timestamp()
    for snapshot in snapshots:
        entry = snapshot.keys.get(keyid)
        if entry is None:
            continue
        key, not_before, expires = entry
        if (not_before is None or not_before <= moment) and (expires is None or moment <= expires):
            return snapshot, key
    return None


def _component(component: Component, request: LoggedRequest) -> tuple[str | None, str | None]:
    """The component's value in the base (RFC 9421 §2.1, §2.2), or why it has none here."""
    name, params = component.name, component.params
    if "req" in params:
        return None, f"signed component {component.identifier} names a response's request; a logged request has none"
    if name.startswith("@"):
        return _derived(component, request)
    unknown = set(params) - _FIELD_PARAMS
    if unknown or ("bs" in params and ("sf" in params or "key" in params)):
        return None, f"signed component {component.identifier} has parameters RFC 9421 does not allow"
    value = request.fields.get(name)
    if value is None or "tr" in params:
        return None, f"signed component {component.identifier} is not in the log"
    value = value.strip(" \t")
    if "key" in params:
        return _dictionary_member(component, value, params["key"])
    if "sf" in params:
        serialized = _structured(value)
        if serialized is None:
            return None, f"signed component {component.identifier}: the logged value is no structured field"
        return serialized, None
    if "bs" in params:
        try:
            raw = value.encode("latin-1")
        except UnicodeEncodeError:
            raw = value.encode("utf-8", "surrogateescape")
        return ":" + base64.b64encode(raw).decode() + ":", None
    return value, None


def _derived(component: Component, request: LoggedRequest) -> tuple[str | None, str | None]:
    name = component.name
    missing = f"signed component {component.identifier} is not in the log"
    if name == "@method":
        return (request.method, None) if request.method else (None, missing)
    if name == "@scheme":
        return request.scheme.lower(), None
    path, question, query = request.target.partition("?")
    if name in ("@authority", "@target-uri"):
        if request.authority is None:
            return None, missing
        if name == "@authority":
            return normalized_authority(request.authority, request.scheme), None
        # RFC 9110 §7.1 rebuilds the target URI from the Host as sent: §2.2.3's normalization
        # is @authority's alone
        return f"{request.scheme.lower()}://{request.authority}{request.target}", None
    if name == "@path":
        return path, None
    if name == "@query":
        return "?" + query, None
    if name == "@request-target":
        return request.target, None
    if name == "@query-param":
        return _query_param(component, query if question else "")
    return None, f"signed component {component.identifier} is no component of a request"


def _query_param(component: Component, query: str) -> tuple[str | None, str | None]:
    """RFC 9421 §2.2.8: the named parameter's value, decoded as a form and percent-encoded again."""
    wanted = component.params.get("name")
    if not isinstance(wanted, str):
        return None, f"signed component {component.identifier} names no parameter"
    values = parse_qs(query, keep_blank_values=True).get(_form_decoded(wanted), [])
    if len(values) != 1:
        state = "is not in the logged query" if not values else "occurs more than once in the logged query"
        return None, f"signed component {component.identifier}: the parameter {state}"
    return _form_encoded(values[0]), None


def _form_decoded(text: str) -> str:
    return parse_qs(f"x={text}", keep_blank_values=True)["x"][0]


def _form_encoded(text: str) -> str:
    return quote(text, safe="*").replace("~", "%7E")


def _dictionary_member(component: Component, value: str, key: object) -> tuple[str | None, str | None]:
    """RFC 9421 §2.1.2: the serialized member `key` of the field read as a dictionary."""
    dictionary = http_sfv.Dictionary()
    try:
        dictionary.parse(value.encode("latin-1"))
    except (ValueError, UnicodeEncodeError):
        return None, f"signed component {component.identifier}: the logged value is no dictionary"
    if not isinstance(key, str) or key not in dictionary:
        return None, f"signed component {component.identifier}: the logged value has no member {key}"
    return str(dictionary[key]), None


def _structured(value: str) -> str | None:
    """The field re-serialized as a structured field (RFC 9421 §2.1.1). The field's type is its
    definition's; parsed as a dictionary, then a list, then an item, the first that reads it
    serializes the same text as its true type for every field a signer would mark `sf`."""
    text = value.encode("latin-1", "replace")
    for kind in (http_sfv.Dictionary, http_sfv.List, http_sfv.Item):
        parsed = kind()
        try:
            parsed.parse(text)
        except ValueError:
            continue
        return str(parsed)
    return None


def _directory_url(url: object) -> str | None:
    if not isinstance(url, str) or not url.startswith("https://"):
        return None
    origin, slash, path = url[len("https://"):].partition("/")
    return f"https://{origin.lower()}{DIRECTORY_PATH}" if not path.strip("/") else url


def _ed25519_key(jwk: object) -> bytes | None:
    """The raw public key of an Ed25519 JWK; None for anything else, a private key included."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
        return None
    x = jwk.get("x")
    if not isinstance(x, str) or "d" in jwk:
        return None
    try:
        raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
        _public_key(raw)
    except ValueError:
        return None
    return raw


def _thumbprint(x: str) -> str:
    """RFC 7638: SHA-256 of the required members, sorted, without blanks; base64url unpadded."""
    members = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=").decode()


def _plain(value: object) -> object:
    return str(value) if isinstance(value, http_sfv.Token) else value


_LAST_EPOCH = 253402300799  # 9999-12-31T23:59:59Z


def _epoch(value: object) -> int | None:
    """A JWK's `nbf`/`exp` (a NumericDate: seconds, a fraction allowed) as whole seconds, or None
    when it is no time from 1970 to 9999."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= _LAST_EPOCH:
        return None
    return int(value)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _when(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat().replace("+00:00", "Z")
