"""The site owner's report: one self-contained HTML page drawn from a finished run's tables.

Inline CSS and SVG only: no script, no network, no fonts; it opens from disk and prints. Its
Content-Security-Policy allows nothing but the page's own stylesheet (by hash), so even a string
that escaped escaping could not run. Every value that came from a log or a robots.txt goes
through `escape`. Sections have stable ids for links: SECTIONS.
"""
from __future__ import annotations

import base64
import difflib
import hashlib
import re
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from html import escape
from pathlib import Path
from typing import Iterable, Sequence


from matcher.report_counts import TOP_PATHS
from matcher.timerange import shifted
from pipeline.report import text as report
from pipeline.tables import reading as tables
from pipeline.report import whatif
from pipeline.report import charts
from pipeline.report import robots_readers
from pipeline.report import health
from pipeline.report import change_audit
from pipeline.tables.files import write_member, write_whole
from pipeline.report.figures import (
    ALL_DISALLOWED, CLAIMED, DECISIONS, HEADINGS, IDENTITY_ORDER, Figures, Split, byte_size, figures, identity_words,
    total as figures_total,
)
from matcher.served import OTHER_REFUSAL, REFUSALS, SERVED
from pipeline.report.data import TOP_ADDRESSES, CrawlerDisallowed, Disallowed, ReportData, gather

