"""`crawl-audit history capture`: fetch each host's robots.txt now, as a crawler would, and
keep it in a captures folder when the outcome changed.

The fetch follows RFC 9309 §2.3: `https://HOST/robots.txt`, at most five redirects (HTTPS
only), then the status class decides; a network error or the overall deadline is
"unreachable". A body is kept up to the 500 KiB that the audit parses.

What the site said is recorded: a status, or "unreachable" when, its address resolved, the
connection was refused or timed out, or TLS or HTTP failed (RFC 9309 §2.3.1.4). A failure to
resolve its name (NXDOMAIN, SERVFAIL, a resolver that does not answer, no address) or a network
this machine cannot reach is no state of the site: an offline machine or a broken resolver gives
it for every name. `LocalFailure` is raised and nothing is recorded, since "unreachable" would
read as "disallow everything" in the audit.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from matcher import robots
from pipeline.evidence.captures import HostFolder, Outcome
from pipeline.evidence.http_client import Client, FetchError, LocalFailure


USER_AGENT = "crawl-audit-history/0.1"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Captured:
    """What one host's capture did: `written` the new capture file, or None when the outcome
    was the same as the latest one (`same_as`); `note` how the fetch went."""

    host: str
    outcome: Outcome
    written: Path | None
    same_as: Path | None
    note: str


def robots_client(user_agent: str = USER_AGENT, timeout: float = DEFAULT_TIMEOUT, **options) -> Client:
    return Client(user_agent=user_agent, timeout=timeout, max_bytes=robots.MAX_BYTES, **options)


def resolver_at(server: tuple[str, int], timeout: float) -> Callable[[str], str]:
    """A host name -> its first IPv4 address, asked of the DNS server `server`. Any failure (no
    answer, an error code, no such name, no address) is a LocalFailure: it records nothing."""
    shown = f"{server[0]}:{server[1]}"

    def resolve(host: str) -> str:
        query = dns.message.make_query(host, dns.rdatatype.A)
        try:
            response, _ = dns.query.udp_with_fallback(query, server[0], timeout, server[1])
        except (dns.exception.Timeout, OSError) as error:
            raise LocalFailure(f"cannot resolve {host}: the resolver {shown} did not answer ({error or 'timeout'})") from None
        except dns.exception.DNSException as error:
            raise LocalFailure(f"cannot resolve {host}: the resolver {shown} gave no usable answer ({error})") from None
        rcode = response.rcode()
        if rcode != dns.rcode.NOERROR:
            raise LocalFailure(f"cannot resolve {host}: the resolver {shown} answered {dns.rcode.to_text(rcode)}")
        for rrset in response.answer:
            for item in rrset:
                if item.rdtype == dns.rdatatype.A:
                    return item.address
        raise LocalFailure(f"cannot resolve {host}: the resolver {shown} gave it no IPv4 address")

    return resolve


def fetch_robots(client: Client, host: str) -> tuple[Outcome, str]:
    """The outcome of fetching https://HOST/robots.txt, and how it went, in words."""
    try:
        response = client.get(f"https://{host}/robots.txt", accept="text/plain, */*")
    except LocalFailure:
        raise
    except FetchError as error:
        return Outcome(None), str(error)
    hops = f" after {len(response.redirects)} redirect(s)" if response.redirects else ""
    if response.stopped is not None:
        return Outcome(response.status), f"{response.status}{hops}: {response.stopped}"
    if response.status // 100 == 2:
        kept = f"; only the first {client.max_bytes} bytes kept" if response.truncated else ""
        return Outcome(response.status, response.body), f"{response.status}{hops}{kept}"
    return Outcome(response.status), f"{response.status}{hops}"


def capture(
    hosts: Sequence[str], into: Path, client: Client, now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
) -> list[Captured]:
    """Fetch each host once and record it under `into` (see `pipeline.evidence.captures`)."""
    folders = [HostFolder(into, host) for host in hosts]  # every name checked before any fetch
    return [_capture_one(folder, client, now) for folder in folders]


def _capture_one(folder: HostFolder, client: Client, now: Callable[[], datetime]) -> Captured:
    outcome, note = fetch_robots(client, folder.host)
    with folder.locked():
        moment = now().replace(microsecond=0)
        latest = folder.latest()
        if latest is not None and latest[2].key == outcome.key:
            folder.observe(moment, "same", latest[1])
            return Captured(folder.host, outcome, None, latest[1], note)
        written = folder.write(moment, outcome)
        folder.observe(moment, "changed", written)
        return Captured(folder.host, outcome, written, None, note)
