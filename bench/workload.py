"""A benchmark workload for `crawl-audit run`: N log lines over H hosts with V robots.txt versions each.

    python bench/workload.py --lines 1000000 --hosts 200 --versions 4 --out /tmp/wl-1m
    python bench/workload.py --lines 4000000 --hosts 200 --versions 4 --out /tmp/wl-4m --shared ../shared --seed 7
    python bench/workload.py --lines 1000000 --versions 3 --format vhost_combined --crawler-share 0.3 \
        --compress none --out /tmp/wl-vhost-1m

Writes, under --out:

    logs/web-NN.log.gz          log lines, time-ordered, one file per front-end server (--files of them,
                                so a runner can read them in parallel); web-NN.log with --compress none;
                                with --write-files K the same lines in K files, server n's in file n mod K
                                (1: one access.log of every line in time order)
    robots/history.jsonl        V versions per host over the logs' time span, bodies in robots/bodies/
    ranges/<source>/<day>.json  IP-range snapshots of four `range_sources` of config/crawlers.yaml
    workload.json               the parameters and how many lines of each kind were written

Hosts, robots.txt bodies and paths come from the shared corpus (`corpus/robots/HOST`,
`corpus/links/HOST`) when it exists, else they are synthetic. About a fifth of the lines
(--crawler-share) are crawler traffic (Googlebot verified and spoofed, bingbot, GPTBot, ClaudeBot,
other registry crawlers, unknown bots, undeclared clients inside crawler ranges); the rest are
browsers, scripts, an uptime probe and a few unparseable lines. Lines are nginx `host_combined`
(`$host` then the combined format) or, with --format vhost_combined, Apache's
`%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"` (GoAccess's VCOMBINED). Crawlers
work through one host at a time, so their requests to a host come in bursts and some gaps fall
below a Crawl-delay. Lines are streamed to disk, so memory stays flat in N.
Standard library only; the same arguments give the same files, byte for byte.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from pathlib import Path
from urllib.parse import urlsplit

UTC = timezone.utc
SERVER_TZ = timezone(timedelta(hours=1))
START = datetime(2026, 11, 2, tzinfo=UTC)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DEFAULT_SHARED = Path(__file__).resolve().parents[2] / "shared"
MAX_PATHS_PER_HOST = 400
MAX_BLOCKED_PER_HOST = 40
FLUSH_EVERY = 4096
CRAWL_RUN = 40
LOG_FORMATS = ("host_combined", "vhost_combined")
COMPRESSIONS = ("gzip", "none")
VHOST_PORT = 443

# --------------------------------------------------------------------------- sites


@dataclass(frozen=True)
class Site:
    """One host: the pages people and crawlers fetch, paths its robots.txt closes, and its body."""

    host: str
    paths: tuple[str, ...]
    blocked: tuple[str, ...]
    body: bytes | None  # None: the host had no robots.txt (404) when the history starts


_DISALLOW = re.compile(rb"^[ \t]*disallow[ \t]*:[ \t]*(/[^\s#]*)", re.IGNORECASE | re.MULTILINE)


def blocked_paths(body: bytes) -> tuple[str, ...]:
    """Concrete paths that the body's Disallow patterns match: the requests that get disallowed."""
    found = []
    for match in _DISALLOW.finditer(body):
        pattern = match.group(1).decode("utf-8", "replace").rstrip("$").replace("*", "x")
        found.append(pattern + ("page" if pattern.endswith("/") else ""))
        if len(found) == MAX_BLOCKED_PER_HOST:
            break
    return tuple(dict.fromkeys(found))


def link_paths(host: str, text: str) -> tuple[str, ...]:
    """path?query of the host's own links, as a log line carries them."""
    paths = {"/": None}
    for url in text.split():
        parts = urlsplit(url)
        if parts.hostname != host or len(paths) >= MAX_PATHS_PER_HOST:
            continue
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if " " not in target and '"' not in target:
            paths[target] = None
    return tuple(paths)