SECTIONS = (
    ("changes", "Did they obey after a change?"),
    ("whatif", "What-if"),
    ("overview", "Overview"),
    ("crawlers", "Crawlers"),
    ("timeline", "Timeline"),
    ("disallowed", "Disallowed"),
    ("spoofing", "Spoofing"),
    ("preferences", "Preference conflicts"),
    ("automated", "Automated clients"),
    ("agents", "Signed agents"),
    ("llms-txt", "llms.txt"),
    ("referrals", "Referrals"),
    ("crawl-delay", "Crawl-delay"),
    ("backoff", "Back-off"),
    ("robots-versions", "robots.txt versions"),
    ("robots-readers", "Who reads your robots.txt"),
    ("indexing", "Indexing"),
)
FILE_NAME = "report.html"
TOP_CRAWLERS = 25
TOP_HOSTS = 20
TOP_ROWS = 100
TOP_USER_AGENTS = 3
TIMELINE_SERIES = 8
MAX_DIFF_LINES = 200
# A section longer than this many table rows, or with more charts and listings than FOLD_BLOCKS,
# shows its intro and folds the rest.
FOLD_ROWS = 15
FOLD_BLOCKS = 2
# The answer the owner came for is never folded.
_NEVER_FOLDED = frozenset({"changes"})
_FOLDED = re.compile(r"<details>.*?</details>", re.DOTALL)
_DECISION_COLOURS = {
    "allowed": "#4c9a2a", "disallowed": "#c0392b", "within_grace": "#e6a23c", "before_refetch": "#d35400",
    "between_captures": "#8e6bbf", "unknown": "#8c8c8c",
}
_IDENTITIES = IDENTITY_ORDER
_STATUS_COLOURS = {"ok": "#4c9a2a", "unavailable": "#9ecae1", "error": "#c0392b"}
# Parsed versions one after another take turns in these greens, so that each change shows.
_OK_GREENS = ("#4c9a2a", "#a1d76a", "#276419", "#7fbc41")

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;margin:0 auto;max-width:1000px;padding:0 16px 40px}
h1{font-size:1.6em;margin:.8em 0 .2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.92em}
table{display:block;max-width:100%;overflow-x:auto}
th,td{border-bottom:1px solid #e3e3e3;padding:.25em .6em;text-align:left;vertical-align:top;overflow-wrap:normal;word-break:keep-all}
td.host{white-space:nowrap}
th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
tfoot td{font-weight:600;border-top:2px solid #bbb}
pre{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere}
pre.diff{background:#fafafa;border:1px solid #ddd;padding:.5em;overflow-x:auto;white-space:pre-wrap}
pre.diff .add{background:#e6ffec;display:block}pre.diff .del{background:#ffebe9;display:block}
pre.diff .hunk{color:#6a737d;display:block}
svg.chart{max-width:100%;height:auto;display:block;margin:.5em 0}
svg text{font-size:12px;fill:#1a1a1a}svg text.version-number{font-size:11px;font-weight:600;fill:#fff;stroke:#000;stroke-width:.4}svg text.tick{font-size:11px;fill:#555}svg text.axis-label{font-size:12px;font-weight:600}
svg .axis{stroke:#333;stroke-width:1}svg .marker{stroke:#111;stroke-width:1.5;stroke-dasharray:4 3}
.note{color:#555}.warn{color:#a40000;font-weight:600}
.health{border:2px solid;border-radius:4px;padding:.4em 1em;margin:1em 0}.health.bad{border-color:#c0392b;background:#fdecea}
.health.ok{border-color:#4c9a2a;background:#eef7ea}.health h2{margin-top:.3em;border:0}.health code{background:#fff;padding:0 .2em}
.health .detail{color:#444}
section.empty p{margin:.5em 0}details>summary{cursor:pointer;color:#1f4e8c;margin:.4em 0}
ul.changes li{margin:.2em 0}
@media print{nav{display:none}h2{break-after:avoid}table,svg{break-inside:avoid}body{max-width:none}}
"""


def _style_hash(style: str) -> str:
    return base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")


# Nothing loads or runs but the stylesheet above; `base-uri` and `form-action` shut the doors a
# stray element could open.
CSP = (
    f"default-src 'none'; style-src 'sha256-{_style_hash(_STYLE)}'; img-src 'none'; script-src 'none';"
    " base-uri 'none'; form-action 'none'"
)


def write(out: str, target: str | None = None) -> str:
    """Build the report of the run in `out` and write it, whole, to `target` (default
    OUT/report.html, reached without following any link in OUT)."""
    page = render(gather(out)).encode("utf-8")
    if target is None:
        return str(write_member(out, FILE_NAME, page))
    write_whole(Path(target), page)
    return target


def render(data: ReportData) -> str:
    figs = figures(data.summary.rows)
    sections = [
        _change_audit(data),
        _whatif(data.whatif) if data.whatif is not None else "",
        _overview(data),
        _crawlers(figs, data),
        _timeline(data),
        _disallowed(data),
        _spoofing(data),
        _preference_conflicts(data),
        _automated(data, figs),
        _agents(figs),
        _llms_txt(data),
        _referrals(data),
        _crawl_delay(data),
        _backoff(data),
        _robots_versions(data),
        _robots_readers(data),
        _indexing(data),
    ]
    shown = {ident for ident, _ in SECTIONS if data.whatif is not None or ident != "whatif"}
    links = "".join(f'<li><a href="#{ident}">{title}</a></li>' for ident, title in SECTIONS if ident in shown)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>crawl-audit report</title>"
        f"<style>{_STYLE}</style></head><body>"
        "<header><h1>crawl-audit report</h1>"
        '<p class="note">Who crawled, whether robots.txt allowed it, and which rule of which version decided.</p>'
        f"<nav><ul>{links}</ul></nav></header>"
        + health.html_banner(data.summary.health)
        + "<main>"
        + "".join(sections)
        + "</main></body></html>\n"
    )


def _section(ident: str, intro: str, *parts: str) -> str:
    """A section with its fixed id; `intro` and `parts` are HTML, their data already escaped. A
    section with nothing to show is one line; a long one folds all but its intro."""
    title = dict(SECTIONS)[ident]
    body = "".join(parts)
    if not body:
        return f'<section id="{ident}" class="empty"><p><strong>{title}:</strong> {intro}</p></section>'
    # What is folded already takes no room.
    unfolded = _FOLDED.sub("", body)
    rows = unfolded.count("<tr")
    blocks = unfolded.count("<svg") + unfolded.count("<pre")
    if ident not in _NEVER_FOLDED and (rows > FOLD_ROWS or blocks > FOLD_BLOCKS):
        shown = [f"{rows:,} table rows" if rows else "", f"{blocks:,} charts and listings" if blocks else ""]
        body = f"<details><summary>Show the details ({', '.join(filter(None, shown))})</summary>{body}</details>"
    return f'<section id="{ident}"><h2>{title}</h2><p class="note">{intro}</p>{body}</section>'


_NUM = ' class="num"'
_HOST = ' class="host"'


def _table(headers: Sequence[str], rows: Iterable[Sequence], numeric: int, ident: str = "", foot: Sequence | None = None) -> str:
    """A table whose cells from column `numeric` on are right-aligned numbers. Every cell is
    escaped; a list cell shows one item per line. A column headed "host" is never broken inside
    a name."""
    hosts = {i for i, header in enumerate(headers) if header == "host"}

    def cells(row: Sequence, tag: str) -> str:
        return "".join(
            f"<{tag}{_NUM if i >= numeric else _HOST if i in hosts else ''}>{_cell(value)}</{tag}>"
            for i, value in enumerate(row)
        )

    head = f"<thead><tr>{cells(headers, 'th')}</tr></thead>"
    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    tail = f"<tfoot><tr>{cells(foot, 'td')}</tr></tfoot>" if foot else ""
    attr = f' id="{ident}"' if ident else ""
    return f"<table{attr}>{head}<tbody>{body}</tbody>{tail}</table>"


def _cell(value) -> str:
    if isinstance(value, list):
        return "<br>".join(_cell(item) for item in value)
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M:%S} UTC"
    return escape(str(value))


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _of_kind(rows: Sequence[dict], kind: str) -> list[dict]:
    """Summary rows of crawlers, automated clients or signed agents (a run from before client kinds has only
    crawlers)."""
    return [row for row in rows if row.get("client_kind", "crawler") == kind]


def _reasons_text(reasons: dict) -> str:
    """Why lines held no request: `no-request 12, not-http 3`, or what such lines are when none."""
    if not reasons:
        return "lines with no request for a resource"
    return ", ".join(f"{reason} {n:,}" for reason, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0])))


_CHANGE_HEADERS = (
    "crawler", "direction", "requests before", "requests after", "within grace", "before refetch", "violations",
    "between captures", "re-read robots.txt (UTC)", "last newly disallowed (UTC)",
)


def _change_audit(data: ReportData) -> str:
    """Per robots.txt change, what each crawler did with the paths it turned: a sentence each,
    then the counts of the `changes` table."""
    if data.changes is None:
        return _section("changes", "This run wrote no change audit (a streaming run, or one from before the audit).")
    found = change_audit.by_change(data.changes)
    if not found:
        return _section(
            "changes", "No robots.txt change turned a path a crawler asked for (or robots.txt never changed)."
        )
    parts = [_more(len(found), TOP_HOSTS, "changes, the latest")]
    for i, change in enumerate(found[:TOP_HOSTS], 1):
        rows = change.rows[:TOP_ROWS]
        parts.append(f"<h3>{escape(change.host)}: robots.txt changed {change.at:%Y-%m-%d %H:%M} UTC</h3>")
        parts.append('<ul class="changes">' + "".join(
            f'<li data-crawler="{escape(row["crawler"])}" data-identity="{escape(row["identity"])}">'
            f"{escape(change_audit.sentence(row))}</li>"
            for row in rows
        ) + "</ul>")
        parts.append(_more(len(change.rows), TOP_ROWS, "crawlers"))
        parts.append(_table(
            _CHANGE_HEADERS,
            [(change_audit.who(row), row["direction"], row["requests_before"], row["requests_after"], row["within_grace"],
              row["before_refetch"], row["violations"], row["between_captures"],
              _minute(row["first_robots_fetch_after"]) or "none seen", _minute(row["last_newly_disallowed_request"]))
             for row in rows],
            2,
            f"changes-table-{i}",
        ))
    return _section(
        "changes",
        "For each robots.txt change, each crawler that asked for a path the change turned: when it read"
        " robots.txt again, and its requests to those paths in the period before the change and after it"
        " (until the next change or the last logged request; the before-period is as long)."
        " Claims not proven are named as claims.",
        *parts,
    )


def _minute(moment: datetime | None) -> str | None:
    return None if moment is None else f"{moment:%Y-%m-%d %H:%M}"


def _overview(data: ReportData) -> str:
    counts = data.summary.counts
    lines = counts.get("lines", 0)
    crawler_rows = _of_kind(data.summary.rows, "crawler")
    automated = sum(row["requests"] for row in _of_kind(data.summary.rows, "automated"))
    agents = sum(row["requests"] for row in _of_kind(data.summary.rows, "agent"))
    where = [
        ("crawler verdicts", counts.get("verdicts", 0) - automated - agents),
        ("automated clients (HTTP libraries, tools, monitors, scanners)", automated),
        ("signed agents (browsers run by an operator's agent)", agents),
        ("non-crawlers (counted, not written)", counts.get("skipped", 0)),
        ("not requests (" + _reasons_text(counts.get("not_request_reasons") or {}) + ")", counts.get("not_requests", 0)),
        ("dead letters (see dead_letters/)", counts.get("dead_letters", 0)),
    ]
    accounted = sum(n for _, n in where)
    warning = (
        f'<p class="warn">{lines - accounted:,} lines unaccounted for.</p>' if accounted != lines else ""
    )
    by_identity = Counter()
    for row in crawler_rows:
        by_identity[row["identity"]] += row["requests"]
    verdicts = counts.get("verdicts", 0) - automated - agents
    identities = [(i, by_identity[i], _share(by_identity[i], verdicts)) for i in _IDENTITIES if by_identity[i]]
    return _section(
        "overview",
        f"{lines:,} log lines read; {_share(verdicts, lines)} of them were crawler requests.",
        _table(("lines", "count", "share"), [(name, n, _share(n, lines)) for name, n in where], 1, "lines-table",
               ("lines read", lines, "100%" if lines else "-")),
        warning,
        _table(("identity", "requests", "share of crawler requests"), identities, 1, "identity-table"),
    )


_SPLIT_HEADERS = ("requests", "bytes") + tuple(HEADINGS[column] for column in DECISIONS)
_DISALLOWED_NOTE = (
    " Disallowed: plainly, by the robots.txt the crawler had or should have had. Within grace: disallowed"
    " by the version in effect, allowed by one the crawler may still have cached. Before refetch:"
    " disallowed only by a change the crawler had not fetched yet. Between captures: the robots.txt"
    " changed at an unknown time, and only the older version disallowed."
)


def _split_table(name: str, splits: Sequence[Split], ident: str, total: str) -> str:
    """Requests per crawler and identity split by every decision, with the total row."""
    return _table(
        (name, "identity") + _SPLIT_HEADERS,
        [(s.name, identity_words(s.identity)) + _split_cells(s) for s in splits],
        2,
        ident,
        (total, "") + _split_cells(figures_total(total, splits)),
    )


def _split_cells(split: Split) -> tuple:
    """requests, the bytes sent, then each decision."""
    requests, *decisions = split.cells()
    return (requests, byte_size(split.bytes), *decisions)


def _crawlers(figs: Figures, data: ReportData) -> str:
    rows = figs.crawlers
    shown = rows[:TOP_CRAWLERS]
    chart = charts.stacked_bars(
        "Requests per crawler and identity, by decision",
        [(f"{s.name} ({identity_words(s.identity)})", list(s.decisions)) for s in shown],
        [(HEADINGS[column], _DECISION_COLOURS[column]) for column in DECISIONS],
        "requests",
    )
    more = f'<p class="note">The chart shows the {len(shown)} largest of {len(rows)} rows; the table lists all.</p>' if len(rows) > len(shown) else ""
    parts = [chart, more, _split_table("crawler", rows, "crawler-table", "all crawlers")]
    if figs.claims:
        parts += [
            "<h3>Claims not proven</h3>"
            '<p class="note">Requests naming a crawler their address disproves (spoofed) or does not prove'
            " (unverified): not counted as the crawler's own.</p>",
            "<ul>" + "".join(
                f'<li data-claimed="{escape(claim.name)}">{escape(claim.sentence())}</li>' for claim in figs.claimed
            ) + "</ul>",
            _split_table("claimed crawler", figs.claims, "claims-table", "all claims not proven"),
        ]
    parts.append(_purposes(figs))
    parts.append(_disallowed_answers(data))
    return _section(
        "crawlers",
        "Per crawler and identity: requests and how robots.txt decided them; each row's decisions add up"
        " to its requests. A crawler's own requests are those its address proves (verified), or that no"
        " method can check (no way to verify); claims not proven are listed apart." + _DISALLOWED_NOTE,
        *parts,
    )


def _disallowed_answers(data: ReportData) -> str:
    """Per crawler, what the server answered its own disallowed requests: robots.txt says no, and
    the server may still have sent the page, or refused it at the edge."""
    per_crawler: dict[str, Counter] = defaultdict(Counter)
    for (crawler, identity, answered), n in data.counts.disallowed_answers.items():
        if identity not in CLAIMED:
            per_crawler[crawler][answered] += n
    if not per_crawler:
        return ""
    ranked = sorted(per_crawler.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    items = "".join(
        f'<li data-answers="{escape(crawler)}">{escape(_answers_sentence(crawler, answers))}</li>'
        for crawler, answers in ranked[:TOP_CRAWLERS]
    )
    return (
        "<h3>What the server answered disallowed requests</h3>"
        '<p class="note">Each crawler\'s own requests of any disallowed decision: served (2xx) although'
        " robots.txt disallowed them, or refused (4xx, with 401, 403, 451 and 429 named); per status class"
        " in served/.</p>"
        + _more(len(ranked), TOP_CRAWLERS, "crawlers")
        + f"<ul>{items}</ul>"
    )


def _answers_sentence(crawler: str, answers: Counter) -> str:
    """`GPTBot: 120 disallowed of any kind: 100 still served, 15 refused (403 12, 429 3), 5 otherwise answered (3xx 5)`."""
    refused = [(str(code), answers[str(code)]) for code in REFUSALS if answers[str(code)]]
    if answers[OTHER_REFUSAL]:
        refused.append((OTHER_REFUSAL, answers[OTHER_REFUSAL]))
    others = sorted(
        ((kind, n) for kind, n in answers.items() if n and kind != SERVED and kind not in dict(refused)),
        key=lambda kv: kv[0],
    )
    text = (
        f"{crawler}: {sum(answers.values()):,} {ALL_DISALLOWED}: {answers[SERVED]:,} still served,"
        f" {sum(n for _, n in refused):,} refused"
    )
    if refused:
        text += " (" + ", ".join(f"{kind} {n:,}" for kind, n in refused) + ")"
    if others:
        text += f", {sum(n for _, n in others):,} otherwise answered (" + ", ".join(f"{k} {n:,}" for k, n in others) + ")"
    return text


def _purposes(figs: Figures) -> str:
    """The crawlers' own requests per purpose; a crawler of several purposes counts under each."""
    return (
        '<h3>By purpose</h3><p class="note">What the registry says each crawler fetches for'
        " (docs/semantics.md § Purpose), of the crawlers' own requests; a crawler of several purposes is"
        " counted under each.</p>"
        + _table(("purpose",) + _SPLIT_HEADERS, [(s.name,) + _split_cells(s) for s in figs.purposes], 1, "purpose-table")
    )


def _automated(data: ReportData, figs: Figures) -> str:
    rows = figs.automated
    if not rows:
        return _section("automated", "No request came from an automated client.")
    table = _split_table("client", rows, "automated-table", "all automated clients")
    clients = sorted(data.automated_disallowed.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    parts = [table]
    for client, paths in clients[:TOP_CRAWLERS]:
        top = sorted(paths.items(), key=lambda kv: (-kv[1], kv[0].path, repr(kv[0])))[:TOP_PATHS]
        parts.append(f"<h3>{escape(client)}: {sum(paths.values()):,} requests {ALL_DISALLOWED}</h3>")
        parts.append(_table(
            ("host", "path", "rule as written", "line", "requests"),
            [(d.host, d.path, _decided_by(d), "-" if d.rule_line is None else str(d.rule_line), n) for d, n in top],
            4,
        ))
    return _section(
        "automated",
        "HTTP libraries, tools, monitors, scanners and headless browsers: audited by the group of their own"
        " product token where robots.txt has one, else by the * group. Nothing proves who runs them"
        " (identity unverifiable); they are counted here, never among the crawlers.",
        *parts,
    )


def _agents(figs: Figures) -> str:
    if not figs.agents:
        return _section("agents", "No request came from a signed agent.")
    return _section(
        "agents",
        "Browsers run by an operator's agent for one of its users: a browser's User-Agent with a"
        " Signature-Agent naming the operator's key directory. Only a Web Bot Auth signature proves"
        " them; they are judged by the * group and counted here, never among the crawlers.",
        _split_table("agent", figs.agents, "agents-table", "all signed agents"),
    )


def _preference_conflicts(data: ReportData) -> str:
    intro = (
        "Fetches by crawlers whose purpose a usage preference in force refused (Content-Signal, aipref"
        " Content-Usage, a per-purpose __usage_ group of robots.txt, or the Content-Usage header the response"
        " was logged with): what the site asked about the use of its content, not about access, so they are"
        " kept apart from the disallowed requests. Each purpose of a crawler counts on its own."
    )
    if not data.conflicts:
        return _section("preferences", intro + " None: no crawler fetched against a preference for its purpose.")
    per_crawler = Counter()
    for (crawler, identity, conflict, *_), n in data.conflicts.items():
        per_crawler[crawler, identity, conflict] += n
    summary = _table(
        ("crawler", "identity", "purpose: preference", "requests"),
        [(*key, n) for key, n in sorted(per_crawler.items(), key=lambda kv: (-kv[1], kv[0]))],
        3,
        "conflicts-table",
    )
    top = sorted(data.conflicts.items(), key=lambda kv: (-kv[1], repr(kv[0])))[:TOP_ROWS]
    paths = _table(
        ("crawler", "identity", "purpose: preference", "host", "path", "robots.txt version", "requests"),
        [(*key, n) for key, n in top],
        6,
    )
    return _section("preferences", intro, summary, "<h3>By path</h3>", paths, _more(len(data.conflicts), TOP_ROWS, "paths"))


def _referrals(data: ReportData) -> str:
    """Per operator, its verified crawlers' requests beside the visits its services sent."""
    visits: dict[str, Counter] = defaultdict(Counter)
    for row in data.referrals:
        visits[row["operator"]][row["via"]] += row["visits"]
    crawled = data.counts.verified_by_operator
    operators = sorted(set(visits) | set(crawled), key=lambda o: (-crawled[o], -sum(visits[o].values()), o))
    if not operators:
        return _section("referrals", "No verified crawler request, and no visit an operator's service referred.")
    rows = []
    for operator in operators[:TOP_CRAWLERS]:
        sent = sum(visits[operator].values())
        ratio = f"{crawled[operator] / sent:,.1f} : 1" if sent else "no visit seen"
        rows.append((operator, crawled[operator], visits[operator]["referer"], visits[operator]["utm_source"], sent, ratio))
    return _section(
        "referrals",
        "Per operator, its verified crawlers' requests beside the visits its services sent: requests that"
        " got no verdict (not a crawler, an automated client nor undeclared crawler traffic) whose Referer"
        " or utm_source names one of the operator's services (config/crawlers.yaml, referrers). A visit"
        " named both ways counts once, by its Referer. The ratio is crawler requests per visit sent."
        " Nothing but these counts is kept of a visit (referrals/).",
        _more(len(operators), TOP_CRAWLERS, "operators"),
        _table(
            ("operator", "verified crawler requests", "visits by Referer", "visits by utm_source", "visits",
             "crawler requests per visit"),
            rows, 1, "referrals-table",
        ),
    )


_BACKOFF_OUTCOMES = ((True, "backed off"), (False, "did not"), (None, "unknown"))


def _backoff(data: ReportData) -> str:
    """Per crawler, identity and host, the 429 and 503 answers and whether it slowed down after each."""
    if not data.backoff:
        return _section("backoff", "No crawler was answered 429 or 503.")
    totals: dict[tuple, Counter] = defaultdict(Counter)
    for row in data.backoff:
        key = (row["crawler"] or row["operator"] or "(none)", identity_words(row["identity"]), row["host"])
        totals[key]["status", row["status"]] += 1
        totals[key]["backed_off", row["backed_off"]] += 1
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1]["backed_off", False], -kv[1].total(), kv[0]))
    rows = [
        (*key, counts["status", 429], counts["status", 503], *(counts["backed_off", o] for o, _ in _BACKOFF_OUTCOMES))
        for key, counts in ranked[:TOP_ROWS]
    ]
    return _section(
        "backoff",
        "Each 429 (too many requests) or 503 (unavailable) answered to a crawler, and whether its next"
        " request to the host came later: with a Retry-After, no sooner than it asked; without one, at"
        " least twice the crawler's median gap of the hour before and at least 10 s. Unknown: no next"
        " request, or no earlier gap to measure its pace by (backoff/ has every answer).",
        _more(len(ranked), TOP_ROWS, "rows"),
        _table(
            ("crawler", "identity", "host", "429", "503", *(words for _, words in _BACKOFF_OUTCOMES)),
            rows, 3, "backoff-table",
        ),
    )


def _llms_txt(data: ReportData) -> str:
    if not data.llms_txt:
        return _section("llms-txt", "No request fetched /llms.txt or /llms-full.txt.")
    rows = sorted(data.llms_txt.items(), key=lambda kv: (-kv[1], kv[0]))
    return _section(
        "llms-txt",
        "Fetches of /llms.txt and /llms-full.txt, the files sites publish for language models, per crawler and identity.",
        _table(("crawler", "identity", "path", "requests"), [(*key, n) for key, n in rows], 3, "llms-txt-table"),
    )


def _timeline(data: ReportData) -> str:
    size, starts, series = data.timeline_buckets(disallowed=True)
    series = {name: values for name, values in series.items() if any(values)}
    if not series:
        return _section("timeline", "No crawler request was disallowed.")
    ordered = sorted(series, key=lambda name: (-sum(series[name]), name))
    named = ordered[:TIMELINE_SERIES]
    drawn = [(name, charts.PALETTE[i], series[name]) for i, name in enumerate(named)]
    rest = ordered[TIMELINE_SERIES:]
    if rest:
        drawn.append((f"{len(rest)} others", charts.PALETTE[-1], [sum(v) for v in zip(*(series[n] for n in rest))]))
    versions = [row for rows in data.versions_by_host(TOP_HOSTS).values() for row in rows]
    changes = change_audit.moments(versions)
    markers = [(at, f"{host}: robots.txt changed {at:%Y-%m-%d %H:%M} UTC") for host, at in changes]
    unit = {timedelta(hours=1): "hour", timedelta(days=1): "day", timedelta(weeks=1): "week"}.get(size) or (
        f"{size // timedelta(weeks=1):,} weeks"
    )
    chart = charts.timeline(
        f"Disallowed requests per crawler per {unit}", starts, size, drawn, markers, f"disallowed requests per {unit}"
    )
    table = _table(
        (f"{unit} starting (UTC)",) + tuple(name for name, _, _ in drawn) + ("total",),
        [
            (f"{start:%Y-%m-%d %H:%M}",) + tuple(values[i] for _, _, values in drawn) + (sum(v[i] for _, _, v in drawn),)
            for i, start in enumerate(starts)
            if any(values[i] for _, _, values in drawn)
        ],
        1,
        "timeline-table",
    )
    marked = _table(("host", "robots.txt changed"), changes, 2) if changes else "<p>No robots.txt change.</p>"
    return _section(
        "timeline",
        f"Requests {ALL_DISALLOWED} per crawler per {unit}, stacked (claims not proven under the claimed name)."
        " Dashed lines mark robots.txt changes: a new parsed body replacing another.",
        chart,
        "<h3>robots.txt changes marked</h3>",
        marked,
        f"<details><summary>Numbers behind the chart ({len(starts)} {unit}s)</summary>{table}</details>",
    )


def _decided_by(item: Disallowed) -> str:
    if item.rule_pattern is not None:
        return f"{(item.rule_kind or '').capitalize()}: {item.rule_pattern}"
    return f"no rule: {item.reason}"


_DISALLOWED_HEADERS = ("host", "path", "identity", "decision", "rule as written", "line", "robots.txt versions", "requests")


def _disallowed(data: ReportData) -> str:
    """Per crawler, its own requests (identities that are not claims apart); the claims not proven
    (spoofed, unverified) apart, since they are not proven to be the crawler's. The run kept each
    identity's exact totals and top rows, and a row is of one identity, so the top rows of several
    identities are among their tops."""
    def own(of: dict[str, CrawlerDisallowed]) -> int:
        return sum(d.requests for identity, d in of.items() if identity not in CLAIMED)

    crawlers = sorted(
        data.disallowed.items(), key=lambda kv: (-own(kv[1]), -sum(d.requests for d in kv[1].values()), kv[0])
    )
    parts = [_more(len(crawlers), TOP_CRAWLERS, "crawlers")]
    for crawler, of in crawlers[:TOP_CRAWLERS]:
        mine = {identity: d for identity, d in of.items() if identity not in CLAIMED}
        claims = {identity: d for identity, d in of.items() if identity in CLAIMED}
        if mine:
            split = ", ".join(f"{identity_words(i)} {mine[i].requests:,}" for i in _IDENTITIES if i in mine)
            parts.append(
                f'<h3 data-crawler="{escape(crawler)}">{escape(crawler)}: {own(of):,} requests {ALL_DISALLOWED}'
                f" ({split}), {sum(d.distinct for d in mine.values()):,} distinct</h3>"
            )
            parts.append(_disallowed_table(mine.values()))
        if claims:
            split = ", ".join(f"{i} {claims[i].requests:,}" for i in CLAIMED if i in claims)
            parts.append(
                f'<h3 data-claimed="{escape(crawler)}">Claimed {escape(crawler)}, not proven:'
                f" {sum(d.requests for d in claims.values()):,} requests {ALL_DISALLOWED} ({split});"
                f" never counted against {escape(crawler)}</h3>"
            )
            parts.append(_disallowed_table(claims.values()))
    if not crawlers and not data.summary.between_captures:
        return _section("disallowed", "No request was disallowed.")
    parts.append(_between_captures(data.summary.between_captures))
    return _section(
        "disallowed",
        f"Per crawler the {TOP_PATHS} most requested paths disallowed by any of the four disallowed decisions,"
        " the identity of the requests, the rule that decided and the robots.txt version in effect (all of"
        " them are in verdicts/). Verified: the crawler's own; no way to verify: no method can check it;"
        " claims not proven (spoofed: someone else using its name; unverified: not proven either way) are"
        " listed apart.",
        *parts,
    )


def _disallowed_table(identities: Iterable[CrawlerDisallowed]) -> str:
    """The most requested paths, one row per path and what decided it, whichever robots.txt
    versions said so (each listed with its status)."""
    grouped: dict[tuple, tuple[list, int]] = {}
    for d, n in (row for of in identities for row in of.top):
        key = (d.host, d.path, d.identity, d.decision, _decided_by(d), "-" if d.rule_line is None else str(d.rule_line))
        versions, requests = grouped.get(key, ([], 0))
        grouped[key] = (versions + [(d.version_from, d.version_status)], requests + n)
    top = sorted(grouped.items(), key=lambda kv: (-kv[1][1], kv[0][1], repr(kv[0])))[:TOP_PATHS]
    return _table(
        _DISALLOWED_HEADERS,
        [(*key, [_version_words(at, status) for at, status in sorted(versions, key=lambda v: (v[0] is None, str(v[0])))], n) for key, (versions, n) in top],
        7,
    )


def _version_words(at: datetime | None, status: str | None) -> str:
    return "none" if at is None else f"{at:%Y-%m-%d %H:%M} UTC ({status})"


def _between_captures(rows: Sequence[dict]) -> str:
    """The changes of unknown time that left requests disallowed-between-captures."""
    if not rows:
        return ""
    ordered = sorted(rows, key=lambda r: (-r["requests"], r["host"] or "", r["crawler"] or "", str(r["effective_from"])))
    return "<h3>Disallowed between captures: robots.txt changes of unknown time</h3>" + _table(
        ("host", "crawler", "version in effect (disallowed)", "next version (allowed)", "old content last seen", "requests"),
        [
            (r["host"], r["crawler"], tables.moment(r["effective_from"]), tables.moment(r["later_effective_from"]),
             tables.moment(r["observed_before"]), r["requests"])
            for r in ordered[:TOP_ROWS]
        ],
        5,
        "between-captures-table",
    )


def _spoofing(data: ReportData) -> str:
    rows = [
        (
            crawler,
            [f"{ip} ({n:,})" for ip, n in _most_common(spoofed.addresses, TOP_ADDRESSES)],
            [f"{ua} ({n:,})" for ua, n in _most_common(spoofed.user_agents, TOP_USER_AGENTS)],
            spoofed.requests,
            len(spoofed.addresses),
        )
        for crawler, spoofed in sorted(data.spoofing.items(), key=lambda kv: (-kv[1].requests, kv[0]))[:TOP_CRAWLERS]
    ]
    if not rows:
        return _section("spoofing", "No request was proven to be a fake.")
    return _section(
        "spoofing",
        "Requests whose claimed crawler the client address disproves: outside the operator's published"
        " ranges, or a reverse DNS that does not confirm. They are never counted against the real crawler.",
        _more(len(data.spoofing), TOP_CRAWLERS, "claimed crawlers"),
        _table(("claimed crawler", f"top {TOP_ADDRESSES} addresses", f"top {TOP_USER_AGENTS} User-Agents",
                "requests", "addresses"), rows, 3, "spoofing-table"),
    )


def _more(count: int, shown: int, what: str) -> str:
    """A note when a list was cut to its top entries."""
    if count <= shown:
        return ""
    return f'<p class="note">The {shown} largest of {count:,} are shown; {count - shown:,} more {what} are in the tables.</p>'


def _most_common(counter: Counter, top: int) -> list[tuple[str, int]]:
    """Like Counter.most_common, but ties in a fixed order, whatever order the rows were read in."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def _crawl_delay(data: ReportData) -> str:
    totals = sorted(
        report.crawl_delay_totals(data.summary.crawl_delay_windows),
        key=lambda t: (-t["violations"], t["crawler"], t["host"], t["identity"]),
    )
    if not totals:
        return _section("crawl-delay", "No request had a Crawl-delay in effect.")
    promise = {True: "promised to honour it", False: "says it ignores it", None: "not in the registry"}
    rows = [
        (t["crawler"], t["identity"], t["host"], "/".join(f"{d:g}s" for d in t["delays"]),
         "spoofed: not the crawler" if t["identity"] == "spoofed" else promise[t["honours"]],
         t["requests"], t["violations"], t["smallest_gap"])
        for t in totals[:TOP_ROWS]
    ]
    chart = charts.gaps_against_delay(
        "Smallest gap between requests against the Crawl-delay",
        [(f"{t['crawler']} ({t['identity']}) {t['host']}", max(t["delays"]), t["smallest_gap"]) for t in totals[:TOP_CRAWLERS]],
    )
    return _section(
        "crawl-delay",
        "Per crawler, identity and host with a Crawl-delay: a request that followed the previous one"
        " sooner than the delay is a violation. A filled bar shorter than its outline broke the delay.",
        chart,
        _more(len(totals), TOP_ROWS, "rows, those with fewer violations"),
        _table(("crawler", "identity", "host", "delay", "operator", "requests", "violations", "smallest gap (s)"),
               rows, 5, "crawl-delay-table"),
    )


def _robots_versions(data: ReportData) -> str:
    by_host = data.versions_by_host(TOP_HOSTS)
    if not by_host:
        return _section("robots-versions", "No robots.txt history was recorded with this run.")
    last_seen = max((hour for counts in data.timeline.values() for hour in counts), default=None)
    parts = [_more(len({row["host"] for row in data.robots_versions}), TOP_HOSTS, "hosts, those with fewer requests")]
    for host, versions in by_host.items():
        end = max(filter(None, [shifted(versions[-1]["effective_from"], timedelta(days=1)),
                                 shifted(last_seen, timedelta(hours=1)) if last_seen else None]))
        strip = charts.version_strip(
            f"robots.txt versions of {host}", versions[0]["effective_from"], end,
            [(v["effective_from"], f"status {v['status']}", _version_colour(versions, i)) for i, v in enumerate(versions)],
        )
        table = _table(
            ("from", "status", "sha256", "bytes"),
            [(v["effective_from"], v["status"], (v["sha256"] or "-")[:16], None if v["body"] is None else len(v["body"].encode("utf-8")))
             for v in versions],
            3,
        )
        parts += [f"<h3>{escape(host)}</h3>", strip, table]
        parts += _changes(versions)
    return _section(
        "robots-versions",
        "Each host's robots.txt versions on a time line, numbered (greens: parsed, a new shade for"
        " each new version; blue: unavailable so all allowed; red: server error so all disallowed), and each body's changes from the body before it.",
        *parts,
    )


_NO_FETCH_SEEN = (
    "Crawlers with requests but no robots.txt fetch seen in these logs: the fixed cache grace was"
    " assumed for them. That need not mean they never read it: a CDN or cache in front of the site"
    " may answer /robots.txt at the edge, and the origin's logs never see it."
)


def _robots_readers(data: ReportData) -> str:
    found = robots_readers.readers(data.robots_fetches)
    # Automated clients are not expected to read robots.txt; their section says how robots.txt judged them.
    unread = robots_readers.unread_by(_of_kind(data.summary.rows, "crawler"), data.robots_fetches)
    parts = []
    if found:
        parts.append(_table(
            ("host", "fetch family", "identity", "crawlers", "statuses", "versions seen", "fetches", "median interval",
             "longest interval"),
            [(r.host, r.family, r.identity, list(r.crawlers),
              [f"{status}: {n:,}" for status, n in sorted(r.statuses.items())], list(r.versions), len(r.times),
              _span(r.median_interval), _span(r.longest_interval))
             for r in found[:TOP_ROWS]],
            6, "robots-readers-table",
        ))
        parts.append(_more(len(found), TOP_ROWS, "readers"))
        parts += _first_reads(data, found)
    if unread:
        parts.append(f'<h3>No robots.txt fetch seen</h3><p class="note">{escape(_NO_FETCH_SEEN)}</p>')
        parts.append(_table(
            ("crawler", "identity", "requests"),
            [(row["crawler"], row["identity"], row["requests"]) for row in unread[:TOP_ROWS]],
            2, "robots-unread-table",
        ))
    if not parts:
        return _section("robots-readers", "No crawler requests, and no request for robots.txt.")
    return _section(
        "robots-readers",
        "Each crawler's own requests for /robots.txt in these logs, per host, fetch family and identity"
        " (a spoofed crawler's fetches are its own): what they got, which versions they were served and"
        " how often they came back. Verdicts are judged by what the crawler last fetched.",
        *parts,
    )


def _first_reads(data: ReportData, found) -> list[str]:
    """Per host with changes: a time line of its readers' fetches, and how long after each change
    each came back."""
    reads = robots_readers.first_reads(data.robots_versions, found)
    parts = []
    for host in sorted({read.host for read in reads})[:TOP_HOSTS]:
        of_host = [read for read in reads if read.host == host]
        changes = sorted({read.changed_at for read in of_host})
        readers_of_host = [r for r in found if r.host == host][:TOP_CRAWLERS]
        moments = changes + [ts for r in readers_of_host for ts in r.times]
        firsts = {(id(read.reader), read.first_fetch) for read in of_host if read.first_fetch is not None}
        rows = [
            (f"{r.family} ({r.identity})", r.times, [ts for ts in r.times if (id(r), ts) in firsts])
            for r in readers_of_host
        ]
        parts.append(f"<h3>{escape(host)}: first fetch after each change</h3>")
        parts.append(charts.fetch_timeline(
            f"robots.txt fetches on {host}", min(moments), max(moments), changes, rows,
        ))
        parts.append(_table(
            ("changed at", "fetch family", "identity", "first fetch after", "after"),
            [(read.changed_at, read.reader.family, read.reader.identity, read.first_fetch or "none seen",
              _span(read.after)) for read in of_host[:TOP_ROWS]],
            3,
        ))
    return parts


def _span(span: timedelta | None) -> str | None:
    if span is None:
        return None
    seconds = int(span.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {seconds:02d}s"


def _version_colour(versions: Sequence[dict], index: int) -> str:
    """A parsed version's green differs from the parsed version's before it."""
    kind = versions[index]["kind"]
    if kind != "ok":
        return _STATUS_COLOURS[kind]
    parsed_before = sum(1 for v in versions[:index] if v["kind"] == "ok")
    return _OK_GREENS[parsed_before % len(_OK_GREENS)]


_UNPARSED = {
    "unavailable": "not parsed: everything allowed",
    "error": "not parsed: everything disallowed, until the error has lasted the error limit",
}


def _changes(versions: Sequence[dict]) -> list[str]:
    """Per version what it changed: a status note, the first body whole, or a line diff from the
    last parsed body (a status change in between is not a change of rules)."""
    parts = []
    last = None
    for version in versions:
        title = f"{version['effective_from']:%Y-%m-%d %H:%M} UTC, status {version['status']}"
        if version["kind"] != "ok":
            parts.append(f"<p><strong>{escape(title)}</strong>: {_UNPARSED[version['kind']]}.</p>")
            continue
        if last is None:
            lines = version["body"].splitlines()
            parts.append(f"<h4>{escape(title)}: the first body</h4>" + _pre(lines, diff=False))
        elif last["sha256"] == version["sha256"]:
            parts.append(f"<p><strong>{escape(title)}</strong>: the same body as {last['effective_from']:%Y-%m-%d %H:%M} UTC.</p>")
        else:
            parts.append(f"<h4>{escape(title)}: changes from {last['effective_from']:%Y-%m-%d %H:%M} UTC</h4>" + _diff(last, version))
        last = version
    return parts


def _diff(previous: dict, current: dict) -> str:
    lines = list(difflib.unified_diff(previous["body"].splitlines(), current["body"].splitlines(), lineterm="", n=2))
    if not lines:
        return "<p>The bodies differ only in bytes a line diff does not show (line endings, a byte order mark).</p>"
    return _pre(lines[2:], diff=True)


def _pre(lines: Sequence[str], diff: bool) -> str:
    """Lines in a <pre>, a diff's marked by kind, at most MAX_DIFF_LINES of them."""
    shown = []
    for line in lines[:MAX_DIFF_LINES]:
        cls = "" if not diff else "hunk" if line.startswith("@@") else "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        shown.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line) + "\n")
    cut = f"... {len(lines) - MAX_DIFF_LINES:,} more lines" if len(lines) > MAX_DIFF_LINES else ""
    return f'<pre class="diff">{"".join(shown)}{escape(cut)}</pre>'


def _indexing(data: ReportData) -> str:
    findings = data.summary.indexing_findings
    if not findings:
        return _section("indexing", "No indexing findings: no page directive was left unseen or outlived.")
    titles = {
        "noindex-unseen": "Disallowed yet relying on noindex (a compliant crawler never sees the noindex)",
        "crawled-after-unavailable": "Crawled after unavailable_after had passed",
    }
    parts = []
    for finding, title in titles.items():
        rows = sorted(
            (r for r in findings if r["finding"] == finding),
            key=lambda r: (-r["requests"], r["path"], r["host"] or "", r["crawler"] or ""),
        )
        if rows:
            parts.append(f"<h3>{escape(title)}: {len(rows):,} pages</h3>")
            parts.append(_table(("host", "path", "crawler", "requests"),
                                [(r["host"], r["path"], r["crawler"], r["requests"]) for r in rows[:TOP_CRAWLERS]], 3))
    return _section("indexing", "Page-level directives (X-Robots-Tag, meta robots) and crawling in conflict.", *parts)


def _whatif(digest: dict) -> str:
    flipped = digest["flipped"]
    span = f", requests from {digest['from'] or 'the start'} to {digest['to'] or 'the end'}" if digest["from"] or digest["to"] else ""
    totals = _table(
        ("requests", "count"),
        [
            ("decided again", digest["requests"]),
            ("unchanged", digest["unchanged"]),
            ("allowed -> disallowed", flipped["allowed-to-disallowed"]),
            ("disallowed -> allowed", flipped["disallowed-to-allowed"]),
            ("no version then, proposal allows", digest["unknown_now_allowed"]),
            ("no version then, proposal disallows", digest["unknown_now_disallowed"]),
        ],
        1,
        "whatif-table",
    )
    parts = [totals]
    conflicts = digest.get("preference_conflicts")
    if conflicts and conflicts["rows"]:
        parts.append(
            f"<h3>Preference conflicts: {conflicts['created']:,} created, {conflicts['removed']:,} removed</h3>"
            '<p class="note">Usage preferences of the proposal that the crawlers\' purposes would go against'
            " (or no longer), apart from access.</p>"
        )
        parts.append(_table(
            ("change", "crawler", "identity", "purpose: preference", "requests"),
            [(r["change"], r["crawler"] or "(undeclared)", r["identity"], r["conflict"], r["requests"]) for r in conflicts["rows"]],
            4,
            "whatif-conflicts-table",
        ))
    if digest.get("by_purpose"):
        parts.append("<h3>Flips by purpose</h3>")
        parts.append(_table(
            ("purpose", "allowed -> disallowed", "disallowed -> allowed"),
            [(p, c["allowed-to-disallowed"], c["disallowed-to-allowed"]) for p, c in digest["by_purpose"].items()],
            1,
            "whatif-purpose-table",
        ))
    for crawler in digest["crawlers"]:
        name = f"{crawler['crawler'] or '(undeclared)'} ({crawler['identity']})"
        for change, words in (("allowed-to-disallowed", "allowed -> disallowed"), ("disallowed-to-allowed", "disallowed -> allowed")):
            flips = crawler["top"][change]
            if flips:
                parts.append(f"<h3>{escape(name)}: {crawler['requests'][change]:,} {words}</h3>")
                parts.append(_table(("path", "proposal's rule", "requests"),
                                    [(f["path"], whatif.flip_rule_text(f), f["requests"]) for f in flips], 2))
    return _section(
        "whatif",
        f"Past requests to {escape(digest['host'])} decided again as if {escape(digest['proposal'])}"
        f" (sha256 {escape(digest['proposal_sha256'][:16])}) had been the robots.txt in effect{escape(span)}.",
        *parts,
    )
