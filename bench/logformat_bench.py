"""Parse-only throughput of every log format: lines per second on one core, one format at a time.

    python bench/logformat_bench.py                       # every format, 100k lines each
    python bench/logformat_bench.py --lines 200000 combined aws_alb 'apache:%h %l %u %t "%r" %>s %b'
    python bench/logformat_bench.py gandi ovh icecast2 cloudfront_realtime   # a 22-field real-time list
    PYTHONPATH=../other-checkout python bench/logformat_bench.py combined vhost_combined   # another tree

Each format reads lines written the way that program writes them (bench/workload-style variety:
client addresses, paths, status codes and User-Agents drawn from a fixed seed, a third of them
crawlers), so caches see what a real log gives them. The parser is the one the audit calls
(`matcher.logformats.parser_for`), timed over the whole list after one warm-up pass, in CPU time of
this process (so that others' work on a shared machine does not count); the figure is the best of
--repeat rounds. A format this tree does not know is reported and skipped, so the same
command measures an older checkout on the formats it has.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import datetime, timedelta, timezone

CRAWLERS = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
]
BROWSERS = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
    "curl/8.5.0",
]
START = datetime(2026, 11, 2, 10, 0, 0, tzinfo=timezone.utc)


def _fields(pick: random.Random, number: int) -> dict:
    moment = START + timedelta(seconds=number // 20, microseconds=pick.randrange(1_000_000))
    return {
        "ip": f"{pick.choice([66, 40, 157, 203])}.{pick.randrange(256)}.{pick.randrange(256)}.{pick.randrange(1, 255)}",
        "path": f"/{pick.choice(['shop', 'blog', 'private', 'a'])}/{pick.randrange(5000)}" + pick.choice(["", "?q=1"]),
        "status": pick.choice([200, 200, 200, 301, 404]),
        "size": pick.randrange(100_000),
        "ua": pick.choice(CRAWLERS) if pick.random() < 0.3 else pick.choice(BROWSERS),
        "host": f"site{pick.randrange(200)}.example",
        "t": moment,
    }


def _clf(t: datetime) -> str:
    return t.strftime("%d/%b/%Y:%H:%M:%S +0000")


def _line(name: str, f: dict) -> str:
    t, ip, path, ua, host, status, size = f["t"], f["ip"], f["path"], f["ua"], f["host"], f["status"], f["size"]
    clf = f'{ip} - - [{_clf(t)}] "GET {path} HTTP/1.1" {status} {size}'
    iso = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if name in ("combined", "varnishncsa") or name.startswith(("apache:", "nginx:")):
        return f'{clf} "-" "{ua}"'
    if name == "common":
        return clf
    if name in ("vhost_combined", "host_combined"):
        return f'{host} {clf} "-" "{ua}"'
    if name == "vhost_common":
        return f"{host} {clf}"
    if name == "combined_xrt":
        return f'{clf} "-" "{ua}" "noindex"'
    if name == "gandi":
        return f'{host} {clf.replace("] ", "] (0 s) ", 1)} "-" "{ua}"'
    if name in ("lighttpd", "ovh"):
        return f'{clf.replace(" - - ", f" {host} - ", 1)} "-" "{ua}"'
    if name == "icecast2":
        return f'{clf} "-" "{ua}" {size % 3600}'
    if name == REALTIME:
        return "\t".join([f"{t.timestamp():.3f}", ip, "0.002", str(status), str(size), "GET", "https", host, path, "160",
                          "SEA19-C1", "SOX4xwn4XV6Q4rgb7Xi==", "d111111abcdef8.cloudfront.net", "0.002", "HTTP/1.1",
                          "IPv4", ua.replace(" ", "%20"), "-", "-", path.partition("?")[2] or "-", "Hit", "-"])
    if name == "traefik":
        return f'{clf} "-" "{ua}" 1 "web@docker" "http://10.0.0.2:80" 3ms'
    if name == "aws_alb":
        return (f'https {iso} app/lb/50dc6c495c0c9188 {ip}:2817 10.0.1.252:48160 0.000 0.001 0.000 {status} {status} 34 '
                f'{size} "GET https://{host}:443{path} HTTP/1.1" "{ua}" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 '
                f'arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/t/73e2d6bc24d8a067 "Root=1-5833" '
                f'"{host}" "arn:aws:acm:us-east-2:123456789012:certificate/1234" 0 {iso} "forward" "-" "-" '
                f'"10.0.1.252:48160" "{status}" "-" "-"')
    if name == "aws_elb":
        return (f'{iso} lb {ip}:2817 10.0.0.1:80 0.000073 0.001048 0.000057 {status} {status} 0 {size} '
                f'"GET http://{host}:80{path} HTTP/1.1" "{ua}" - -')
    if name == "aws_s3":
        return (f'79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be bucket [{_clf(t)}] {ip} - 3E57427F '
                f'WEBSITE.GET.OBJECT a "GET {path} HTTP/1.1" {status} - {size} {size} 7 - "-" "{ua}" - s9lzHYrF= - - - '
                f'{host} - - - us-east-1')
    if name == "haproxy":
        return (f"{t.strftime('%b %e %H:%M:%S')} lb haproxy[14389]: {ip}:33317 [{t.strftime('%d/%b/%Y:%H:%M:%S')}.655] "
                f'http-in static/srv1 10/0/30/69/109 {status} {size} - - ---- 1/1/1/1/0 0/0 "GET {path} HTTP/1.1"')
    if name == "python_http":
        return f'{ip} - - [{t.strftime("%d/%b/%Y %H:%M:%S")}] "GET {path} HTTP/1.1" {status} {size}'
    if name == "squid":
        return f"{t.timestamp():.3f}    180 {ip} TCP_MISS/{status} {size} GET http://{host}{path} - HIER_DIRECT/93.184.216.34 text/html"
    if name == "w3c":
        return (f"{t.strftime('%Y-%m-%d %H:%M:%S')} 10.0.0.4 GET {path.split('?')[0]} {path.partition('?')[2] or '-'} 443 - "
                f"{ip} {ua.replace(' ', '+')} - {status} 0 0 15")
    if name == "cloudfront":
        return "\t".join([t.strftime("%Y-%m-%d"), t.strftime("%H:%M:%S"), "SEA19-C1", str(size), ip, "GET",
                          "d111111abcdef8.cloudfront.net", path.split("?")[0], str(status), "-", ua.replace(" ", "%20"),
                          path.partition("?")[2] or "-", "-", "Hit", "SOX4xwn4XV6Q4rgb7Xi==", host, "https", "160",
                          "0.107", "-", "TLSv1.3", "TLS_AES_128_GCM_SHA256", "Hit", "HTTP/2.0", "-", "-", "11040",
                          "0.107", "Hit", "text/html", "78", "-", "-"])
    epoch = t.timestamp()
    objects = {
        "cloudflare": {"EdgeStartTimestamp": int(epoch * 1e9), "ClientIP": ip, "ClientRequestHost": host,
                       "ClientRequestMethod": "GET", "ClientRequestURI": path, "EdgeResponseStatus": status,
                       "EdgeResponseBytes": size, "ClientRequestUserAgent": ua, "RayID": "7d1f"},
        "gcp_lb": {"timestamp": iso, "httpRequest": {"remoteIp": ip, "requestMethod": "GET", "status": status,
                   "requestUrl": f"https://{host}{path}", "userAgent": ua, "responseSize": str(size)},
                   "jsonPayload": {"statusDetails": "response_sent_by_backend"}},
        "caddy": {"level": "info", "ts": epoch, "logger": "http.log.access", "msg": "handled request",
                  "request": {"remote_ip": ip, "client_ip": ip, "proto": "HTTP/2.0", "method": "GET", "host": host,
                              "uri": path, "headers": {"User-Agent": [ua], "Accept": ["*/*"]}},
                  "duration": 0.0009, "size": size, "status": status},
        "traefik_json": {"ClientAddr": f"{ip}:51234", "ClientHost": ip, "DownstreamContentSize": size,
                         "DownstreamStatus": status, "RequestHost": host, "RequestMethod": "GET", "RequestPath": path,
                         "RequestProtocol": "HTTP/1.1", "StartUTC": iso, "request_User-Agent": ua},
        "nginx_json": {"time_iso8601": t.strftime("%Y-%m-%dT%H:%M:%S+00:00"), "remote_addr": ip, "request": f"GET {path} HTTP/1.1",
                       "status": str(status), "body_bytes_sent": str(size), "http_referer": "", "http_user_agent": ua,
                       "host": host},
        "matomo_json": {"ip": ip, "host": host, "path": path, "status": str(status), "referrer": "", "user_agent": ua,
                        "length": size, "generation_time_milli": 0.003, "date": t.strftime("%Y-%m-%dT%H:%M:%S+00:00")},
        "fastly": {"timestamp": t.strftime("%Y-%m-%dT%H:%M:%S+0000"), "client_ip": ip, "host": host, "url": path,
                   "request_method": "GET", "request_user_agent": ua, "response_status": status, "response_body_size": size},
        "akamai_ds2": {"version": 2, "reqTimeSec": f"{epoch:.3f}", "cliIP": ip, "reqHost": host, "reqMethod": "GET",
                       "reqPath": path.split("?")[0], "queryStr": path.partition("?")[2], "statusCode": str(status),
                       "bytes": str(size), "UA": ua.replace(" ", "+").replace("/", "%2F")},
    }
    if name in objects:
        return json.dumps(objects[name])
    raise KeyError(name)


NGINX_MAIN = ('nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
              '"$http_referer" "$http_user_agent"')
APACHE_COMBINED = 'apache:%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
REALTIME = ("cloudfront_realtime:timestamp,c-ip,time-to-first-byte,sc-status,sc-bytes,cs-method,cs-protocol,cs-host,"
            "cs-uri-stem,cs-bytes,x-edge-location,x-edge-request-id,x-host-header,time-taken,cs-protocol-version,"
            "c-ip-version,cs-user-agent,cs-referer,cs-cookie,cs-uri-query,x-edge-response-result-type,x-forwarded-for")


def measure(name: str, lines: int, repeat: int) -> float | None:
    from matcher.logformats import LogParseError, parser_for

    pick = random.Random(20261202)
    try:
        written = [_line(name, _fields(pick, number)) for number in range(lines)]
        parse = parser_for(name, default_host="default.example")
    except (KeyError, ValueError) as error:
        print(f"{name}: not measured ({error})", file=sys.stderr)
        return None
    unread = 0
    for line in written:
        try:
            parse(line)
        except LogParseError:
            unread += 1
    if unread:
        print(f"{name}: {unread:,} of {lines:,} lines not read", file=sys.stderr)
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for line in written:
            try:
                parse(line)
            except LogParseError:
                pass
        best = min(best, time.process_time() - started)
    return lines / best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("formats", nargs="*", help="formats to measure (default: every format, two format strings and a"
                        " CloudFront real-time field list)")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from matcher.logformats import FORMATS

    names = args.formats or [name for name in FORMATS if name != "jsonl"] + [APACHE_COMBINED, NGINX_MAIN, REALTIME]
    names = [REALTIME if name == "cloudfront_realtime" else name for name in names]  # the one field list lines are written for
    print(f"{'format':<24} {'lines/s':>10}")
    for name in names:
        rate = measure(name, args.lines, args.repeat)
        if rate is not None:
            shown = name if len(name) <= 24 else name[:21] + "..."
            print(f"{shown:<24} {rate:>10,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
