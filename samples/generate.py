"""Write the bundled crawl-audit sample: access logs, a robots.txt history and IP-range snapshots.

Run from anywhere with any Python 3.10+ (standard library only):

    python samples/generate.py

Everything is drawn from one seeded random generator and written with fixed gzip headers, so a
rerun reproduces every file byte for byte. samples/README.md tells the story the data encodes.

Addresses: crawlers use prefixes listed in the range snapshots written here (documentation-sized
copies, not an operator's real file); visitors use documentation and shared address space
(192.0.2.0/24, 198.51.100.0/24, 100.64.0.0/10, 2001:db8::/32); the spoofers use 203.0.113.0/24 and
a cloud address outside every crawler range.
"""
from __future__ import annotations

import gzip
import json
import random
import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 20261102
OUT = Path(__file__).resolve().parent
UTC = timezone.utc
SERVER_TZ = timezone(timedelta(hours=1))  # the web servers log in Central European (winter) time
START = datetime(2026, 11, 2, tzinfo=UTC)
END = datetime(2026, 11, 5, tzinfo=UTC)
DAYS = 3

WWW = "www.example.com"
SHOP = "shop.example.net"

# --------------------------------------------------------------------------- hosts and paths

BLOG_SLUGS = (
    "beam-windowing-explained", "robots-txt-pitfalls", "migrating-to-http3", "log-retention-policy",
    "caching-static-assets", "a-year-of-ipv6", "choosing-a-cdn", "incident-review-october",
    "faster-builds-with-remote-cache", "reading-access-logs", "tls-certificates-automation",
    "sitemaps-that-scale", "crawl-budget-myths", "structured-data-primer", "rate-limiting-at-the-edge",
    "monitoring-with-blackbox-probes", "dns-for-web-developers", "image-formats-2026",
    "accessibility-checklist", "shipping-on-fridays",
)
DOC_PAGES = tuple(
    f"/docs/{section}/{page}/"
    for section in ("getting-started", "configuration", "deployment", "api", "faq")
    for page in ("overview", "install", "examples", "reference", "troubleshooting")
)
PRIVATE_PAGES = ("/private/", "/private/reports/2026-q3/", "/private/roadmap/", "/private/staff-directory/")
DRAFT_PAGES = ("/drafts/pricing-change/", "/drafts/launch-announcement/")
PRODUCTS = tuple(
    f"{material}-{thing}"
    for material in ("oak", "walnut", "linen", "brass", "wool", "rattan", "ceramic", "steel")
    for thing in ("desk-lamp", "side-table", "lounge-chair", "rug", "floor-lamp", "stool", "shelf", "vase", "bench", "mirror")
)
CATEGORIES = ("lamps", "chairs", "tables", "textiles", "rugs", "storage", "decor", "outdoor")
SEARCH_TERMS = ("beam", "robots", "ipv6", "cdn", "sitemap", "oak lamp", "linen rug", "walnut desk", "brass", "stool")

WWW_ASSETS = ("/static/css/site.3f9a2c.css", "/static/js/site.7d41e0.js", "/static/img/logo.svg",
              "/static/fonts/inter-var.woff2", "/favicon.ico")
SHOP_ASSETS = ("/static/css/shop.a81c44.css", "/static/js/shop.0be9d2.js", "/static/img/logo.svg", "/favicon.ico")
DEAD_LINKS = ("/blog/2019/05/hello-world/", "/apple-touch-icon.png", "/apple-touch-icon-precomposed.png",
              "/docs/v1/install/", "/wp-content/uploads/2021/03/banner.jpg")
PROBE_PATHS = ("/.env", "/.git/config", "/wp-login.php", "/wp-admin/", "/xmlrpc.php", "/phpinfo.php",
               "/config.json", "/backup.zip", "/server-status", "/.aws/credentials")


def blog_posts() -> tuple[str, ...]:
    months = ("2026/10", "2026/09", "2026/08", "2026/07")
    return tuple(f"/blog/{months[i % len(months)]}/{slug}/" for i, slug in enumerate(BLOG_SLUGS))


def www_pages() -> tuple[str, ...]:
    return ("/", "/about/", "/contact/", "/blog/", "/blog/page/2/", "/blog/page/3/", "/docs/") + blog_posts() + DOC_PAGES