def corpus_sites(shared: Path, count: int, rng: random.Random) -> list[Site]:
    """`count` corpus hosts that have both a robots.txt and links (cycled with a prefix if too few)."""
    robots_dir, links_dir = shared / "corpus" / "robots", shared / "corpus" / "links"
    hosts = sorted(p.name for p in links_dir.iterdir() if (robots_dir / p.name).is_file())
    chosen = rng.sample(hosts, min(count, len(hosts)))
    sites = []
    for index in range(count):
        base = chosen[index % len(chosen)]
        host = base if index < len(chosen) else f"m{index // len(chosen)}.{base}"
        body = (robots_dir / base).read_bytes()
        paths = link_paths(base, (links_dir / base).read_text("utf-8", "replace"))
        sites.append(Site(host, paths if len(paths) > 5 else synthetic_paths(rng), blocked_paths(body), body))
    return sites


def synthetic_paths(rng: random.Random) -> tuple[str, ...]:
    sections = ("blog", "docs", "products", "news", "help")
    pages = [f"/{rng.choice(sections)}/{word}-{n}/" for n, word in enumerate(("alpha", "beta", "gamma") * 40)]
    return ("/", "/about/", "/search?q=robots", "/category/lamps/?sort=price-asc") + tuple(pages)


def synthetic_body(rng: random.Random) -> bytes:
    closed = rng.sample(("/search", "/cart/", "/account/", "/tmp/", "/*?sort=", "/private/", "/drafts/"), 4)
    lines = ["User-agent: Googlebot", *(f"Disallow: {p}" for p in closed[:2]), "",
             "User-agent: bingbot", "Crawl-delay: 5", *(f"Disallow: {p}" for p in closed[:3]), "",
             "User-agent: *", *(f"Disallow: {p}" for p in closed), "", "Sitemap: /sitemap.xml"]
    return ("\n".join(lines) + "\n").encode()


def synthetic_sites(count: int, rng: random.Random) -> list[Site]:
    sites = []
    for index in range(count):
        body = synthetic_body(rng)
        sites.append(Site(f"site{index:04d}.example", synthetic_paths(rng), blocked_paths(body), body))
    return sites


def load_sites(shared: Path | None, count: int, rng: random.Random) -> list[Site]:
    """Corpus hosts when the shared corpus exists; a twentieth start with no robots.txt (404)."""
    corpus = shared is not None and (shared / "corpus" / "links").is_dir()
    sites = corpus_sites(shared, count, rng) if corpus else synthetic_sites(count, rng)
    return [Site(s.host, s.paths, s.blocked, None) if rng.random() < 0.05 else s for s in sites]


# --------------------------------------------------------------------------- robots.txt history


@dataclass(frozen=True)
class Version:
    host: str
    effective_from: datetime
    status: int
    body: bytes | None = None


def variant(body: bytes, other: bytes, rng: random.Random) -> bytes:
    """An edit a site owner makes: an AI opt-out, a closed section, dropped rules, or a new file."""
    choice = rng.randrange(4)
    if choice == 0:
        return body.rstrip(b"\n") + b"\n\nUser-agent: GPTBot\nDisallow: /\n\nUser-agent: ClaudeBot\nDisallow: /\n"
    if choice == 1:
        return body.rstrip(b"\n") + b"\n\nUser-agent: *\nDisallow: /private/\nDisallow: /*?sessionid=\n"
    if choice == 2:
        lines = body.splitlines(keepends=True)
        return b"".join(line for line in lines if not (line.lower().startswith(b"disallow") and rng.random() < 0.2))
    return other


def history(site: Site, count: int, span: timedelta, donors: Sequence[Site], rng: random.Random) -> list[Version]:
    """`count` versions: one in effect before the logs start, the others spread over the span.

    About one change in eight is an outage (503) that the next version ends.
    """
    first = START - timedelta(days=rng.randrange(1, 60), seconds=rng.randrange(86_400))
    versions = [Version(site.host, first, 404) if site.body is None else Version(site.host, first, 200, site.body)]
    seconds = sorted(rng.randrange(1, int(span.total_seconds())) for _ in range(count - 1))
    good = site.body if site.body is not None else synthetic_body(rng)
    for offset in seconds:
        at = START + timedelta(seconds=offset)
        if versions[-1].status == 200 and rng.random() < 0.125:
            versions.append(Version(site.host, at, 503))
            continue
        donor = rng.choice(donors).body or good
        good = variant(good, donor, rng)
        versions.append(Version(site.host, at, 200, good))
    return versions


