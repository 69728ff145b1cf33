"""Where reverse-DNS answers come from: a DNS server, or a snapshot of earlier answers.

`LiveResolver` asks a server (the system resolver, or a given HOST:PORT); `SnapshotResolver`
replays answers recorded by an earlier run, so an audit re-run offline gives the same verdicts.
No Beam here: `crawl-audit verify` uses these directly and should answer without loading it.

A snapshot is JSON Lines, one address per line:

    {"ip": "192.0.2.1", "ptr": ["crawl-192-0-2-1.googlebot.com"], "error": null,
     "forward": {"crawl-192-0-2-1.googlebot.com": ["192.0.2.1"]}, "forward_errors": {},
     "resolved_at": "2026-11-02T10:00:00Z"}

`error` is the PTR lookup's error code and `forward_errors` those of the forward lookups:
nxdomain and no-answer (the record does not exist), timeout, servfail, refused, unreachable,
dns-error, no-reverse-name (an address no reverse DNS name exists for, such as one with a zone id)
or not-in-snapshot. For an address answered twice the later `resolved_at` wins (of
equal times, the later line), so the records of successive runs can be concatenated. A folder
snapshot is every `*.jsonl` file in it: the `dns_answers` table a streaming run records.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdatatype
import dns.resolver
import dns.reversename

from matcher.addresses import parse_ip, reverse_dns_problem
from matcher.agents import Registry
from matcher.bounded import Lru
from matcher.reverse_dns import DEFINITE_DNS_ERRORS, DnsAnswer, Lookup, under_suffix
from pipeline.evidence.confined import require_regular

DEFAULT_TIMEOUT = 2.0
DEFAULT_RETRIES = 1
DEFAULT_CONCURRENCY = 32
# How long a worker trusts an answer before asking again. Crawler operators publish PTR and A
# records with TTLs of minutes to a day and move addresses between crawlers rarely; an hour keeps
# a month-long job from asking about an address more than once an hour, and a moved address
# right within the hour.
DEFAULT_TTL = 3600.0
# A fault (timeout, SERVFAIL, ...) is remembered briefly: long enough that a dead resolver is not
# asked again by every batch, short enough that a recovered one is used within the minute.
FAULT_TTL = 60.0
# Answers a worker keeps; beyond it the least recently used address is asked again when next seen.
DEFAULT_CACHE_SIZE = 100_000
# Lookups a worker queues per thread: on a dead resolver, a few minutes of budgets.
QUEUED_PER_THREAD = 64
NOT_IN_SNAPSHOT = "not-in-snapshot"
NO_REVERSE_NAME = "no-reverse-name"
# A PTR record set naming dozens of hosts under a crawler suffix is an attack on the verifier,
# not a crawler; confirming the first few is enough for any real operator.
MAX_FORWARD_NAMES = 8
_DNS_PORT = 53
_RCODE_ERRORS = {dns.rcode.NXDOMAIN: "nxdomain", dns.rcode.SERVFAIL: "servfail", dns.rcode.REFUSED: "refused"}


class Resolver(Protocol):
    def resolve(self, address: str) -> DnsAnswer: ...

    def resolve_many(self, addresses: Sequence[str]) -> list[DnsAnswer]: ...


@dataclass(frozen=True)
class LiveResolver:
    """Asks DNS servers. PTR names under `suffixes` get a forward lookup of the address's own
    family (A or AAAA). An address gets timeout x (retries + 1) seconds for all its questions:
    attempts are made here, not by dnspython's resolver, whose back-off pauses between attempts
    would stretch that bound."""

    suffixes: tuple[str, ...]
    server: tuple[str, int] | None = None  # None: the system resolver's servers (/etc/resolv.conf)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    concurrency: int = DEFAULT_CONCURRENCY

    def check(self) -> None:
        """Fail now, with a clear message, when the system resolver is not configured."""
        self._servers()

    @property
    def budget(self) -> float:
        """Seconds one address may take, all its questions and attempts together."""
        return self.timeout * (self.retries + 1)

    def resolve(self, address: str) -> DnsAnswer:
        """The reverse DNS of `address`, in any spelling `addresses.parse_ip` reads; an address
        reverse DNS cannot speak for is answered `no-reverse-name` without asking."""
        deadline = time.monotonic() + self.budget
        resolved_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        parsed = parse_ip(address)
        if parsed is None or reverse_dns_problem(parsed) is not None:
            return DnsAnswer(address, Lookup(error=NO_REVERSE_NAME), (), resolved_at)
        ptr = self._ask(dns.reversename.from_address(str(parsed)), dns.rdatatype.PTR, deadline)
        kind = dns.rdatatype.A if parsed.version == 4 else dns.rdatatype.AAAA
        names = [name for name in ptr.records if under_suffix(name, self.suffixes)]
        forward = tuple(
            (name, self._ask(dns.name.from_text(name), kind, deadline)) for name in names[:MAX_FORWARD_NAMES]
        )
        return DnsAnswer(address, ptr, forward, resolved_at)

    def resolve_many(self, addresses: Sequence[str]) -> list[DnsAnswer]:
        # Threads, not processes: a lookup is almost all waiting on the network.
        if len(addresses) <= 1 or self.concurrency <= 1:
            return [self.resolve(address) for address in addresses]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(addresses))) as pool:
            return list(pool.map(self.resolve, addresses))

    def _servers(self) -> tuple[tuple[str, int], ...]:
        return (self.server,) if self.server is not None else _system_servers()

    def _ask(self, name: dns.name.Name, rdtype: dns.rdatatype.RdataType, deadline: float) -> Lookup:
        """One question, retried on timeouts (the next server each time) until the deadline."""
        servers = self._servers()
        query = dns.message.make_query(name, rdtype)
        attempt = 0
        while (remaining := deadline - time.monotonic()) > 0:
            host, port = servers[attempt % len(servers)]
            attempt += 1
            try:
                response, _ = dns.query.udp_with_fallback(query, host, min(self.timeout, remaining), port)
            except dns.exception.Timeout:
                continue
            except OSError:
                return Lookup(error="unreachable")
            except dns.exception.DNSException:
                return Lookup(error="dns-error")
            return _lookup(response, rdtype)
        return Lookup(error="timeout")


@dataclass(frozen=True)
class SnapshotResolver:
    """Answers from a snapshot file; an address it lacks is unverified, never a failure."""

    answers: Mapping[str, DnsAnswer]

    def resolve(self, address: str) -> DnsAnswer:
        return self.answers.get(address) or DnsAnswer(address, Lookup(error=NOT_IN_SNAPSHOT))

    def resolve_many(self, addresses: Sequence[str]) -> list[DnsAnswer]:
        return [self.resolve(address) for address in addresses]


class CachingResolver:
    """A worker's reverse DNS for a job that runs for months: each address asked once per `ttl`
    (a fault once per `fault_ttl`), at most `concurrency` lookups in flight and
    `QUEUED_PER_THREAD` x `concurrency` waiting, at most `capacity` answers kept (the least
    recently used forgotten first). An address the full queue turns away is a timeout.

    `answers` waits for the lookups it needs no longer than it is told to; an address not
    answered by then is a timeout for that batch (`unverified`, never `spoofed`) while its lookup
    goes on and serves later batches. Thread-safe: a worker's threads share one.
    """

    def __init__(
        self,
        resolver: LiveResolver,
        *,
        ttl: float = DEFAULT_TTL,
        fault_ttl: float = FAULT_TTL,
        capacity: int = DEFAULT_CACHE_SIZE,
        clock=time.monotonic,
    ) -> None:
        self._resolver = resolver
        self._ttl = ttl
        self._fault_ttl = min(fault_ttl, ttl)
        self._max_pending = QUEUED_PER_THREAD * resolver.concurrency
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: Lru[str, tuple[float, DnsAnswer]] = Lru(capacity)  # address -> (expiry, answer)
        self._pending: dict[str, Future] = {}
        self._pool = ThreadPoolExecutor(max_workers=resolver.concurrency, thread_name_prefix="reverse-dns")
        self.asked = 0  # lookups started

    @property
    def budget(self) -> float:
        return self._resolver.budget

    def __len__(self) -> int:
        return len(self._answers)

    def answers(self, addresses: Iterable[str], wait: float) -> tuple[dict[str, DnsAnswer], list[DnsAnswer]]:
        """(an answer for every address, the answers that arrived since the last call from any
        thread: each new answer is handed out once, to be recorded)."""
        wanted = list(dict.fromkeys(addresses))
        with self._lock:
            arrived = self._collect()
            found, waiting = self._lookup(wanted)
        if waiting:
            wait_for(waiting.values(), timeout=max(wait, 0.0))
            with self._lock:
                arrived += self._collect()
            found.update((address, _answer(address, future)) for address, future in waiting.items() if future.done())
        for address in wanted:
            if address not in found:
                found[address] = DnsAnswer(address, Lookup(error="timeout"))
        return found, arrived

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _lookup(self, wanted: list[str]) -> tuple[dict[str, DnsAnswer], dict[str, Future]]:
        """Cached answers, and the lookups still to wait for (started here when new)."""
        now = self._clock()
        found: dict[str, DnsAnswer] = {}
        waiting: dict[str, Future] = {}
        for address in wanted:
            cached = self._answers.get(address)
            if cached is not None and cached[0] > now:
                found[address] = cached[1]
                continue
            future = self._pending.get(address)
            if future is None:
                if len(self._pending) >= self._max_pending:
                    continue
                future = self._pool.submit(self._resolver.resolve, address)
                self._pending[address] = future
                self.asked += 1
            waiting[address] = future
        return found, waiting

    def _collect(self) -> list[DnsAnswer]:
        """Moves finished lookups into the cache; returns their answers."""
        done = [address for address, future in self._pending.items() if future.done()]
        now = self._clock()
        arrived = []
        for address in done:
            answer = _answer(address, self._pending.pop(address))
            self._answers.put(address, (now + (self._fault_ttl if _has_fault(answer) else self._ttl), answer))
            arrived.append(answer)
        return arrived


def _answer(address: str, done: Future) -> DnsAnswer:
    return done.result() if done.exception() is None else DnsAnswer(address, Lookup(error="dns-error"))


def _has_fault(answer: DnsAnswer) -> bool:
    """Some lookup of `answer` failed for a reason that may pass (not NXDOMAIN or no answer)."""
    lookups = (answer.ptr, *(lookup for _, lookup in answer.forward))
    return any(lookup.error is not None and lookup.error not in DEFINITE_DNS_ERRORS for lookup in lookups)


@lru_cache(maxsize=1)
def _system_servers() -> tuple[tuple[str, int], ...]:
    try:
        system = dns.resolver.Resolver()
    except dns.resolver.NoResolverConfiguration as error:
        raise ValueError(f"--dns live: no system resolver configured ({error}); use --dns-server") from None
    servers = tuple(
        (server, system.nameserver_ports.get(server, system.port))
        for server in system.nameservers
        if isinstance(server, str) and parse_ip(server) is not None
    )
    if not servers:
        raise ValueError("--dns live: the system resolver names no DNS server address; use --dns-server")
    return servers


def _lookup(response: dns.message.Message, rdtype: dns.rdatatype.RdataType) -> Lookup:
    """The records a response gives for its question, following CNAMEs (classless reverse
    delegation, RFC 2317, answers PTR questions through one)."""
    code = response.rcode()
    if code != dns.rcode.NOERROR:
        return Lookup(error=_RCODE_ERRORS.get(code, "dns-error"))
    try:
        rrset = response.resolve_chaining().answer
    except dns.exception.DNSException:
        return Lookup(error="dns-error")
    if not rrset:
        return Lookup(error="no-answer")
    if rdtype == dns.rdatatype.PTR:
        return Lookup(tuple(_host(record.target.to_text()) for record in rrset))
    return Lookup(tuple(str(parse_ip(record.address)) for record in rrset))


def _host(name: str) -> str:
    return name.rstrip(".").lower()


# ------------------------------------------------------------------------------ snapshots


def answer_to_json(answer: DnsAnswer) -> dict:
    """A snapshot line's object (see the module docstring)."""
    return {
        "ip": answer.ip,
        "ptr": list(answer.ptr.records),
        "error": answer.ptr.error,
        "forward": {name: list(lookup.records) for name, lookup in answer.forward if lookup.error is None},
        "forward_errors": {name: lookup.error for name, lookup in answer.forward if lookup.error is not None},
        "resolved_at": answer.resolved_at,
    }


