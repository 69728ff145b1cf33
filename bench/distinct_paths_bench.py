"""Memory of a run whose crawler requests all go to distinct disallowed paths, and of its report.

    python bench/distinct_paths_bench.py                         # 1M requests, 1M distinct paths
    python bench/distinct_paths_bench.py --requests 200000 --baseline ../crawl-audit-before

One Googlebot from a published Google address asks for N different paths under a `Disallow:`
rule, one line each, in one uncompressed `host_combined` file: the shape that grows whatever the
report keeps per distinct path (a scanner, a crawler trap, a faceted search). `crawl-audit run`
(local FnApiRunner, as README's local run) and then `crawl-audit report` run in a process of their
own each; the bench prints their wall time and peak RSS (`ru_maxrss` from wait4: the runner works
in that one process for a single file) and the size of `report_counts.json`, and fails (exit 1)
when the run does not give N disallowed verdicts or the report does not name the crawler's
distinct count. With `--baseline DIR` the same two commands run from the code of another checkout
(on PYTHONPATH, with this interpreter's packages), so before and after come from one machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
_MAIN = "import sys\nfrom pipeline.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"


def write_workload(folder: Path, requests: int) -> None:
    (folder / "robots.txt").write_text("User-agent: *\nDisallow: /search\n")
    row = {"host": "www.example.com", "effective_from": "2026-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"}
    (folder / "robots.jsonl").write_text(json.dumps(row) + "\n")
    with (folder / "access.log").open("w") as log:
        for n in range(requests):
            minute, second = divmod(n // 1000 % 3600, 60)
            log.write(
                f'www.example.com 66.249.66.1 - - [02/Nov/2026:10:{minute:02d}:{second:02d} +0000] '
                f'"GET /search?q={n:x} HTTP/1.1" 200 512 "-" "{GOOGLEBOT}"\n'
            )


def measured(argv: list[str], code: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of `crawl-audit ARGV` run from the code at `code`."""
    environment = {**os.environ, "PYTHONPATH": str(code)}
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-c", _MAIN, *argv], cwd=code, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[:1])} failed: {process.stderr.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def contestant(name: str, code: Path, work: Path, requests: int) -> bool:
    out = work / f"out-{name}"
    run = measured([
        "run", f"--logs={work / 'access.log'}", "--log-format=host_combined", f"--robots={work / 'robots.jsonl'}",
        f"--ranges={REPO / 'config' / 'ranges'}", f"--out={out}", "--overwrite", "--runner=FnApiRunner",
    ], code)
    report = measured(["report", str(out)], code)
    counts = json.loads((out / "counts.json").read_text())
    page = (out / "report.html").read_text()
    size = (out / "report_counts.json").stat().st_size
    print(f"{name:>9}  run {run[0]:6.1f} s {run[1]:7.0f} MiB   report {report[0]:5.1f} s {report[1]:7.0f} MiB"
          f"   report_counts.json {size / 1e6:8.2f} MB")
    return counts["verdicts"] == requests and f"{requests:,} distinct" in page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--baseline", type=Path, help="another checkout whose code to measure the same way")
    parser.add_argument("--work", type=Path, help="folder for the workload and the outputs (default: a temporary one)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="distinct-paths-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        write_workload(work, args.requests)
        print(f"{args.requests:,} requests to as many distinct disallowed paths")
        ok = contestant("this", REPO, work, args.requests)
        if args.baseline is not None:
            ok = contestant("baseline", args.baseline.resolve(), work, args.requests) and ok
        return 0 if ok else 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