def write_history(out: Path, versions: Sequence[Version]) -> None:
    """history.jsonl with one body file per distinct content, named by its digest."""
    bodies = out / "robots" / "bodies"
    bodies.mkdir(parents=True, exist_ok=True)
    with (out / "robots" / "history.jsonl").open("w", encoding="utf-8") as table:
        for version in versions:
            row: dict[str, object] = {"host": version.host, "status": version.status,
                                      "effective_from": version.effective_from.strftime("%Y-%m-%dT%H:%M:%SZ")}
            if version.body is not None:
                name = f"bodies/{hashlib.sha256(version.body).hexdigest()[:20]}.txt"
                if not (out / "robots" / name).exists():
                    (out / "robots" / name).write_bytes(version.body)
                row["body_file"] = name
            table.write(json.dumps(row) + "\n")


# --------------------------------------------------------------------------- crawler ranges


def google_prefixes() -> tuple[str, ...]:
    v4 = tuple(f"66.249.{third}.{fourth}/27" for third in range(64, 80) for fourth in range(0, 256, 32))
    return v4 + tuple(f"2001:4860:4801:{n:x}::/64" for n in range(0x10, 0x30))


BING_PREFIXES = ("157.55.39.0/24", "207.46.13.0/24", "40.77.167.0/24", "52.167.144.0/24")
OPENAI_PREFIXES = ("20.171.206.0/24", "52.230.152.0/24", "4.227.36.0/25")
OPENAI_ADDED = "74.7.175.128/25"
ANTHROPIC_PREFIXES = ("216.73.216.0/22",)


def snapshots(span: timedelta) -> dict[str, dict[str, tuple[str, ...]]]:
    """source -> snapshot day -> prefixes; OpenAI adds a prefix half-way through the logs."""
    before, middle = (START - timedelta(days=4)).date(), (START + span / 2).date()
    return {
        "google-common-crawlers": {before.isoformat(): google_prefixes()},
        "bingbot": {before.isoformat(): BING_PREFIXES},
        "openai-gptbot": {before.isoformat(): OPENAI_PREFIXES,
                          middle.isoformat(): OPENAI_PREFIXES + (OPENAI_ADDED,)},
        "anthropic": {before.isoformat(): ANTHROPIC_PREFIXES},
    }


def write_ranges(out: Path, span: timedelta) -> None:
    for source, days in snapshots(span).items():
        for day, prefixes in days.items():
            document = {"creationTime": f"{day}T06:00:00.000000",
                        "prefixes": [{"ipv6Prefix" if ":" in p else "ipv4Prefix": p} for p in prefixes]}
            path = out / "ranges" / source / f"{day}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- traffic