def answer_from_json(item: object) -> DnsAnswer:
    """A snapshot line's object back into an answer; ValueError says what is wrong."""
    if not isinstance(item, dict):
        raise ValueError("expected a JSON object")
    address = parse_ip(_text(item, "ip"))
    if address is None:
        raise ValueError(f"'ip' is not an IP address: {item['ip']!r}")
    forward = _name_map(item, "forward", _addresses)
    errors = _name_map(item, "forward_errors", _code)
    lookups = {name: Lookup(addresses) for name, addresses in forward.items()}
    lookups.update({name: Lookup(error=code) for name, code in errors.items()})
    return DnsAnswer(
        str(address),
        Lookup(tuple(_host(n) for n in _texts(item.get("ptr"), "ptr")), _error_code(item.get("error"), "error")),
        tuple(sorted(lookups.items())),
        _text(item, "resolved_at") if "resolved_at" in item else "",
    )


def read_snapshot(path: str) -> dict[str, DnsAnswer]:
    """Answers by address from a snapshot file or folder (see the module docstring); ValueError
    names the file and line at fault."""
    answers: dict[str, DnsAnswer] = {}
    for file in _snapshot_files(path):
        try:
            require_regular(str(file))
            with open(file, "rb") as handle:
                for number, raw in enumerate(handle, start=1):
                    if not raw.strip():
                        continue
                    try:
                        answer = answer_from_json(json.loads(raw))
                        # A lone surrogate ("\ud800") decodes but can never be written out again.
                        json.dumps(answer_to_json(answer), ensure_ascii=False).encode("utf-8")
                    except RecursionError:
                        raise ValueError(f"DNS snapshot {file}:{number}: nested too deeply") from None
                    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError included
                        raise ValueError(f"DNS snapshot {file}:{number}: {error}") from None
                    known = answers.get(answer.ip)
                    if known is None or known.resolved_at <= answer.resolved_at:
                        answers[answer.ip] = answer
        except OSError as error:
            raise ValueError(f"cannot read DNS snapshot {file}: {error}") from None
    return answers


