"""RFC 9421 as an independent implementation reads it (`http-message-signatures` from PyPI):
requests signed with it, and its verdict on a request, its clock set to the request's time."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageSigner,
    HTTPMessageVerifier,
    HTTPSignatureKeyResolver,
    InvalidSignature,
    algorithms,
)

TAG = "web-bot-auth"


@dataclass
class Message:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


class _Keys(HTTPSignatureKeyResolver):
    def __init__(self, private: dict[str, Ed25519PrivateKey] | None = None, public: dict[str, Ed25519PublicKey] | None = None):
        self.private, self.public = private or {}, public or {}

    def resolve_private_key(self, key_id: str):
        return self.private[key_id]

    def resolve_public_key(self, key_id: str):
        return self.public.get(key_id)


class _VerifierAt(HTTPMessageVerifier):
    """The library's verifier with its clock at `at` and the audit's 60 s of skew."""

    max_clock_skew = timedelta(seconds=60)

    def __init__(self, at: datetime, **kwargs):
        super().__init__(**kwargs)
        self.at = at

    def validate_created_and_expires(self, sig_input, max_age=None):
        created, expires = sig_input.params.get("created"), sig_input.params.get("expires")
        moment = self.at.timestamp()
        if not isinstance(created, int) or created > moment + self.max_clock_skew.total_seconds():
            raise InvalidSignature("created missing or after the request")
        if isinstance(expires, int) and expires < moment - self.max_clock_skew.total_seconds():
            raise InvalidSignature("expired before the request")


def sign(
    private: Ed25519PrivateKey, kid: str, message: Message, components: tuple[str, ...], created: datetime,
    *, lifetime: int = 300, nonce: str | None = None,
) -> tuple[str, str]:
    """(Signature-Input, Signature) the library makes for `message`."""
    signer = HTTPMessageSigner(signature_algorithm=algorithms.ED25519, key_resolver=_Keys(private={kid: private}))
    signer.sign(
        message, key_id=kid, created=created, expires=created + timedelta(seconds=lifetime), nonce=nonce,
        label="sig1", tag=TAG, covered_component_ids=components,
    )
    return message.headers.pop("Signature-Input"), message.headers.pop("Signature")


def verifies(public: dict[str, Ed25519PublicKey], message: Message, at: datetime) -> bool:
    """Whether the library verifies the message's web-bot-auth signature at `at`."""
    verifier = _VerifierAt(at, signature_algorithm=algorithms.ED25519, key_resolver=_Keys(public=public))
    try:
        verifier.verify(message, expect_tag=TAG, max_age=None)
    except (InvalidSignature, HTTPMessageSignaturesException):
        return False
    return True