GOOGLEBOT_UAS = (
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/142.0.7444.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) "
    "Chrome/142.0.7444.175 Safari/537.36",
    "Googlebot-Image/1.0",
)
BINGBOT_UAS = (
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) "
    "Chrome/116.0.1938.76 Safari/537.36",
)
GPTBOT_UA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot"
CLAUDEBOT_UA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
# Registry crawlers whose ranges are not in the snapshots written here: identity comes out unverified.
OTHER_CRAWLERS = (
    ("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "5.255.231"),
    ("Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "116.179.32"),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 "
     "Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "17.241.219"),
    ("Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)", "52.70.240"),
    ("CCBot/2.0 (https://commoncrawl.org/faq/)", "18.97.14"),
    ("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", "57.141.0"),
    ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; "
     "+https://perplexity.ai/perplexitybot)", "44.221.181"),
    ("DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "20.191.45"),
)
UNKNOWN_BOTS = (
    "FooBot/1.0 (+http://foo.example/bot)",
    "Mozilla/5.0 (compatible; ExampleSpider/3.2; +https://spider.example/about)",
    "site-audit-crawler/0.9",
    "Mozilla/5.0 (compatible; PriceScraperBot/1.4)",
)
TOOLS = ("curl/8.5.0", "python-requests/2.32.3", "Wget/1.21.4", "Go-http-client/2.0")
ASSETS = ("/static/css/site.css", "/static/js/app.js", "/static/img/logo.svg", "/favicon.ico",
          "/static/fonts/inter-var.woff2")
REFERERS = ("-", "-", "-", "https://www.google.com/", "https://www.google.com/", "https://www.bing.com/",
            "https://duckduckgo.com/", "https://news.ycombinator.com/", "https://t.co/")
TLS_HANDSHAKE = r"\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03\x9A\x1F\xE2\x8C"


def browser_agents(rng: random.Random) -> tuple[str, ...]:
    """A few hundred distinct browser User-Agents, as real logs have."""
    platforms = ("Windows NT 10.0; Win64; x64", "Macintosh; Intel Mac OS X 10_15_7", "X11; Linux x86_64",
                 "Linux; Android 10; K")
    agents = [f"Mozilla/5.0 ({rng.choice(platforms)}) AppleWebKit/537.36 (KHTML, like Gecko) "
              f"Chrome/{major}.0.{build}.{patch} Safari/537.36"
              for major in range(118, 143) for build, patch in ((6099, 71), (6167, 85), (7444, 175))]
    agents += [f"Mozilla/5.0 (iPhone; CPU iPhone OS {major}_{minor} like Mac OS X) AppleWebKit/605.1.15 "
               f"(KHTML, like Gecko) Version/{major}.{minor} Mobile/15E148 Safari/604.1"
               for major in range(15, 19) for minor in range(0, 7)]
    agents += [f"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0" for v in range(115, 146)]
    return tuple(agents)


def visitor_address(rng: random.Random) -> str:
    """Documentation and shared address space: never inside a crawler range."""
    kind = rng.random()
    if kind < 0.35:
        return f"100.{rng.randrange(64, 128)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
    if kind < 0.85:
        return f"{rng.choice(('192.0.2', '198.51.100'))}.{rng.randrange(1, 255)}"
    return f"2001:db8:{rng.randrange(0x10, 0xfff):x}:{rng.randrange(1, 0xffff):x}::{rng.randrange(1, 0xffff):x}"


@dataclass(frozen=True)
class Session:
    """A visit in progress: one person on one site."""

    site: int
    ip: str
    agent: str
    referer: str


CRAWLER_KINDS = ("googlebot", "googlebot-spoofed", "bingbot", "gptbot", "claudebot", "other-crawler",
                 "unknown-bot", "undeclared")


def kind_shares(crawler_share: float | None) -> tuple[tuple[str, float], ...]:
    """Traffic.KINDS, or with the crawler kinds scaled to `crawler_share` of all lines and browsers
    taking the rest; None keeps KINDS exactly, so default workloads stay byte for byte the same."""
    if crawler_share is None:
        return Traffic.KINDS
    crawlers = sum(share for name, share in Traffic.KINDS if name in CRAWLER_KINDS)
    others = sum(share for name, share in Traffic.KINDS if name not in CRAWLER_KINDS and name != "browser")
    if not 0 < crawler_share <= 1 - others:
        raise ValueError(f"--crawler-share must be above 0 and at most {1 - others:.4f}")
    scaled = {name: share * crawler_share / crawlers if name in CRAWLER_KINDS else share
              for name, share in Traffic.KINDS}
    scaled["browser"] = 1 - crawler_share - others
    return tuple(scaled.items())


class Traffic:
    """Makes one log line of a chosen kind for a moment; `KINDS` says how often each kind occurs."""

    KINDS: tuple[tuple[str, float], ...] = (
        ("googlebot", 0.060), ("googlebot-spoofed", 0.010), ("bingbot", 0.030), ("gptbot", 0.025),
        ("claudebot", 0.020), ("other-crawler", 0.025), ("unknown-bot", 0.020), ("undeclared", 0.010),
        ("tool", 0.020), ("malformed", 0.0005), ("browser", 0.7795),
    )

    def __init__(self, sites: Sequence[Site], versions: Sequence[Sequence[Version]], span: timedelta,
                 rng: random.Random, log_format: str = "host_combined"):
        self.rng = rng
        # vhost_combined's `%v:%p`; host_combined's `$host` carries no port.
        self.port = f":{VHOST_PORT}" if log_format == "vhost_combined" else ""
        self.sites = sites
        self.hosts_cum = list(accumulate(1 / (rank + 1) ** 0.8 for rank in range(len(sites))))
        self.version_times = [[v.effective_from for v in host] for host in versions]
        self.versions = versions
        self.browsers = browser_agents(rng)
        self.sessions = [self.new_session() for _ in range(2000)]
        self.gptbot_added_from = START + span / 2
        self.focus: dict[str, int] = {}  # User-Agent -> the host that crawler is working through

    def makers(self) -> dict[str, Callable[[datetime, str], str]]:
        return {
            "googlebot": self.googlebot, "googlebot-spoofed": self.googlebot_spoofed, "bingbot": self.bingbot,
            "gptbot": self.gptbot, "claudebot": self.claudebot, "other-crawler": self.other_crawler,
            "unknown-bot": self.unknown_bot, "undeclared": self.undeclared, "tool": self.tool,
            "malformed": self.malformed, "browser": self.browser,
        }

    # ----------------------------------------------------------------- helpers

    def host_index(self) -> int:
        return bisect_right(self.hosts_cum, self.rng.random() * self.hosts_cum[-1])

    def robots_status(self, host: int, ts: datetime) -> int:
        index = bisect_right(self.version_times[host], ts) - 1
        return 200 if index < 0 else self.versions[host][index].status

    def crawl(self, ts: datetime, stamp: str, ip: str, agent: str, misbehaves: float = 0.02) -> str:
        """A crawler request: robots.txt now and then, mostly linked pages, sometimes a closed path.

        A crawler works through one host for a while (about CRAWL_RUN requests) before moving on,
        so its requests to a host come in bursts, as crawl-delay checks see them in real logs.
        """
        host = self.focus.get(agent)
        if host is None or self.rng.random() < 1 / CRAWL_RUN:
            host = self.focus[agent] = self.host_index()
        site, roll = self.sites[host], self.rng.random()
        if roll < 0.02:
            path, status = "/robots.txt", self.robots_status(host, ts)
        else:
            closed = bool(site.blocked) and roll < 0.02 + misbehaves
            path = self.rng.choice(site.blocked if closed else site.paths)
            status = 200 if roll < 0.92 else self.rng.choice((301, 304, 404))
        return line(site.host + self.port, ip, stamp, "GET", path, status, self.rng.randrange(300, 90_000), "-",
                    agent)

    def new_session(self) -> Session:
        rng = self.rng
        return Session(self.host_index(), visitor_address(rng), rng.choice(self.browsers), rng.choice(REFERERS))

    # ----------------------------------------------------------------- kinds

    def googlebot(self, ts: datetime, stamp: str) -> str:
        rng = self.rng
        ip = (f"2001:4860:4801:{rng.randrange(0x10, 0x30):x}::{rng.randrange(1, 0xfff):x}" if rng.random() < 0.05
              else f"66.249.{rng.randrange(64, 80)}.{rng.randrange(1, 255)}")
        return self.crawl(ts, stamp, ip, rng.choice(GOOGLEBOT_UAS))

    def googlebot_spoofed(self, ts: datetime, stamp: str) -> str:
        ip = self.rng.choice(("34.116.72.19", "34.116.72.41", "203.0.113.45", "203.0.113.88"))
        return self.crawl(ts, stamp, ip, GOOGLEBOT_UAS[self.rng.randrange(2)], misbehaves=0.25)

    def bingbot(self, ts: datetime, stamp: str) -> str:
        prefix = self.rng.choice(BING_PREFIXES).rsplit(".", 1)[0]
        return self.crawl(ts, stamp, f"{prefix}.{self.rng.randrange(1, 255)}", self.rng.choice(BINGBOT_UAS))

    def gptbot(self, ts: datetime, stamp: str) -> str:
        rng = self.rng
        if ts >= self.gptbot_added_from and rng.random() < 0.3:
            ip = f"74.7.175.{rng.randrange(129, 255)}"
        else:
            ip = f"{rng.choice(('20.171.206', '52.230.152'))}.{rng.randrange(1, 255)}"
        return self.crawl(ts, stamp, ip, GPTBOT_UA, misbehaves=0.05)

    def claudebot(self, ts: datetime, stamp: str) -> str:
        ip = f"216.73.{self.rng.randrange(216, 220)}.{self.rng.randrange(1, 255)}"
        return self.crawl(ts, stamp, ip, CLAUDEBOT_UA)

    def other_crawler(self, ts: datetime, stamp: str) -> str:
        agent, prefix = self.rng.choice(OTHER_CRAWLERS)
        return self.crawl(ts, stamp, f"{prefix}.{self.rng.randrange(1, 255)}", agent)

    def unknown_bot(self, ts: datetime, stamp: str) -> str:
        ip = f"{self.rng.choice(('198.51.100', '203.0.113'))}.{self.rng.randrange(200, 255)}"
        return self.crawl(ts, stamp, ip, self.rng.choice(UNKNOWN_BOTS), misbehaves=0.2)

    def undeclared(self, ts: datetime, stamp: str) -> str:
        prefix = self.rng.choice(("52.230.152", "216.73.217", "40.77.167"))
        return self.crawl(ts, stamp, f"{prefix}.{self.rng.randrange(1, 255)}", self.browsers[0])

    def tool(self, ts: datetime, stamp: str) -> str:
        rng = self.rng
        site = self.sites[self.host_index()]
        if rng.random() < 0.4:
            return line(site.host + self.port, "192.0.2.10", stamp, "HEAD", "/", 200, 0, "-",
                        "Blackbox-Exporter/0.25.0")
        return line(site.host + self.port, visitor_address(rng), stamp, "GET", rng.choice(site.paths), 200,
                    rng.randrange(300, 90_000), "-", rng.choice(TOOLS))

    def malformed(self, ts: datetime, stamp: str) -> str:
        host = self.sites[self.host_index()].host
        vhost = host + self.port
        return self.rng.choice((
            f'{vhost} 203.0.113.9 - - [{stamp}] "{TLS_HANDSHAKE}" 400 157 "-" "-"',
            f'{vhost} 198.51.100.77 - - [{stamp}] "-" 400 0 "-" "-"',
            f'{vhost} 203.0.113.201 - - [{stamp}] "CONNECT {host}:443 HTTP/1.1" 400 157 "-" "-"',
            f'{vhost} 192.0.2.131 - - [{stamp}] "GET / HTTP/2.0" 200 1',
        ))

    def browser(self, ts: datetime, stamp: str) -> str:
        """A request of one of the visits in progress; about one in six starts a new visit."""
        rng = self.rng
        slot = rng.randrange(len(self.sessions))
        if rng.random() < 1 / 6:
            self.sessions[slot] = self.new_session()
        session = self.sessions[slot]
        site = self.sites[session.site]
        if rng.random() < 0.35:
            path, status = rng.choice(ASSETS), rng.choice((200, 200, 304))
        else:
            path, status = rng.choice(site.paths), 200 if rng.random() < 0.97 else 404
        return line(site.host + self.port, session.ip, stamp, "GET", path, status, rng.randrange(200, 250_000),
                    session.referer, session.agent)


def line(vhost: str, ip: str, stamp: str, method: str, path: str, status: int, size: int, referer: str,
         agent: str) -> str:
    """The virtual host field (`host` or `host:port`), then the combined format."""
    return f'{vhost} {ip} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {size} "{referer}" "{agent}"'


def local_stamp(ts: datetime) -> str:
    """nginx $time_local on a +0100 server clock, English month names whatever the locale."""
    local = ts.astimezone(SERVER_TZ)
    return f"{local.day:02d}/{MONTHS[local.month - 1]}/{local.year}:{local:%H:%M:%S} +0100"


# --------------------------------------------------------------------------- logs


def moments(count: int, span: timedelta) -> Iterator[tuple[datetime, str]]:
    """`count` evenly spread request times with their log stamps (formatted once per second)."""
    seconds = int(span.total_seconds())
    last, ts, stamp = -1, START, ""
    for index in range(count):
        second = index * seconds // count
        if second != last:
            last, ts = second, START + timedelta(seconds=second)
            stamp = local_stamp(ts)
        yield ts, stamp


def log_writer(folder: Path, number: int, compress: str) -> BinaryIO:
    if compress == "none":
        return (folder / f"web-{number:02d}.log").open("wb")
    return gzip.GzipFile(folder / f"web-{number:02d}.log.gz", "wb", compresslevel=6, mtime=0)


def write_logs(out: Path, traffic: Traffic, count: int, files: int, span: timedelta,
               kinds: Sequence[tuple[str, float]] = Traffic.KINDS, compress: str = "gzip",
               log_files: int | None = None) -> Counter:
    """Stream `count` lines over `files` servers, as a load balancer spreads requests, server n's
    into file n mod `log_files` (default one file per server); kind counts."""
    folder = out / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    names = [name for name, _ in kinds]
    cumulative = list(accumulate(share for _, share in kinds))
    makers = [traffic.makers()[name] for name in names]
    log_files = log_files or files
    writers = [log_writer(folder, n, compress) for n in range(log_files)]
    buffers: list[list[str]] = [[] for _ in range(log_files)]
    counts: Counter = Counter()
    rng = traffic.rng
    try:
        for ts, stamp in moments(count, span):
            kind = min(bisect_right(cumulative, rng.random() * cumulative[-1]), len(names) - 1)
            counts[names[kind]] += 1
            # Drawn over the servers whatever the files, so that every --write-files gets the same lines.
            target = rng.randrange(files) % log_files
            buffers[target].append(makers[kind](ts, stamp))
            if len(buffers[target]) == FLUSH_EVERY:
                flush(writers[target], buffers[target])
        for writer, buffer in zip(writers, buffers):
            flush(writer, buffer)
    finally:
        for writer in writers:
            writer.close()
    return counts


def flush(writer: BinaryIO, buffer: list[str]) -> None:
    if buffer:
        writer.write(("\n".join(buffer) + "\n").encode("utf-8"))
        buffer.clear()


# --------------------------------------------------------------------------- main


@dataclass(frozen=True)
class Params:
    lines: int
    hosts: int
    versions: int
    seed: int
    days: int
    files: int
    corpus: bool
    log_format: str = "host_combined"
    crawler_share: float | None = None  # None: Traffic.KINDS as they are (about a fifth)
    compress: str = "gzip"
    log_files: int | None = None  # None: one per server (`files`)

    def manifest(self) -> dict:
        return dict(self.__dict__)


def generate(out: Path, params: Params, shared: Path | None) -> dict:
    """Write the whole workload under `out`; returns the manifest (also written as workload.json)."""
    started = time.perf_counter()
    rng = random.Random(params.seed)
    span = timedelta(days=params.days)
    sites = load_sites(shared if params.corpus else None, params.hosts, rng)
    histories = [history(site, params.versions, span, sites, rng) for site in sites]
    write_history(out, [version for host in histories for version in host])
    write_ranges(out, span)
    traffic = Traffic(sites, histories, span, rng, params.log_format)
    counts = write_logs(out, traffic, params.lines, params.files, span, kind_shares(params.crawler_share),
                        params.compress, params.log_files)
    manifest = {**params.manifest(), "kinds": dict(sorted(counts.items())),
                "seconds": round(time.perf_counter() - started, 1)}
    (out / "workload.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def params_from(args: argparse.Namespace) -> Params:
    shared = Path(args.shared) if args.shared else None
    corpus = shared is not None and (shared / "corpus" / "links").is_dir()
    return Params(args.lines, args.hosts, args.versions, args.seed, args.days, args.files, corpus,
                  args.log_format, args.crawler_share, args.compress, args.write_files)


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, required=True, help="log lines to write")
    parser.add_argument("--hosts", type=int, default=200, help="distinct sites in the logs")
    parser.add_argument("--versions", type=int, default=4, help="robots.txt versions per host")
    parser.add_argument("--out", required=True, help="folder to write (created)")
    parser.add_argument("--shared", default=str(DEFAULT_SHARED), help="shared folder with corpus/ ('' for none)")
    parser.add_argument("--seed", type=int, default=20261102)
    parser.add_argument("--days", type=int, default=2, help="time span of the logs")
    parser.add_argument("--files", type=int, default=8, help="front-end servers, one log file each")
    parser.add_argument("--write-files", type=int, metavar="K",
                        help="write the servers' lines into K files instead (1: one access.log), the same lines")
    parser.add_argument("--format", dest="log_format", choices=LOG_FORMATS, default="host_combined",
                        help="nginx host_combined, or Apache vhost_combined (GoAccess: VCOMBINED)")
    parser.add_argument("--crawler-share", type=float, default=None,
                        help="share of crawler lines, e.g. 0.3 (default: about a fifth, as always)")
    parser.add_argument("--compress", choices=COMPRESSIONS, default="gzip", help="gzip each log file, or not")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    if min(args.lines, args.hosts, args.versions, args.days, args.files, args.write_files or 1) < 1:
        raise SystemExit("workload.py: --lines, --hosts, --versions, --days, --files and --write-files must be positive")
    try:
        kind_shares(args.crawler_share)
    except ValueError as error:
        raise SystemExit(f"workload.py: {error}") from None
    manifest = generate(Path(args.out), params_from(args), Path(args.shared) if args.shared else None)
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