def _snapshot_files(path: str) -> list[Path]:
    folder = Path(path)
    if not folder.is_dir():
        return [folder]
    return sorted(folder.glob("*.jsonl"))


def _text(item: dict, key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value


def _texts(value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return value


def _addresses(value: object, key: str) -> tuple[str, ...]:
    parsed = tuple(parse_ip(text) for text in _texts(value, key))
    if None in parsed:
        raise ValueError(f"'{key}' must list IP addresses")
    return tuple(map(str, parsed))


def _error_code(value: object, key: str) -> str | None:
    return None if value is None else _code(value, key)


def _code(value: object, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"'{key}' must be an error code such as \"timeout\"")
    return value


def _name_map(item: dict, key: str, check) -> dict:
    value = item.get(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' must be an object keyed by host name")
    return {_host(name): check(entry, f"{key}[{name}]") for name, entry in value.items()}


def build_resolver(
    mode: str,
    registry: Registry,
    *,
    server: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> Resolver | None:
    """The resolver `--dns MODE` names (None for off); a snapshot file is read now, so a bad one
    stops the run before it starts."""
    if server is not None and mode != "live":
        raise ValueError("--dns-server needs --dns live")
    if mode == "off":
        return None
    if mode == "live":
        resolver = LiveResolver(rdns_suffixes(registry), parse_server(server), timeout, retries, concurrency)
        resolver.check()
        return resolver
    if mode.startswith("snapshot:") and mode != "snapshot:":
        return SnapshotResolver(read_snapshot(mode.removeprefix("snapshot:")))
    raise ValueError(f"--dns: expected off, live or snapshot:FILE, got {mode!r}")


def rdns_suffixes(registry: Registry) -> tuple[str, ...]:
    """Every host suffix any crawler is proved by: the PTR names worth a forward lookup."""
    return tuple(sorted({suffix for crawler in registry.crawlers for suffix in crawler.rdns_suffixes}))


def parse_server(text: str | None) -> tuple[str, int] | None:
    """`HOST[:PORT]` with HOST an IP address (`[::1]:53` for IPv6 with a port); None stays None."""
    if text is None:
        return None
    host, port = text.strip(), str(_DNS_PORT)
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":") or port
    elif host.count(":") == 1:
        host, port = host.split(":")
    if parse_ip(host) is None or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--dns-server: expected IP[:PORT] (e.g. 127.0.0.1:5353), got {text!r}")
    return str(parse_ip(host)), int(port)
