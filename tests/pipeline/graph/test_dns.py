"""Reverse DNS against a real DNS server: dnsmasq on a loopback port, started by these tests.

Addresses and names are documentation ones (RFC 5737, RFC 3849); the server knows nothing else.
It is authoritative (`--local`) for the zones below, so a name it lacks is a real NXDOMAIN, and
it answers REFUSED for anything outside them. Without dnsmasq these tests skip, unless CI=true,
where a missing dnsmasq is a failure.
"""
from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apache_beam as beam
import dns.message
import dns.rcode
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from config.registry import default_registry
from localdns import Dnsmasq, dnsmasq_binary, running_dnsmasq
from matcher import records
from matcher.clientip import trusted_proxies
from matcher.identity import reverse_dns_address, verify
from matcher.ip_ranges import build_range_index
from matcher.reverse_dns import DnsAnswer, Lookup
from pipeline.graph.dns import DnsSettings, ResolveDistinct, dns_lookups
from matcher.line_auditor import LineAuditor, dns_claim_parts
from pipeline.evidence.resolvers import (
    CachingResolver,
    LiveResolver,
    SnapshotResolver,
    answer_to_json,
    parse_server,
    rdns_suffixes,
    read_snapshot,
)
from pipeline.graph.line_audit import AuditLogLines, AuditWithDnsFn, ResolveLogClients
from pipeline.graph.read_logs import ReadLogLines
from pipeline.graph.settings import IdentitySettings
from helpers import REPO, crawl_audit, read_jsonl, run_settings, stream_graph

REGISTRY = default_registry()
NO_RANGES = build_range_index([], {})
AT = datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
FEEDFETCHER = "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)"

ZONE_ARGS = [
    *(f"--local=/{zone}/" for zone in (
        "googlebot.com", "search.msn.com", "evilgooglebot.com", "example.net", "googleusercontent.com",
        "2.0.192.in-addr.arpa", "8.b.d.0.1.0.0.2.ip6.arpa",
    )),
    "--host-record=crawl-192-0-2-10.googlebot.com,192.0.2.10",  # genuine Googlebot
    "--host-record=msnbot-192-0-2-20.search.msn.com,192.0.2.20",  # genuine bingbot
    "--host-record=crawl-192-0-2-30.evilgooglebot.com,192.0.2.30",  # look-alike, forward-confirms
    "--ptr-record=40.2.0.192.in-addr.arpa,crawl-192-0-2-40.googlebot.com",
    "--host-record=crawl-192-0-2-40.googlebot.com,198.51.100.40",  # forward gives another address
    "--ptr-record=50.2.0.192.in-addr.arpa,crawl-192-0-2-50.googlebot.com",  # no forward record
    "--host-record=crawl-2001-db8--10.googlebot.com,2001:db8::10",  # IPv6 Googlebot
    # two PTR names, the second confirms (an explicit PTR hides the one a host-record implies)
    "--ptr-record=70.2.0.192.in-addr.arpa,host-192-0-2-70.example.net",
    "--ptr-record=70.2.0.192.in-addr.arpa,crawl-192-0-2-70.googlebot.com",
    "--host-record=crawl-192-0-2-70.googlebot.com,192.0.2.70",
    "--host-record=192-0-2-80.gae.googleusercontent.com,192.0.2.80",  # any cloud customer
    # classless reverse delegation (RFC 2317): the PTR is reached through a CNAME
    "--cname=90.2.0.192.in-addr.arpa,90.64/26.2.0.192.in-addr.arpa",
    "--ptr-record=90.64/26.2.0.192.in-addr.arpa,crawl-192-0-2-90.googlebot.com",
    "--host-record=crawl-192-0-2-90.googlebot.com,192.0.2.90",
    # YandexBot publishes reverse DNS only: no range file can prove it
    "--local=/yandex.com/",
    "--host-record=spider-192-0-2-110.yandex.com,192.0.2.110",  # genuine
    "--host-record=spider-192-0-2-120.yandex.com.example.net,192.0.2.120",  # look-alike, forward-confirms
]
# 192.0.2.60 has no PTR (NXDOMAIN); 198.18.0.1 is outside every zone (REFUSED).

# (crawler, client ip, identity, evidence before the range context)
DECISIONS = [
    ("Googlebot", "192.0.2.10", "verified", "PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10"),
    ("bingbot", "192.0.2.20", "verified", "PTR msnbot-192-0-2-20.search.msn.com -> A 192.0.2.20"),
    ("Googlebot", "192.0.2.30", "spoofed", "PTR crawl-192-0-2-30.evilgooglebot.com not under googlebot.com, google.com"),
    ("Googlebot", "192.0.2.40", "spoofed", "PTR crawl-192-0-2-40.googlebot.com -> A 198.51.100.40, not 192.0.2.40"),
    ("Googlebot", "192.0.2.50", "spoofed", "PTR crawl-192-0-2-50.googlebot.com -> A nxdomain"),
    ("Googlebot", "192.0.2.60", "spoofed", "PTR of 192.0.2.60: nxdomain"),
    ("Googlebot", "2001:db8::10", "verified", "PTR crawl-2001-db8--10.googlebot.com -> AAAA 2001:db8::10"),
    ("Googlebot", "::ffff:192.0.2.10", "verified", "PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10"),
    ("Googlebot", "192.0.2.70", "verified", "PTR crawl-192-0-2-70.googlebot.com -> A 192.0.2.70"),
    ("Googlebot", "192.0.2.80", "spoofed", "PTR 192-0-2-80.gae.googleusercontent.com not under googlebot.com, google.com"),
    ("FeedFetcher-Google", "192.0.2.80", "verified", "PTR 192-0-2-80.gae.googleusercontent.com -> A 192.0.2.80"),
    ("bingbot", "192.0.2.10", "spoofed", "PTR crawl-192-0-2-10.googlebot.com not under search.msn.com"),
    ("Googlebot", "198.18.0.1", "unverified", "PTR of 198.18.0.1: refused"),
    ("Googlebot", "192.0.2.90", "verified", "PTR crawl-192-0-2-90.googlebot.com -> A 192.0.2.90"),
]
class DnsServer(Dnsmasq):
    def resolver(self, **settings) -> LiveResolver:
        return LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", self.port), **settings)