def shop_pages() -> tuple[str, ...]:
    categories = tuple(f"/category/{c}/" for c in CATEGORIES)
    paged = tuple(f"/category/{c}/?page=2" for c in CATEGORIES)
    return ("/",) + categories + paged + tuple(f"/products/{p}" for p in PRODUCTS)


def search_path(rng: random.Random) -> str:
    return "/search?q=" + rng.choice(SEARCH_TERMS).replace(" ", "+")


def response_size(path: str, rng: random.Random) -> int:
    """A stable size per path with a little jitter, as dynamic pages vary from render to render."""
    base = zlib.crc32(path.encode())
    if path.endswith((".css", ".woff2")):
        return 18_000 + base % 40_000
    if path.endswith((".js",)):
        return 60_000 + base % 90_000
    if path.endswith((".jpg", ".webp", ".png")):
        return 40_000 + base % 260_000
    if path.endswith((".svg", ".ico")):
        return 1_200 + base % 4_000
    return 6_000 + base % 30_000 + rng.randrange(0, 400)


# --------------------------------------------------------------------------- robots.txt history


@dataclass(frozen=True)
class Group:
    agents: tuple[str, ...]
    disallow: tuple[str, ...]
    allow: tuple[str, ...] = ()
    crawl_delay: int | None = None


@dataclass(frozen=True)
class Robots:
    """One robots.txt as served: the rules as data (the crawlers below read them) and the exact bytes."""

    groups: tuple[Group, ...]
    body: bytes

    def group_for(self, token: str) -> Group | None:
        named = [g for g in self.groups if token in (a.lower() for a in g.agents)]
        catch_all = [g for g in self.groups if "*" in g.agents]
        return (named or catch_all or [None])[0]

    def blocks(self, token: str, path: str) -> bool:
        """Whether a well-behaved crawler skips `path`: the longest matching pattern decides."""
        group = self.group_for(token)
        if group is None:
            return False

        def longest(patterns: Sequence[str]) -> int:
            return max((len(p) for p in patterns if _glob(p).match(path)), default=-1)
        return longest(group.disallow) > longest(group.allow)

    def crawl_delay(self, token: str) -> int | None:
        group = self.group_for(token)
        return None if group is None else group.crawl_delay


@dataclass(frozen=True)
class Version:
    """A row of the robots history: what the host served from `effective_from` on."""

    host: str
    effective_from: datetime
    status: int
    robots: Robots | None = None
    body_file: str | None = None


def _glob(pattern: str) -> re.Pattern[str]:
    """A robots.txt pattern as a regex: `*` is any run; `%7E` (the only escape used here) is `~`."""
    return re.compile(re.escape(pattern.replace("%7E", "~")).replace(r"\*", ".*"))


def render_robots(comments: Sequence[str], groups: Sequence[Group], sitemap: str, *, bom: bool = False,
                  newline: str = "\n") -> Robots:
    lines = [f"# {c}" for c in comments] + [""]
    for group in groups:
        lines += [f"User-agent: {agent}" for agent in group.agents]
        if group.crawl_delay is not None:
            lines.append(f"Crawl-delay: {group.crawl_delay}")
        lines += [f"Allow: {p}" for p in group.allow] + [f"Disallow: {p}" for p in group.disallow] + [""]
    lines.append(f"Sitemap: {sitemap}")
    text = newline.join(lines) + newline
    return Robots(tuple(groups), (b"\xef\xbb\xbf" if bom else b"") + text.encode())


def www_robots(changed: bool) -> Robots:
    """www.example.com before and after the 2026-11-03 edit (done on a Windows laptop: BOM, CRLF)."""
    private = ("/private/",) if changed else ()
    groups = (
        Group(("Googlebot",), ("/search", "/*?sessionid=", "/%7Eadmin/") + private, allow=("/search/about",)),
        Group(("bingbot",), ("/search", "/%7Eadmin/") + private, crawl_delay=10),
        Group(("GPTBot",), ("/",) if changed else ("/drafts/", "/%7Eadmin/")),
        Group(("ClaudeBot",), ("/search", "/drafts/", "/%7Eadmin/") + private, crawl_delay=5),
        Group(("*",), ("/search", "/tmp/", "/drafts/", "/*?sessionid=", "/%7Eadmin/") + private),
    )
    comments = ["robots.txt for https://www.example.com/", "Questions: webmaster@example.com"]
    if changed:
        comments.append("2026-11-03: keep crawlers out of /private/; opt out of GPTBot")
        return render_robots(comments, groups, "https://www.example.com/sitemap.xml", bom=True, newline="\r\n")
    return render_robots(comments, groups, "https://www.example.com/sitemap.xml")


