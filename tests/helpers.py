"""What many tests build or read the same way: crawler User-Agents, `host_combined` log lines,
JSON Lines tables, range snapshots, the part files of a finished run, and where the shared
conformance data and corpus live."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
BINGBOT_IP = "157.55.39.10"  # in 157.55.39.0/24, one of the ranges published for bingbot


def log_line(
    host: str, when: datetime | str, path: str, user_agent: str, *, ip: str = BINGBOT_IP, status: int = 200,
    size: int = 512,
) -> str:
    """One GET in the `host_combined` format; `when` an aware datetime or the log's own time text."""
    stamp = when if isinstance(when, str) else when.strftime("%d/%b/%Y:%H:%M:%S %z")
    return f'{host} {ip} - - [{stamp}] "GET {path} HTTP/1.1" {status} {size} "-" "{user_agent}"'


def write_jsonl(path: Path, rows: Iterable[dict]) -> Path:
    """A JSON Lines table (robots history, page directives...): one object per line."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# A JSON Lines access log of tests' own: these keys name the fields (`--field-map`).
JSONL_LOG_FIELDS = {"ts": "ts", "client_ip": "ip", "host": "host", "method": "method", "target": "target",
                    "status": "status", "user_agent": "ua"}


def jsonl_log_run(folder: Path, requests: Iterable[dict], *extra: str) -> list[str]:
    """The argv of a local run over `requests` (each with the keys of `JSONL_LOG_FIELDS`) written
    as FOLDER/access.jsonl, with FOLDER/robots.jsonl as history and the sample's ranges, into
    FOLDER/out."""
    write_jsonl(folder / "access.jsonl", requests)
    return [
        f"--logs={folder / 'access.jsonl'}", "--log-format=jsonl", f"--field-map={json.dumps(JSONL_LOG_FIELDS)}",
        f"--robots={folder / 'robots.jsonl'}", f"--ranges={REPO / 'samples/ranges'}",
        f"--out={folder / 'out'}", "--runner=FnApiRunner", *extra,
    ]


def read_jsonl(folder: Path, pattern: str = "part*.jsonl") -> list[dict]:
    """Every row of the JSON Lines files of `folder` matching `pattern`, the files in name order."""
    return [json.loads(line) for part in sorted(folder.glob(pattern)) for line in part.read_text().splitlines()]


def write_range_snapshot(ranges: Path, source: str, day: str, *prefixes: str, **fields: str) -> Path:
    """`ranges/source/day.json`: a published IP-range document holding these IPv4 prefixes."""
    folder = ranges / source
    folder.mkdir(parents=True, exist_ok=True)
    document = {**fields, "prefixes": [{"ipv4Prefix": prefix} for prefix in prefixes]}
    snapshot = folder / f"{day}.json"
    snapshot.write_text(json.dumps(document))
    return snapshot


def git_in(repo: Path, *args: str, when: str = "2026-01-01T00:00:00Z") -> str:
    """`git ARGS` in `repo` with fixed names and `when` as author and committer date, no user config."""
    env = {
        **os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_NAME": "Site Owner", "GIT_AUTHOR_EMAIL": "owner@site.example",
        "GIT_COMMITTER_NAME": "Site Owner", "GIT_COMMITTER_EMAIL": "owner@site.example",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
    }
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True).stdout


def git_commit(repo: Path, when: str, files: dict[str, bytes | None]) -> str:
    """Commit `files` (None: removed) at `when`; the new commit's id."""
    for name, content in files.items():
        path = repo / name
        if content is None:
            git_in(repo, "rm", "-q", name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            git_in(repo, "add", name)
    git_in(repo, "commit", "-q", "-m", f"change at {when}", when=when)
    return git_in(repo, "rev-parse", "HEAD").strip()


def shared_path(*parts: str) -> Path:
    """Path under the shared folder; skip when absent, fail when CI promised it.

    `CRAWL_AUDIT_SHARED` names the folder; without it `../shared` beside the
    checkout is tried, and a missing file only skips (a user's machine).
    """
    configured = os.environ.get("CRAWL_AUDIT_SHARED")
    root = Path(configured) if configured else REPO.parent / "shared"
    if not root.is_absolute():
        root = (REPO / root).resolve()
    path = root.joinpath(*parts)
    if not path.exists():
        message = f"shared data not found: {path}"
        if configured:
            pytest.fail(message + " (CRAWL_AUDIT_SHARED is set, so it must exist)")
        pytest.skip(message + " (set CRAWL_AUDIT_SHARED to run these tests)")
    return path


def crawl_audit(argv: Iterable[str]) -> int:
    """`crawl-audit ARGV` as the command line runs it; its exit status."""
    from pipeline.cli.main import main

    return main(list(argv))


def run_audit(argv: Iterable[str]) -> int:
    """`crawl-audit run ARGV` as the command line runs it; its exit status."""
    return crawl_audit(["run", *argv])


def run_settings(argv: Iterable[str]):
    """The settings and Beam options of `crawl-audit run ARGV`."""
    from pipeline.cli.parser import settings_of

    return settings_of(list(argv))


def stream_graph(argv: Iterable[str]):
    """The pipeline `crawl-audit run ARGV` builds, with the sinks of a stream, not yet run."""
    from pipeline.graph import build

    return build.streaming_pipeline(*run_settings(argv))


def printed_by(out: Path) -> str:
    """What the run into OUT printed, as the sample fixtures of `conftest.py` keep it."""
    return out.with_name(out.name + ".stdout").read_text(encoding="utf-8")


def sample_slice(folder: Path, share: int = 4) -> Path:
    """FOLDER holding the bundled sample's log files cut to the first 1/SHARE of their lines each:
    every kind of decision, fetch and Crawl-delay violation the sample has, for the tests whose
    runner takes long over each line (a stream on a job service)."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    for log in sorted((REPO / "samples" / "logs").glob("*.log.gz")):
        lines = gzip.decompress(log.read_bytes()).splitlines(keepends=True)
        (folder / log.name).write_bytes(gzip.compress(b"".join(lines[: len(lines) // share]), mtime=0))
    return folder


def verdict_block(verdicts: Iterable[dict]):
    """Verdicts (any of their columns; the others null) as the Arrow table a batch run's steps pass on."""
    import pyarrow as pa

    from matcher import records
    from pipeline.tables.schema import arrow_schema

    names = [column.name for column in records.VERDICTS]
    shape = records.shaper(records.VERDICTS)
    return pa.Table.from_pylist(
        [shape({name: verdict.get(name) for name in names}) for verdict in verdicts], schema=arrow_schema(records.VERDICTS)
    )