@pytest.fixture(scope="module")
def dns_server(tmp_path_factory) -> DnsServer:
    binary = dnsmasq_binary()
    if binary is None:
        message = "dnsmasq not found (Debian package dnsmasq-base)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; CI=true requires it")
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("dnsmasq")
    with running_dnsmasq(binary, folder, ZONE_ARGS, probe="crawl-192-0-2-10.googlebot.com") as server:
        yield DnsServer(server.port, server.log)


class Unhelpful:
    """A DNS server on a loopback port that answers no question (`rcode` None: the timeout path) or
    every question with `rcode`, as a broken recursor does; it keeps the names it was asked, in
    the order they came."""

    def __init__(self, rcode: int | None):
        self.asked: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.05)
        self.port = self._socket.getsockname()[1]
        self._rcode = rcode
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self._socket.recvfrom(4096)
            except socket.timeout:
                continue
            query = dns.message.from_wire(data)
            self.asked.append(query.question[0].name.to_text())
            if self._rcode is not None:
                reply = dns.message.make_response(query)
                reply.set_rcode(self._rcode)
                self._socket.sendto(reply.to_wire(), peer)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def servfail():
    server = Unhelpful(dns.rcode.SERVFAIL)
    yield server
    server.close()


@pytest.fixture
def silent():
    server = Unhelpful(None)
    yield server
    server.close()


def _decide(crawler_name: str, ip: str, resolver) -> tuple[str, str, str]:
    crawler = REGISTRY.get(crawler_name)
    address = reverse_dns_address(crawler, ip, AT, NO_RANGES)
    result = verify(crawler, ip, AT, NO_RANGES, {address: resolver.resolve(address)})
    return result.status, result.method, result.evidence


# --------------------------------------------------------------------- decisions, live


@pytest.mark.parametrize("crawler, ip, status, evidence", DECISIONS)
def test_forward_confirmed_reverse_dns_against_dnsmasq(dns_server, crawler, ip, status, evidence):
    got_status, method, got_evidence = _decide(crawler, ip, dns_server.resolver())
    assert (got_status, method) == (status, "reverse-dns")
    assert got_evidence.startswith(evidence + " (DNS 20")
    if status != "verified":
        assert got_evidence.endswith("; no range snapshot for " + ", ".join(REGISTRY.get(crawler).range_sources))