def shop_robots() -> Robots:
    closed = ("/cart/", "/checkout/", "/account/")
    groups = (
        Group(("Googlebot",), closed + ("/*?sort=",)),
        Group(("bingbot",), closed + ("/*?sort=",), crawl_delay=5),
        Group(("GPTBot",), ("/",)),
        Group(("ClaudeBot",), closed, crawl_delay=2),
        Group(("*",), closed + ("/*?sort=", "/search")),
    )
    return render_robots(["shop.example.net"], groups, "https://shop.example.net/sitemap.xml")


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


SHOP_OUTAGE = (at(3, 21), at(4, 1))  # the whole shop answered 503, robots.txt included


def robots_history() -> tuple[Version, ...]:
    """Rows of samples/robots/history.jsonl, in time order per host.

    The shop's history starts at 04:00 on 2026-11-02, when robots.txt monitoring began: its
    requests before that have no known version. It served 404 (no robots.txt) until 09:00.
    """
    www_v1, www_v2, shop_v1 = www_robots(False), www_robots(True), shop_robots()
    return (
        Version(WWW, datetime(2026, 10, 20, 8, 0, tzinfo=UTC), 200, www_v1, "bodies/www.example.com-2026-10-20.txt"),
        Version(WWW, at(3, 10), 200, www_v2, "bodies/www.example.com-2026-11-03.txt"),
        Version(SHOP, at(2, 4), 404),
        Version(SHOP, at(2, 9), 200, shop_v1, "bodies/shop.example.net-2026-11-02.txt"),
        Version(SHOP, SHOP_OUTAGE[0], 503),
        Version(SHOP, SHOP_OUTAGE[1], 200, shop_v1, "bodies/shop.example.net-2026-11-02.txt"),
    )


def served(history: Sequence[Version], host: str, ts: datetime) -> Version:
    """What the server answered for /robots.txt at `ts` (before monitoring began: its first state)."""
    rows = [v for v in history if v.host == host]
    current = rows[0]
    for row in rows:
        if row.effective_from <= ts:
            current = row
    return current


# --------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class Request:
    ts: datetime
    host: str
    ip: str
    method: str
    path: str
    status: int
    size: int
    referer: str
    user_agent: str
    protocol: str = "HTTP/1.1"


def local_time(ts: datetime) -> str:
    """nginx $time_local on the servers' clock; English month names whatever the locale."""
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    local = ts.astimezone(SERVER_TZ)
    return f"{local.day:02d}/{months[local.month - 1]}/{local.year}:{local:%H:%M:%S} {local:%z}"


def format_line(r: Request) -> str:
    """nginx `host_combined`: $host, then the combined format."""
    return (f'{r.host} {r.ip} - - [{local_time(r.ts)}] "{r.method} {r.path} {r.protocol}" {r.status} {r.size} '
            f'"{r.referer}" "{r.user_agent}"')


def page_status(host: str, path: str, ts: datetime) -> int:
    """The status the site answers for a path (robots.txt is answered by `served`)."""
    if host == SHOP and SHOP_OUTAGE[0] <= ts < SHOP_OUTAGE[1]:
        return 503
    if path in DEAD_LINKS or path in PROBE_PATHS:
        return 404
    if path.startswith(("/~admin/", "/%7eadmin/", "/%7Eadmin/")):
        return 403
    if path.startswith("/tmp/"):
        return 404
    return 200


# --------------------------------------------------------------------------- crawler traffic

GOOGLEBOT_SMARTPHONE = (
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/142.0.7444.175 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)
GOOGLEBOT_DESKTOP = (
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) "
    "Chrome/142.0.7444.175 Safari/537.36"
)
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
BINGBOT_MOBILE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 7_0 like Mac OS X) AppleWebKit/537.51.1 (KHTML, like Gecko) Version/7.0 "
    "Mobile/11A465 Safari/9537.53 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
)
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot"
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
FOOBOT = "FooBot/1.0 (+http://foo.example/bot)"
CHROME_WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
)