def test_a_live_answer_keeps_every_ptr_name_and_only_confirms_crawler_suffixes(dns_server):
    answer = dns_server.resolver().resolve("192.0.2.70")
    assert sorted(answer.ptr.records) == ["crawl-192-0-2-70.googlebot.com", "host-192-0-2-70.example.net"]
    assert dict(answer.forward).keys() == {"crawl-192-0-2-70.googlebot.com"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", answer.resolved_at)


@pytest.mark.slow
def test_a_silent_server_is_asked_once_per_attempt_and_never_makes_a_spoof(silent):
    resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", silent.port), timeout=0.5, retries=1)
    started = time.monotonic()
    status, _, evidence = _decide("Googlebot", "192.0.2.10", resolver)
    assert time.monotonic() - started >= 1.0  # it waited out both attempts
    assert status == "unverified" and evidence.startswith("PTR of 192.0.2.10: timeout")
    assert silent.asked == ["10.2.0.192.in-addr.arpa."] * 2  # retries + 1, never a third


@pytest.mark.slow
def test_many_addresses_on_a_dead_server_are_asked_at_once_not_one_after_another(silent):
    """One after another, an address's second attempt would come before the next address's first;
    at once, every first attempt is out before any timeout, which is far longer than starting them."""
    resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", silent.port), timeout=2.0, retries=1, concurrency=16)
    addresses = [f"192.0.2.{n}" for n in range(100, 116)]
    answers = resolver.resolve_many(addresses)
    assert [a.ip for a in answers] == addresses
    assert {a.ptr.error for a in answers} == {"timeout"}
    assert sorted(silent.asked[:16]) == sorted(f"{n}.2.0.192.in-addr.arpa." for n in range(100, 116))
    assert sorted(silent.asked[16:]) == sorted(silent.asked[:16])


def test_a_servfail_is_unverified_not_spoofed_and_not_asked_again(servfail):
    resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", servfail.port), timeout=30, retries=1)
    status, _, evidence = _decide("Googlebot", "192.0.2.10", resolver)
    assert status == "unverified" and evidence.startswith("PTR of 192.0.2.10: servfail")
    assert servfail.asked == ["10.2.0.192.in-addr.arpa."]  # an answer, even a failing one, is not retried


# ------------------------------------------------------------------- the pipeline, live


def _log_line(ip: str, ua: str, minute: int, forwarded_for: str | None = None) -> str:
    line = f'{ip} - - [02/Nov/2026:10:{minute:02d}:00 +0000] "GET /page HTTP/1.1" 200 5 "-" "{ua}"'
    return line + (f' "{forwarded_for}"' if forwarded_for else "")


def _pipeline_log(folder: Path) -> list[str]:
    """Each decision's request three times, interleaved so every address spans several batches,
    plus one request through a trusted proxy and one browser (no verdict)."""
    uas = {"Googlebot": GOOGLEBOT, "bingbot": BINGBOT, "FeedFetcher-Google": FEEDFETCHER}
    lines = [_log_line(ip, uas[crawler], n) for n in range(3) for crawler, ip, _, _ in DECISIONS]
    lines.append(_log_line("10.1.2.3", GOOGLEBOT, 59, "198.51.100.7, 192.0.2.10"))
    lines.append(_log_line("192.0.2.60", "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0", 59))
    (folder / "access.log").write_text("\n".join(lines) + "\n")
    return lines


def _auditor(**more) -> LineAuditor:
    """The auditor of these tests' logs: combined format, host example.com, no range snapshots."""
    return LineAuditor(
        log_format="combined", default_host="example.com", registry=REGISTRY, ranges=NO_RANGES,
        error_limit=timedelta(days=30), grace=timedelta(hours=24), **more,
    )


def _audit(folder: Path, resolve: beam.PTransform | None, out: str) -> list[dict]:
    """Verdict records of the pipeline over `folder`/access.log, as JSON-ready dicts in line order."""
    auditor = _auditor(proxies=trusted_proxies(["10.0.0.0/8"]))
    logs = str(folder / "access.log")
    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as pipeline:
        inputs = {
            "batches": pipeline | ReadLogLines(logs, lines_per_batch=5),
            "robots": pipeline | "NoRobots" >> beam.Create([{}]),
        }
        if resolve is not None:
            inputs["dns"] = pipeline | "ResolveDns" >> ResolveLogClients(logs, auditor, resolve)
        outputs = inputs["batches"] | AuditLogLines(auditor, inputs["robots"], inputs.get("dns"))
        (
            outputs["verdict_batches"]
            | beam.FlatMap(iter)
            | beam.Map(lambda r: json.dumps(records.to_json_ready(r, records.VERDICTS), sort_keys=True))
            | beam.io.WriteToText(str(folder / out), shard_name_template="")
        )
    rows = [json.loads(line) for line in (folder / out).read_text().splitlines()]
    return sorted(rows, key=lambda r: int(r["source"].rsplit(":", 1)[1]))


@pytest.mark.slow
def test_the_pipeline_resolves_each_address_once_and_replays_identically(dns_server, tmp_path):
    lines = _pipeline_log(tmp_path)
    record = tmp_path / "dns-answers.jsonl"
    live = dns_lookups(
        _identity(["--dns=live", f"--dns-server={dns_server.address}", f"--dns-record={record}"]), REGISTRY
    )
    mark = dns_server.mark()
    verdicts = _audit(tmp_path, live, "live.jsonl")
    queries = dns_server.queries_since(mark)

    expected = [status for _, _, status, _ in DECISIONS] * 3 + ["verified"]
    assert [v["identity"] for v in verdicts] == expected
    assert len(lines) == len(verdicts) + 1  # the browser claims nothing and is in no range
    proxied = verdicts[-1]
    assert (proxied["client_ip"], proxied["identity_evidence"].split(" (")[0]) == (
        "192.0.2.10", "PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10"
    )

    # 14 decisions and the proxied request name 11 distinct addresses (::ffff:192.0.2.10 is
    # 192.0.2.10); each got one PTR query, and each PTR name under a crawler suffix one forward
    ptr_names = [name for kind, name in queries if kind == "PTR"]
    distinct = {ip.removeprefix("::ffff:") for _, ip, _, _ in DECISIONS}
    assert len(ptr_names) == len(set(ptr_names)) == len(distinct) == 11
    forward = [(kind, name) for kind, name in queries if kind in ("A", "AAAA")]
    assert len(forward) == len(set(forward))
    assert ("A", "crawl-192-0-2-10.googlebot.com") in forward
    assert ("AAAA", "crawl-2001-db8--10.googlebot.com") in forward
    assert not any(name.endswith(("example.net", "evilgooglebot.com")) for _, name in forward)

    recorded = read_snapshot(str(record))
    assert sorted(recorded) == sorted(distinct)

    replay = dns_lookups(_identity([f"--dns=snapshot:{record}"]), REGISTRY)
    mark = dns_server.mark()
    replayed = _audit(tmp_path, replay, "replayed.jsonl")
    assert dns_server.queries_since(mark) == []
    assert replayed == verdicts


def test_every_token_dns_can_prove_contains_a_prefilter_part():
    parts = dns_claim_parts(REGISTRY)
    provable = [c for c in REGISTRY.crawlers if c.rdns_suffixes and not c.robots_only]
    assert len(provable) > 20
    assert all(any(part in token for part in parts) for c in provable for token in c.ua_tokens)
    assert all(part == part.lower() for part in parts)


def test_dns_questions_parse_every_line_that_may_claim_a_provable_crawler():
    auditor = _auditor()
    lines = [
        _log_line("192.0.2.1", "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0", 0),  # browser: skipped
        _log_line("192.0.2.2", "GOOGLEBOT/2.1 (+http://www.google.com/bot.html)", 0),  # case aside
        _log_line("192.0.2.3", "Googleb\\x6ft/2.1", 0),  # an escape hides "bot"
        _log_line("192.0.2.4", "Mozilla/5.0 (compatible; YandexImages/3.0)", 0),
        _log_line("::ffff:192.0.2.5", "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)", 0),
        _log_line("192.0.2.6", "Mozilla/5.0 (compatible; GPTBot/1.3)", 0),  # ranges only: no question
        _log_line("192.0.2.7", "Mozilla/5.0 (compatible; Google-Extended)", 0),  # robots-only: no question
        "not a log line at all, googlebot",
    ]
    assert auditor.dns_questions(("access.log", 1, lines)) == {"192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5"}


@pytest.mark.slow
def test_dns_trouble_is_counted(silent, servfail):
    def counters(server_port: int, timeout: float) -> dict[str, int]:
        resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", server_port), timeout=timeout, retries=0)
        pipeline = beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"]))
        _ = pipeline | beam.Create(["192.0.2.1", "192.0.2.2", "192.0.2.1", "2001:db8::1"]) | ResolveDistinct(resolver)
        result = pipeline.run()
        result.wait_until_finish()
        found = result.metrics().query(MetricsFilter().with_namespace("pipeline.graph.dns.ResolveBatchFn"))["counters"]
        return {counter.key.metric.name: counter.committed for counter in found}

    # a counter never incremented is not reported: absent means zero
    assert counters(silent.port, timeout=0.1) == {"dns_addresses": 3, "dns_timeouts": 3}
    # The SERVFAIL server answers every question, but from a thread of this busy process: its
    # answer gets time enough to arrive, or a slow reply would be counted as a timeout.
    assert counters(servfail.port, timeout=30.0) == {"dns_addresses": 3, "dns_errors": 3}


@pytest.mark.slow
def test_an_address_missing_from_the_snapshot_is_unverified(tmp_path):
    _pipeline_log(tmp_path)
    verdicts = _audit(tmp_path, ResolveDistinct(SnapshotResolver({})), "empty.jsonl")
    assert {v["identity"] for v in verdicts} == {"unverified"}
    assert verdicts[0]["identity_evidence"].startswith("PTR of 192.0.2.10: not-in-snapshot")


@pytest.mark.slow
def test_dns_off_keeps_the_range_only_verdicts(tmp_path):
    _pipeline_log(tmp_path)
    verdicts = _audit(tmp_path, dns_lookups(_identity([]), REGISTRY), "off.jsonl")
    assert {v["identity_evidence"].split(";")[0] for v in verdicts} == {"dns-off: needs reverse DNS"}


# ---------------------------------------------------------------------- options, command


def _identity(argv: list[str]) -> IdentitySettings:
    """The identity settings a batch run reads from `argv`, refused as `run` refuses them."""
    settings, _ = run_settings(["--logs=l", "--robots=r", "--out=o", *argv])
    return settings.identity


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dns=sometimes"], "--dns: expected off, live or snapshot:FILE"),
        (["--dns=snapshot:"], "--dns: expected off, live or snapshot:FILE"),
        (["--dns=snapshot:/no/such/file.jsonl"], "cannot read DNS snapshot /no/such/file.jsonl"),
        (["--dns-record=x.jsonl"], "--dns-record needs --dns live or --dns snapshot:FILE"),
        (["--dns=off", "--dns-server=127.0.0.1"], "--dns-server needs --dns live"),
        (["--dns=live", "--dns-server=localhost:53"], "--dns-server: expected IP[:PORT]"),
        (["--dns=live", "--dns-server=127.0.0.1:99999"], "--dns-server: expected IP[:PORT]"),
        (["--dns=live", "--dns-timeout=0"], "--dns-timeout: expected a number of at least 0.001"),
        (["--dns=live", "--dns-retries=-1"], "--dns-retries: expected a number of at least 0"),
        (["--dns=live", "--dns-concurrency=many"], "--dns-concurrency: expected a number of at least 1"),
    ],
)
def test_bad_dns_options_are_clear_errors(argv, message):
    with pytest.raises(ValueError) as raised:
        dns_lookups(_identity(argv), REGISTRY)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize(
    "server, expected",
    [
        ("127.0.0.1:5353", ("127.0.0.1", 5353)),
        ("[::1]:53", ("::1", 53)),
        ("[::1]", ("::1", 53)),
        ("2001:DB8::1", ("2001:db8::1", 53)),
        ("192.0.2.1", ("192.0.2.1", 53)),
    ],
)
def test_dns_server_forms(server, expected):
    assert parse_server(server) == expected