# Range snapshots: source name (a key of range_sources in config/crawlers.yaml) -> day -> prefixes.
RANGES: dict[str, dict[str, tuple[str, ...]]] = {
    "google-common-crawlers": {
        "2026-10-28": ("66.249.64.0/27", "66.249.64.32/27", "66.249.66.0/27", "66.249.66.32/27",
                       "66.249.66.64/27", "66.249.68.0/27", "66.249.79.96/27", "192.178.5.0/27",
                       "2001:4860:4801:10::/64", "2001:4860:4801:12::/64"),
    },
    "bingbot": {
        "2026-10-30": ("157.55.39.0/24", "207.46.13.0/24", "40.77.167.0/24", "52.167.144.0/24"),
    },
    "openai-gptbot": {
        "2026-10-25": ("20.171.206.0/24", "52.230.152.0/24", "4.227.36.0/25"),
        "2026-11-03": ("20.171.206.0/24", "52.230.152.0/24", "4.227.36.0/25", "74.7.175.128/25"),
    },
    "anthropic": {
        "2026-10-29": ("216.73.216.0/22",),
    },
}
CREATION_TIMES = {"google-common-crawlers": "2026-10-28T15:46:03.000000", "bingbot": "2026-10-30T06:00:00.000000",
                  "anthropic": "2026-10-29T12:00:00Z"}

GOOGLEBOT_V4 = tuple(f"66.249.66.{n}" for n in range(1, 31)) + tuple(f"66.249.66.{n}" for n in range(33, 63)) \
    + tuple(f"66.249.64.{n}" for n in range(2, 20)) + tuple(f"66.249.68.{n}" for n in range(3, 12))
GOOGLEBOT_V6 = tuple(f"2001:4860:4801:10::{n:x}" for n in (0x1a, 0x2b, 0x3c, 0x47))
BINGBOT_IPS = tuple(f"157.55.39.{n}" for n in range(10, 90)) + tuple(f"207.46.13.{n}" for n in range(20, 60)) \
    + tuple(f"40.77.167.{n}" for n in range(30, 50))
GPTBOT_IPS = tuple(f"20.171.206.{n}" for n in range(40, 70)) + tuple(f"4.227.36.{n}" for n in range(10, 30))
GPTBOT_NEW_IPS = tuple(f"74.7.175.{n}" for n in range(140, 150))  # only in the 2026-11-03 snapshot
CLAUDEBOT_IPS = tuple(f"216.73.216.{n}" for n in range(1, 120)) + tuple(f"216.73.217.{n}" for n in range(5, 25))


@dataclass(frozen=True)
class Crawler:
    """A crawler's behaviour on one host for the simulation.

    `honours` crawlers fetch robots.txt every `robots_every`, skip what their copy disallows,
    stop crawling while robots.txt answers 5xx (retrying it every 30-60 minutes) and, when
    `keeps_delay`, space requests by the Crawl-delay of their copy, except for `slip` of them.
    """

    token: str  # its robots.txt token; "" for a client that names no crawler
    user_agents: tuple[tuple[str, int], ...]
    host: str
    mean_gap: float  # seconds between page requests
    pool: tuple[tuple[str, int], ...]
    addresses: Callable[[random.Random, datetime], str]
    window: tuple[datetime, datetime] = (START, END)
    honours: bool = True
    keeps_delay: bool = False
    slip: float = 0.0
    robots_every: timedelta | None = timedelta(hours=6)


def weighted(rng: random.Random, items: Sequence[tuple[str, int]]) -> str:
    return rng.choices([i for i, _ in items], weights=[w for _, w in items])[0]


def pool(*parts: tuple[Sequence[str], int]) -> tuple[tuple[str, int], ...]:
    return tuple((path, weight) for paths, weight in parts for path in paths)


def from_addresses(*tiers: tuple[datetime, Sequence[str]]) -> Callable[[random.Random, datetime], str]:
    """An address chooser: each tier's addresses are in use from its start time on."""
    def choose(rng: random.Random, ts: datetime) -> str:
        return rng.choice([ip for since, ips in tiers if ts >= since for ip in ips])
    return choose


def crawlers() -> tuple[Crawler, ...]:
    posts, search = blog_posts(), ("/search/about",)
    googlebot_ua = ((GOOGLEBOT_SMARTPHONE, 8), (GOOGLEBOT_DESKTOP, 2))
    google_ips = from_addresses((START, GOOGLEBOT_V4 * 12 + GOOGLEBOT_V6))
    www_pool = pool((www_pages(), 6), (posts, 6), (PRIVATE_PAGES, 6), (search, 2), (("/sitemap.xml", "/feed.xml"), 10))
    shop_pool = pool((shop_pages(), 3), ((f"/media/products/{p}-800.jpg" for p in PRODUCTS), 1),
                     (("/sitemap.xml",), 20), (tuple(f"/category/{c}/?sort=price-asc" for c in CATEGORIES), 2),
                     (("/cart/", "/account/login"), 2))
    ai_pool = pool((posts, 5), (DOC_PAGES, 3), (DRAFT_PAGES, 4), (PRIVATE_PAGES, 2), (("/", "/blog/", "/about/"), 2))
    foobot_pool = pool((posts, 3), (("/~admin/", "/~admin/login.php", "/%7eadmin/", "/%7eadmin/config.php"), 4),
                       (PRIVATE_PAGES, 2), (("/tmp/export.csv", "/search?q=robots", "/blog/?sessionid=8f3a2c"), 2))
    probe_pool = pool((PROBE_PATHS, 4), (PRIVATE_PAGES, 2), (("/~admin/", "/%7eadmin/", "/search?q=admin"), 2),
                      (posts, 1))
    scraper_pool = pool((tuple(f"/products/{p}" for p in PRODUCTS), 4),
                        (tuple(f"/category/{c}/?sort={s}" for c in CATEGORIES for s in ("price-asc", "newest")), 2),
                        (("/cart/", "/search?q=oak"), 1))
    return (
        Crawler("googlebot", googlebot_ua, WWW, 210, www_pool, google_ips,
                robots_every=timedelta(hours=5)),
        Crawler("googlebot", googlebot_ua, SHOP, 420, shop_pool, google_ips,
                robots_every=timedelta(hours=5)),
        Crawler("bingbot", ((BINGBOT, 9), (BINGBOT_MOBILE, 1)), WWW, 600, www_pool,
                from_addresses((START, BINGBOT_IPS)), keeps_delay=True, slip=0.07, robots_every=timedelta(hours=8)),
        Crawler("bingbot", ((BINGBOT, 9), (BINGBOT_MOBILE, 1)), SHOP, 700, shop_pool,
                from_addresses((START, BINGBOT_IPS)), keeps_delay=True, slip=0.05, robots_every=timedelta(hours=8)),
        Crawler("gptbot", ((GPTBOT, 1),), WWW, 420, ai_pool,
                from_addresses((START, GPTBOT_IPS), (at(3, 0), GPTBOT_NEW_IPS * 3)), robots_every=timedelta(hours=12)),
        Crawler("gptbot", ((GPTBOT, 1),), SHOP, 600, shop_pool,
                from_addresses((START, GPTBOT_IPS)), robots_every=timedelta(hours=12)),
        Crawler("claudebot", ((CLAUDEBOT, 1),), WWW, 600, ai_pool,
                from_addresses((START, CLAUDEBOT_IPS)), keeps_delay=True, robots_every=timedelta(hours=24)),
        Crawler("claudebot", ((CLAUDEBOT, 1),), SHOP, 900, shop_pool,
                from_addresses((START, CLAUDEBOT_IPS)), keeps_delay=True, robots_every=timedelta(hours=24)),
        # an unknown bot that ignores robots.txt
        Crawler("foobot", ((FOOBOT, 1),), WWW, 1500, foobot_pool,
                from_addresses((START, ("198.51.100.250",))), window=(at(2, 18), at(4, 20)), honours=False,
                robots_every=timedelta(days=2)),
        # spoofed Googlebot: a product scraper on cloud addresses
        Crawler("googlebot", ((GOOGLEBOT_SMARTPHONE, 1),), SHOP, 2.5,
                scraper_pool, from_addresses((START, ("34.116.72.19", "34.116.72.41"))),
                window=(at(3, 12), at(3, 12, 7)), honours=False, robots_every=None),
        # spoofed Googlebot: a vulnerability probe
        Crawler("googlebot", ((GOOGLEBOT_DESKTOP, 1),), WWW, 18,
                probe_pool, from_addresses((START, ("203.0.113.45", "203.0.113.88"))),
                window=(at(4, 14, 10), at(4, 14, 40)), honours=False, robots_every=None),
        # undeclared: a browser User-Agent from inside an OpenAI crawler range
        Crawler("", ((CHROME_WINDOWS, 1),), WWW, 75,
                pool((posts, 3), (DOC_PAGES, 2)), from_addresses((START, ("52.230.152.17",))),
                window=(at(4, 15), at(4, 16)), honours=False, robots_every=None),
    )