def test_trusted_proxies_option():
    proxies = _identity(["--trusted-proxies=10.0.0.0/8, 2001:db8:ff::/48"]).proxies
    assert [str(n) for n in proxies.networks] == ["10.0.0.0/8", "2001:db8:ff::/48"]
    assert _identity([]).proxies.networks == ()
    with pytest.raises(ValueError, match="--trusted-proxies: not a network or address: 'lan'"):
        _identity(["--trusted-proxies=lan"])
    assert [str(n) for n in _identity(["--trusted-proxies=::ffff:10.0.0.0/104"]).proxies.networks] == ["10.0.0.0/8"]


@pytest.mark.parametrize("spec", ["0.0.0.0/0", "::/0", "10.0.0.0/8,64.0.0.0/7"])
def test_a_trusted_proxy_network_too_broad_is_a_one_line_error_at_launch(spec, tmp_path, capsys):
    assert crawl_audit(["run", f"--trusted-proxies={spec}", f"--logs={tmp_path}/none.log", f"--out={tmp_path}/out"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("crawl-audit: ") and "too broad" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_client_behind_a_mapped_proxy_network_is_its_own_address(dns_server, tmp_path):
    """A genuine Googlebot behind `::ffff:10.0.0.0/104` is verified; a direct client naming
    Googlebot's address in X-Forwarded-For is judged by its own address."""
    log = tmp_path / "access.log"
    log.write_text("\n".join([
        _log_line("::ffff:10.0.0.5", GOOGLEBOT, 1, "192.0.2.10"),
        _log_line("192.0.2.60", GOOGLEBOT, 2, "192.0.2.10"),
    ]) + "\n")
    out = tmp_path / "out"
    assert crawl_audit([
        "run", f"--logs={log}", "--log-format=combined", "--default-host=example.com", f"--ranges={tmp_path}",
        f"--robots={REPO / 'samples' / 'robots' / 'history.jsonl'}",
        "--dns=live", f"--dns-server={dns_server.address}", "--trusted-proxies=::ffff:10.0.0.0/104",
        f"--out={out}", "--runner=FnApiRunner",
    ]) == 0
    rows = sorted(read_jsonl(out / "verdicts"), key=lambda row: row["ts"])
    assert [(row["client_ip"], row["identity"]) for row in rows] == [("192.0.2.10", "verified"), ("192.0.2.60", "spoofed")]


def test_verify_asks_no_dns_unless_told_as_run_does(tmp_path, capsys):
    """The same address gets the same identity from `verify` and from `run` with their defaults."""
    assert crawl_audit(["verify", "192.0.2.10", GOOGLEBOT, f"--ranges={tmp_path}", "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["identity"] == "unverified" and verdict["evidence"].startswith("dns-off")


def test_verify_command_live(dns_server, tmp_path, capsys):
    argv = ["--dns=live", f"--dns-server={dns_server.address}", f"--ranges={tmp_path}"]  # no snapshots
    assert crawl_audit(["verify", "192.0.2.10", GOOGLEBOT, *argv]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "verified"
    assert printed[1:4] == ["  claimed:  Googlebot (Google)", "  address:  192.0.2.10", "  method:   reverse-dns"]
    assert printed[4].startswith("  evidence: PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10 (DNS ")

    assert crawl_audit(["verify", "192.0.2.30", "Googlebot", "--json", *argv]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["identity"], result["crawler"], result["method"]) == ("spoofed", "Googlebot", "reverse-dns")
    assert result["evidence"].startswith("PTR crawl-192-0-2-30.evilgooglebot.com not under")


@pytest.mark.slow
def test_a_googlebot_claim_from_a_zone_scoped_address_is_unverified_in_a_live_run(dns_server, tmp_path):
    """One line from `fe80::1%eth0` neither stops the run nor asks DNS; the other lines are judged."""
    log = tmp_path / "access.log"
    log.write_text("\n".join([
        _log_line("fe80::1%eth0", GOOGLEBOT, 1),
        _log_line("[fe80::1%eth0]:443", GOOGLEBOT, 2),
        _log_line("192.0.2.10", GOOGLEBOT, 3),
        _log_line("[2001:db8::10]:443", GOOGLEBOT, 4),
    ]) + "\n")
    mark = dns_server.mark()
    out = tmp_path / "out"
    assert crawl_audit([
        "run", f"--logs={log}", "--log-format=combined", "--default-host=example.com", f"--ranges={tmp_path}",
        f"--robots={REPO / 'samples' / 'robots' / 'history.jsonl'}",
        "--dns=live", f"--dns-server={dns_server.address}", f"--out={out}", "--runner=FnApiRunner",
    ]) == 0
    rows = sorted(read_jsonl(out / "verdicts"), key=lambda row: row["ts"])
    assert [(row["identity"], row["identity_method"]) for row in rows] == [
        ("unverified", "reverse-dns"), ("unverified", "reverse-dns"), ("verified", "reverse-dns"), ("verified", "reverse-dns"),
    ]
    assert all(row["identity_evidence"].startswith("fe80::1%eth0 carries a zone id") for row in rows[:2])
    asked = {name for name, _ in dns_server.queries_since(mark)}
    assert not any("fe80" in name or name.startswith("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f") for name in asked)
    assert read_jsonl(out / "dead_letters") == []


def test_verify_reads_a_zone_id_and_a_port_as_the_audit_does(dns_server, tmp_path, capsys):
    argv = ["--dns=live", f"--dns-server={dns_server.address}", f"--ranges={tmp_path}", "--json"]
    assert crawl_audit(["verify", "fe80::1%eth0", GOOGLEBOT, *argv]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (result["identity"], result["method"]) == ("unverified", "reverse-dns")
    assert result["evidence"].startswith("fe80::1%eth0 carries a zone id")
    assert crawl_audit(["verify", "[::ffff:192.0.2.10]:443", GOOGLEBOT, *argv]) == 0
    assert json.loads(capsys.readouterr().out)["evidence"].startswith("PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10")


@pytest.mark.slow
def test_a_live_resolver_answers_an_address_without_a_reverse_name_without_asking(dns_server):
    mark = dns_server.mark()
    answer = dns_server.resolver().resolve("fe80::1%eth0")
    assert (answer.ip, answer.ptr.error) == ("fe80::1%eth0", "no-reverse-name")
    assert dns_server.queries_since(mark) == []


@pytest.mark.slow
def test_verify_command_from_a_snapshot_and_with_dns_off(tmp_path, capsys):
    snapshot = tmp_path / "answers.jsonl"
    snapshot.write_text(json.dumps({
        "ip": "2001:db8::10", "ptr": ["crawl-2001-db8--10.googlebot.com."], "error": None,
        "forward": {"crawl-2001-db8--10.googlebot.com": ["2001:db8:0::10"]}, "forward_errors": {},
        "resolved_at": "2026-11-02T10:00:00Z",
    }) + "\n")
    (tmp_path / "ranges").mkdir()
    ranges = f"--ranges={tmp_path / 'ranges'}"
    assert crawl_audit(["verify", "2001:DB8::10", "Googlebot", f"--dns=snapshot:{snapshot}", ranges, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["evidence"] == "PTR crawl-2001-db8--10.googlebot.com -> AAAA 2001:db8::10 (DNS 2026-11-02T10:00:00Z)"

    assert crawl_audit(["verify", "2001:db8::10", "Googlebot", "--dns=off", ranges]) == 1
    assert capsys.readouterr().out.startswith("unverified\n")
    assert crawl_audit(["verify", "2001:db8::10", "Bytespider", "--dns=off", ranges]) == 1
    assert capsys.readouterr().out.startswith("unverifiable\n")


def test_verify_command_errors(tmp_path, capsys):
    assert crawl_audit(["verify", "192.0.2.10", "curl/8.0", "--dns=off", f"--ranges={tmp_path}"]) == 2
    assert "nothing to verify" in capsys.readouterr().err
    assert crawl_audit(["verify", "192.0.2.10", "Googlebot", "--dns=maybe", f"--ranges={tmp_path}"]) == 2
    assert "--dns: expected off, live or snapshot:FILE" in capsys.readouterr().err
    assert crawl_audit(["verify", "192.0.2.10", "Googlebot", "--dns=off", f"--ranges={tmp_path / 'none'}"]) == 2
    assert "ranges folder not found" in capsys.readouterr().err
    assert crawl_audit(["verify", "192.0.2.10", "Googlebot", "--dns=off", "--at=yesterday", f"--ranges={tmp_path}"]) == 2
    assert "--at: not a date or time: 'yesterday'" in capsys.readouterr().err


@pytest.mark.slow
def test_verify_command_uses_the_range_snapshots_around_the_given_time(tmp_path, capsys):
    folder = tmp_path / "google-common-crawlers"
    folder.mkdir()
    (folder / "2026-06-01.json").write_text(json.dumps({"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}]}))
    (folder / "2026-09-01.json").write_text(json.dumps({"prefixes": [{"ipv4Prefix": "198.51.100.0/24"}]}))
    argv = ["192.0.2.10", "Googlebot", "--dns=off", f"--ranges={tmp_path}"]
    assert crawl_audit(["verify", *argv, "--at=2026-07-01T12:00:00Z"]) == 0
    assert "192.0.2.0/24 in google-common-crawlers snapshot 2026-06-01" in capsys.readouterr().out
    # the June list stood until the September one; past the window it still speaks, as stale
    assert crawl_audit(["verify", *argv, "--at=2026-10-01"]) == 0
    assert "snapshot 2026-06-01 (stale: stood to 2026-08-31, 31 days before the request)" in capsys.readouterr().out
    assert crawl_audit(["verify", "203.0.113.10", *argv[1:], "--at=2026-10-01"]) == 1
    assert capsys.readouterr().out.startswith("spoofed\n")


# --------------------------------------------------------------------------- snapshots


def test_snapshot_lines_are_checked_with_the_line_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"ip": "192.0.2.1", "ptr": [], "error": "nxdomain"}
    for bad, message in [
        ("{not json", ":2: "),
        (json.dumps([1]), ":2: expected a JSON object"),
        (json.dumps({**good, "ip": "nope"}), ":2: 'ip' is not an IP address"),
        (json.dumps({"ip": "192.0.2.1"}), ":2: 'ptr' must be a list of strings"),
        (json.dumps({**good, "error": 5}), ":2: 'error' must be an error code"),
        (json.dumps({**good, "forward": {"a.example": "192.0.2.1"}}), ":2: 'forward[a.example]' must be a list"),
        (json.dumps({**good, "forward": {"a.example": ["a.example"]}}), ":2: 'forward[a.example]' must list IP"),
        (json.dumps({**good, "forward_errors": {"a.example": None}}), ":2: 'forward_errors[a.example]' must be an error code"),
    ]:
        path.write_text(json.dumps(good) + "\n" + bad + "\n")
        with pytest.raises(ValueError) as raised:
            read_snapshot(str(path))
        assert str(raised.value).startswith(f"DNS snapshot {path}{message}")


def test_snapshot_keys_are_canonical_and_the_later_line_wins(tmp_path):
    path = tmp_path / "answers.jsonl"
    first = {"ip": "::ffff:192.0.2.1", "ptr": [], "error": "timeout"}
    second = {"ip": "192.0.2.1", "ptr": ["A.Example."], "error": None, "forward_errors": {"a.example": "servfail"}}
    path.write_text(json.dumps(first) + "\n\n" + json.dumps(second) + "\n")
    answers = read_snapshot(str(path))
    assert list(answers) == ["192.0.2.1"]
    answer = answers["192.0.2.1"]
    assert (answer.ptr.records, answer.ptr.error, answer.resolved_at) == (("a.example",), None, "")
    assert dict(answer.forward)["a.example"].error == "servfail"


# ------------------------------------------------------------ the worker's cache (streaming)


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _ptr_queries(server: Dnsmasq, mark: int) -> list[str]:
    return [name for kind, name in server.queries_since(mark) if kind == "PTR"]


@pytest.mark.slow
def test_the_worker_cache_asks_once_per_ttl_and_hands_each_new_answer_out_once(dns_server):
    clock = _Clock()
    cache = CachingResolver(dns_server.resolver(), ttl=600, capacity=100, clock=clock)
    try:
        mark = dns_server.mark()
        answers, arrived = cache.answers(["192.0.2.110", "192.0.2.120", "192.0.2.110"], wait=5)
        assert sorted(answers) == ["192.0.2.110", "192.0.2.120"]
        assert answers["192.0.2.110"].forward[0][1].records == ("192.0.2.110",)
        assert sorted(a.ip for a in arrived) == ["192.0.2.110", "192.0.2.120"]
        clock.now += 599
        again, arrived = cache.answers(["192.0.2.120", "192.0.2.110"], wait=5)
        assert (again, arrived) == (answers, [])
        assert sorted(_ptr_queries(dns_server, mark)) == ["110.2.0.192.in-addr.arpa", "120.2.0.192.in-addr.arpa"]
        clock.now += 2  # past the TTL: asked again
        mark = dns_server.mark()
        _, arrived = cache.answers(["192.0.2.110"], wait=5)
        assert [a.ip for a in arrived] == ["192.0.2.110"]
        assert _ptr_queries(dns_server, mark) == ["110.2.0.192.in-addr.arpa"]
    finally:
        cache.close()


def _reverse(address: str) -> str:
    return ".".join(reversed(address.split("."))) + ".in-addr.arpa"


@pytest.mark.slow
def test_threads_of_a_worker_share_one_lookup_per_address(dns_server):
    cache = CachingResolver(dns_server.resolver(), ttl=600, capacity=100)
    try:
        mark = dns_server.mark()
        addresses = [f"192.0.2.{n}" for n in (10, 20, 30, 40, 50, 60, 70, 110)]
        results = []
        threads = [threading.Thread(target=lambda: results.append(cache.answers(addresses, wait=5))) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 4 and all(sorted(answers) == sorted(addresses) for answers, _ in results)
        assert all(answers["192.0.2.10"].ptr.records == ("crawl-192-0-2-10.googlebot.com",) for answers, _ in results)
        assert sorted(a.ip for _, arrived in results for a in arrived) == sorted(addresses)  # each handed out once
        assert sorted(_ptr_queries(dns_server, mark)) == sorted(map(_reverse, addresses))
    finally:
        cache.close()


@pytest.mark.slow
def test_the_worker_cache_keeps_the_most_recently_used_answers(dns_server):
    cache = CachingResolver(dns_server.resolver(), ttl=600, capacity=4)
    try:
        addresses = [f"192.0.2.{n}" for n in (10, 20, 30, 40, 50, 60, 70, 110)]
        answers, _ = cache.answers(addresses, wait=5)
        assert sorted(answers) == sorted(addresses) and len(cache) == 4  # answered all, kept four
        mark = dns_server.mark()
        cache.answers(addresses[-4:], wait=5)
        assert _ptr_queries(dns_server, mark) == []
        cache.answers(addresses[:1], wait=5)  # forgotten: asked again
        assert _ptr_queries(dns_server, mark) == [_reverse(addresses[0])]
        assert len(cache) == 4 and cache.asked == 9
    finally:
        cache.close()


def test_a_dead_resolver_fills_a_bounded_queue_and_nothing_waits_past_the_wait(silent):
    # The lookup's timeout is a hundred times the wait, so a call that waited for even one lookup
    # would be caught, with room for a loaded machine's scheduling.
    resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", silent.port), timeout=5.0, retries=0, concurrency=1)
    cache = CachingResolver(resolver, capacity=1000)
    try:
        addresses = [f"192.0.2.{n}" for n in range(1, 71)]
        started = time.monotonic()
        answers, arrived = cache.answers(addresses, wait=0.05)
        assert time.monotonic() - started < 2.5
        assert arrived == [] and {a.ptr.error for a in answers.values()} == {"timeout"}
        assert cache.asked == 64  # QUEUED_PER_THREAD x one thread; the rest turned away, unverified
    finally:
        cache.close()


@pytest.mark.slow
def test_a_dead_resolver_delays_a_bundle_by_one_budget_and_is_unverified(silent):
    """The streaming audit DoFn, called as a runner calls it: two batches of new addresses in one
    bundle wait one lookup budget in all; their claims are unverified, never spoofed."""
    resolver = LiveResolver(rdns_suffixes(REGISTRY), ("127.0.0.1", silent.port), timeout=1.5, retries=1)
    auditor = _auditor()
    fn = AuditWithDnsFn(auditor, DnsSettings(resolver, None, 3600, 100))
    yandex = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
    fn.setup()
    try:
        fn.start_bundle()
        started = time.monotonic()
        outputs = []
        for n, ip in enumerate(["192.0.2.110", "192.0.2.111"]):
            outputs += list(fn.process((f"log{n}", 1, [_log_line(ip, yandex, n)]), {}))
        elapsed = time.monotonic() - started
    finally:
        fn._cache.close()
    # One budget is 1.5 s x 2 attempts; a budget per batch would be 6 s, a margin no loaded
    # machine's scheduling takes up.
    assert 3.0 <= elapsed < 5.0
    verdicts = [v for o in outputs if isinstance(o, list) for v in o]
    assert [v["identity"] for v in verdicts] == ["unverified", "unverified"]
    assert all(v["identity_evidence"].startswith(f"PTR of {v['client_ip']}: timeout") for v in verdicts)


def _yandex_log(ip: str, moment: datetime) -> str:
    stamp = moment.strftime("%d/%b/%Y:%H:%M:%S +0000")
    return f'{ip} - - [{stamp}] "GET /p HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"'


STREAM_CLAIMS = {"192.0.2.110": "verified", "192.0.2.120": "spoofed", "192.0.2.60": "spoofed"}


def _table_rows(folder: Path) -> list[dict]:
    return [json.loads(line) for part in sorted(folder.glob("*.jsonl")) for line in part.read_text().splitlines()]


@pytest.mark.slow
def test_streaming_live_dns_asks_each_address_once_and_a_batch_run_replays_its_record(dns_server, tmp_path):
    """The folder source on the embedded portable runner with `--dns live`: files of YandexBot
    claims arrive while it runs; each address is asked once, the genuine one verified and the
    look-alike PTR and the missing PTR spoofed. Its `--dns-record` then drives a batch run to the
    same identities without asking the server."""
    (tmp_path / "robots.jsonl").write_text(json.dumps(
        {"host": "example.com", "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": "User-agent: *\nAllow: /\n"}
    ) + "\n")
    (tmp_path / "ranges").mkdir()
    incoming, record, out = tmp_path / "incoming", tmp_path / "dns_answers", tmp_path / "out"
    incoming.mkdir()
    common = [
        "--log-format=combined", "--default-host=example.com", f"--robots={tmp_path / 'robots.jsonl'}",
        f"--ranges={tmp_path / 'ranges'}", "--window=1h", "--allowed-lateness=5m",
    ]
    argv = [
        "--streaming", "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK",
        f"--logs={incoming / '*.log'}", f"--out={out}", "--poll-interval=0.2s", "--watch-for=8s", "--robots-refresh=0",
        "--dns=live", f"--dns-server={dns_server.address}", f"--dns-record={record}", *common,
    ]
    pipeline = stream_graph(argv)
    mark = dns_server.mark()
    result = pipeline.run()
    for hour in (10, 11, 12):  # each file names every address several times
        time.sleep(0.5)
        moments = [AT.replace(hour=hour, minute=m) for m in range(0, 60, 10)]
        lines = [_yandex_log(ip, moment) for moment in moments for ip in STREAM_CLAIMS]
        (tmp_path / "staged").write_text("\n".join(lines) + "\n")
        (tmp_path / "staged").rename(incoming / f"{hour}.log")
    result.wait_until_finish()
    queries = dns_server.queries_since(mark)

    verdicts = _table_rows(out / "verdicts")
    assert len(verdicts) == 3 * 6 * len(STREAM_CLAIMS)
    assert {(v["client_ip"], v["identity"]) for v in verdicts} == set(STREAM_CLAIMS.items())
    ptr = sorted(name for kind, name in queries if kind == "PTR")
    assert ptr == sorted(map(_reverse, STREAM_CLAIMS))
    assert [(kind, name) for kind, name in queries if kind != "PTR"] == [("A", "spider-192-0-2-110.yandex.com")]

    recorded = read_snapshot(str(record))
    assert sorted(recorded) == sorted(STREAM_CLAIMS)
    assert _table_rows(record) == [answer_to_json(recorded[row["ip"]]) for row in _table_rows(record)]

    batch_out = tmp_path / "batch"
    mark = dns_server.mark()
    stream_graph([
        "--runner=FnApiRunner", f"--logs={incoming / '*.log'}", f"--out={batch_out}",
        f"--dns=snapshot:{record}", *common,
    ]).run().wait_until_finish()
    assert dns_server.queries_since(mark) == []

    def identities(rows: list[dict]) -> list[tuple]:
        return sorted((v["source"].rsplit("/", 1)[1], v["identity"], v["identity_evidence"]) for v in rows)

    assert identities(_table_rows(batch_out / "verdicts")) == identities(verdicts)


def test_streaming_dns_options(tmp_path):
    snapshot = tmp_path / "answers.jsonl"
    snapshot.write_text("")
    samples = REPO / "samples"
    argv = [
        "--streaming", f"--robots={samples / 'robots' / 'history.jsonl'}", f"--ranges={samples / 'ranges'}",
        "--logs=a/*", "--out=o",
    ]
    for flags, message in (
        (["--dns=off", "--dns-record=x"], "--dns-record needs --dns live"),
        ([f"--dns=snapshot:{snapshot}", "--dns-record=x"], "--dns-record in streaming records live answers"),
        (["--dns=live", "--dns-server=127.0.0.1:53", "--dns-ttl=soon"], "--dns-ttl: expected a number"),
        (["--dns=live", "--dns-server=127.0.0.1:53", "--dns-cache-size=0"], "--dns-cache-size: expected a number"),
    ):
        with pytest.raises(ValueError, match=message):
            stream_graph(argv + flags + ["--runner=FlinkRunner"])


def test_streaming_with_a_snapshot_answers_from_it_and_never_waits():
    genuine = DnsAnswer(
        "192.0.2.110", Lookup(("spider-192-0-2-110.yandex.com",)),
        (("spider-192-0-2-110.yandex.com", Lookup(("192.0.2.110",))),), "2026-11-02T09:00:00Z",
    )
    auditor = _auditor()
    fn = AuditWithDnsFn(auditor, DnsSettings(SnapshotResolver({genuine.ip: genuine}), None, 3600, 100))
    fn.setup()
    fn.start_bundle()
    yandex = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
    lines = [_log_line("192.0.2.110", yandex, 0), _log_line("192.0.2.111", yandex, 1)]
    outputs = list(fn.process(("log", 1, lines), {}))
    verdicts = [v for o in outputs if isinstance(o, list) for v in o]
    assert [(v["client_ip"], v["identity"]) for v in verdicts] == [("192.0.2.110", "verified"), ("192.0.2.111", "unverified")]
    assert verdicts[1]["identity_evidence"].startswith("PTR of 192.0.2.111: not-in-snapshot")
    assert not any(getattr(o, "tag", None) == records.DNS_ANSWERS_TABLE for o in outputs)  # a snapshot is not re-recorded