def crawl(crawler: Crawler, history: Sequence[Version], rng: random.Random) -> Iterator[Request]:
    """Simulate one crawler on one host, robots.txt fetches included."""
    span = crawler.window[1] - crawler.window[0]
    ts = crawler.window[0] + timedelta(seconds=rng.randrange(0, min(1800, int(span.total_seconds()) // 10)))
    copy: Version | None = None  # the robots.txt answer this crawler last fetched
    next_robots = ts if crawler.robots_every else crawler.window[1]
    while ts < crawler.window[1]:
        ua = weighted(rng, crawler.user_agents)
        if ts >= next_robots:
            copy = served(history, crawler.host, ts)
            size = len(copy.robots.body) if copy.robots else 162
            yield Request(ts, crawler.host, crawler.addresses(rng, ts), "GET", "/robots.txt", copy.status, size, "-", ua)
            erroring = copy.status >= 500
            next_robots = ts + (timedelta(minutes=rng.randrange(30, 60)) if erroring
                                else crawler.robots_every * rng.uniform(0.8, 1.2))
            ts += timedelta(seconds=_gap(crawler, copy.robots if crawler.honours else None, rng))
            continue
        rules = copy.robots if copy and crawler.honours else None
        if crawler.honours and copy is not None and copy.status >= 500:
            ts = next_robots  # a 5xx robots.txt means: do not crawl until it recovers
            continue
        path = weighted(rng, crawler.pool)
        if rules is not None and rules.blocks(crawler.token, path):
            if rules.blocks(crawler.token, "/"):
                ts = next_robots  # shut out entirely: only robots.txt is fetched again
            continue
        status = page_status(crawler.host, path, ts)
        yield Request(ts, crawler.host, crawler.addresses(rng, ts), "GET", path, status,
                      response_size(path, rng) if status == 200 else 162, "-", ua)
        ts += timedelta(seconds=_gap(crawler, rules, rng))


def _gap(crawler: Crawler, rules: Robots | None, rng: random.Random) -> int:
    gap = max(1, round(rng.expovariate(1 / crawler.mean_gap)))
    delay = rules.crawl_delay(crawler.token) if rules and crawler.keeps_delay else None
    if delay is None:
        return gap
    if rng.random() < crawler.slip:
        return rng.randrange(1, delay)  # a burst closer together than the Crawl-delay
    return max(gap, delay + rng.randrange(1, 4))


# --------------------------------------------------------------------------- browser traffic

BROWSERS = (
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 "
     "Safari/537.36", 30),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 "
     "Safari/537.36", 10),
    ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile "
     "Safari/537.36", 18),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/26.0 Mobile/15E148 Safari/604.1", 16),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 "
     "Safari/605.1.15", 8),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0", 8),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0", 3),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 "
     "Safari/537.36 Edg/142.0.0.0", 7),
)
REFERERS = (("-", 30), ("https://www.google.com/", 40), ("https://www.bing.com/", 8), ("https://duckduckgo.com/", 6),
            ("https://news.ycombinator.com/", 4), ("https://t.co/", 3), ("https://chatgpt.com/", 2))
# Hour-of-day weights in the servers' local time: quiet nights, a lunch bump, busy evenings.
HOURLY = (2, 1, 1, 1, 1, 2, 4, 7, 9, 10, 10, 11, 12, 11, 10, 10, 10, 11, 12, 13, 13, 11, 7, 4)


def visitor_address(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return f"100.{rng.randrange(64, 128)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}"  # mobile carrier NAT
    if kind < 0.85:
        return f"{rng.choice(('192.0.2', '198.51.100'))}.{rng.randrange(1, 240)}"
    return f"2001:db8:{rng.randrange(0x10, 0xfff):x}:{rng.randrange(0x1, 0xffff):x}::{rng.randrange(1, 0xffff):x}"


def session_start(rng: random.Random) -> datetime:
    """A start time drawn by the hourly weights of the servers' local clock."""
    peak = max(HOURLY)
    while True:
        ts = START + timedelta(seconds=rng.randrange(0, DAYS * 86_400))
        if rng.random() * peak < HOURLY[ts.astimezone(SERVER_TZ).hour]:
            return ts


def browse(host: str, rng: random.Random) -> Iterator[Request]:
    """One visit: a landing page with its assets, then a few more pages, maybe a dead link."""
    ts, ip, ua = session_start(rng), visitor_address(rng), weighted(rng, BROWSERS)
    protocol = "HTTP/2.0" if rng.random() < 0.85 else "HTTP/1.1"
    returning = rng.random() < 0.3
    pages = www_pages() + (search_path(rng),) if host == WWW else shop_pages() + (search_path(rng),)
    assets = WWW_ASSETS if host == WWW else SHOP_ASSETS
    referer = weighted(rng, REFERERS)
    path = rng.choice(pages)
    for step in range(rng.choices((1, 2, 3, 4, 6), weights=(30, 25, 20, 15, 10))[0]):
        status = page_status(host, path, ts)
        yield Request(ts, host, ip, "GET", path, status, response_size(path, rng) if status == 200 else 197,
                      referer, ua, protocol)
        if status == 503:
            return
        here = f"https://{host}{path}"
        if step == 0:
            for asset in assets:
                ts += timedelta(seconds=rng.choice((0, 0, 1)))
                fresh = not returning or asset == "/favicon.ico"
                yield Request(ts, host, ip, "GET", asset, 200 if fresh else 304,
                              response_size(asset, rng) if fresh else 0, here, ua, protocol)
            if "iPhone" in ua and rng.random() < 0.5:
                yield Request(ts, host, ip, "GET", "/apple-touch-icon.png", 404, 197, "-", ua, protocol)
        if host == SHOP and path.startswith("/products/") and rng.random() < 0.25:
            ts += timedelta(seconds=rng.randrange(5, 40))
            yield Request(ts, host, ip, "POST", "/cart/add", 302, 0, here, ua, protocol)
            path, referer = "/cart/", here
        else:
            path, referer = (rng.choice(DEAD_LINKS) if rng.random() < 0.03 else rng.choice(pages)), here
        ts += timedelta(seconds=rng.randrange(8, 150))


def monitor(host: str) -> Iterator[Request]:
    """An uptime probe: HEAD / every 15 minutes (a tool, not a crawler)."""
    ts = START + timedelta(minutes=3)
    while ts < END:
        status = page_status(host, "/", ts)
        yield Request(ts, host, "192.0.2.10", "HEAD", "/", status, 0, "-", "Blackbox-Exporter/0.25.0")
        ts += timedelta(minutes=15)


def scripts(rng: random.Random) -> Iterator[Request]:
    """Scripted fetches by people: feed readers, curl, a Python script. Tools that claim no crawler."""
    agents = ("curl/8.5.0", "python-requests/2.32.3", "Wget/1.21.4", "Go-http-client/2.0")
    for _ in range(60):
        ts = START + timedelta(seconds=rng.randrange(0, DAYS * 86_400))
        host = rng.choice((WWW, SHOP))
        path = rng.choice(("/feed.xml", "/", "/sitemap.xml")) if host == WWW else rng.choice(("/", "/sitemap.xml"))
        status = page_status(host, path, ts)
        yield Request(ts, host, visitor_address(rng), "GET", path, status, response_size(path, rng), "-",
                      rng.choice(agents))


# --------------------------------------------------------------------------- malformed lines


def malformed_lines() -> tuple[tuple[datetime, str, str], ...]:
    """Lines no parser can turn into a request: (time, host, raw line).

    TLS handshakes sent to port 80 (nginx escapes the bytes), connections closed before a request
    line ("-"), a CONNECT probe, a line cut short when the shop crashed, and a line of noise.
    """
    tls = r"\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03\x9A\x1F\xE2\x8C\x07\xB5"
    raw: list[tuple[datetime, str, str]] = []
    for day, hour, minute, ip in ((2, 3, 12, "203.0.113.9"), (3, 14, 55, "203.0.113.9"), (4, 6, 31, "203.0.113.201")):
        ts = at(day, hour, minute)
        raw.append((ts, WWW, f'{WWW} {ip} - - [{local_time(ts)}] "{tls}" 400 157 "-" "-"'))
    for day, hour, minute, host in ((2, 7, 40, WWW), (2, 22, 5, SHOP), (3, 11, 18, WWW), (4, 19, 2, SHOP)):
        ts = at(day, hour, minute)
        raw.append((ts, host, f'{host} 198.51.100.77 - - [{local_time(ts)}] "-" 400 0 "-" "-"'))
    ts = at(3, 4, 44)
    raw.append((ts, SHOP, f'{SHOP} 203.0.113.201 - - [{local_time(ts)}] "CONNECT shop.example.net:443 HTTP/1.1" '
                          '400 157 "-" "-"'))
    ts = SHOP_OUTAGE[0] - timedelta(seconds=1)
    raw.append((ts, SHOP, f'{SHOP} 192.0.2.131 - - [{local_time(ts)}] "GET /products/oak-desk-lamp HTTP/2.0" 200 1'))
    ts = at(4, 12, 0)
    raw.append((ts, WWW, "~!Kq\tZ8 0x7f3a9c12 ^@^@^@ ::: rotate: partial write :::"))
    return tuple(raw)


# --------------------------------------------------------------------------- write


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def write_logs(lines: Sequence[tuple[datetime, str, str]]) -> list[Path]:
    """One gzip file per host per UTC day, lines in time order, as logrotate would leave them."""
    files: dict[Path, list[str]] = {}
    for ts, host, line in sorted(lines, key=lambda item: item[0]):
        files.setdefault(OUT / "logs" / f"{host}.{ts:%Y-%m-%d}.log.gz", []).append(line)
    (OUT / "logs").mkdir(parents=True, exist_ok=True)
    for path, content in sorted(files.items()):
        path.write_bytes(gzip_bytes(("\n".join(content) + "\n").encode()))
    return sorted(files)


def write_robots(history: Sequence[Version]) -> list[Path]:
    folder = OUT / "robots"
    (folder / "bodies").mkdir(parents=True, exist_ok=True)
    rows = []
    written = []
    for version in history:
        row: dict[str, object] = {"host": version.host,
                                  "effective_from": version.effective_from.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                  "status": version.status}
        if version.body_file and version.robots:
            row["body_file"] = version.body_file
            (folder / version.body_file).write_bytes(version.robots.body)
            written.append(folder / version.body_file)
        rows.append(json.dumps(row))
    (folder / "history.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [folder / "history.jsonl"] + sorted(set(written))


def write_ranges() -> list[Path]:
    written = []
    for source, snapshots in RANGES.items():
        for day, prefixes in snapshots.items():
            document = {
                "creationTime": CREATION_TIMES.get(source, f"{day}T00:00:00.000000"),
                "prefixes": [{"ipv6Prefix" if ":" in p else "ipv4Prefix": p} for p in prefixes],
            }
            path = OUT / "ranges" / source / f"{day}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            written.append(path)
    return written


def generate() -> list[Path]:
    rng = random.Random(SEED)
    history = robots_history()
    requests: list[Request] = []
    for crawler in crawlers():
        requests.extend(crawl(crawler, history, rng))
    for host, visits in ((WWW, 1350), (SHOP, 750)):
        for _ in range(visits):
            requests.extend(browse(host, rng))
    for host in (WWW, SHOP):
        requests.extend(monitor(host))
    requests.extend(scripts(rng))
    lines = [(r.ts, r.host, format_line(r)) for r in requests if START <= r.ts < END]
    lines.extend(malformed_lines())
    return write_logs(lines) + write_robots(history) + write_ranges()


def main() -> None:
    for path in generate():
        print(f"{path.relative_to(OUT.parent)}  {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
