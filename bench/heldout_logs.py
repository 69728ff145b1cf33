"""Held-out access logs: how many request lines `--log-format auto` reads, against GoAccess.

    python bench/heldout_logs.py /tmp/heldout                       # bench/heldout_manifest.json
    python bench/heldout_logs.py /tmp/heldout --manifest other.json --no-goaccess

The folder holds log files this project never looked at while writing its parsers (bench/README.md
says where each comes from); the manifest gives, per file name, how many of its lines carry an HTTP
request (counted by hand) and the GoAccess format that reads it: a predefined name (`COMBINED`,
`W3C`, `AWSELB`, ...) or `{"log_format": ..., "date_format": ..., "time_format": ...}`.

Per file: its lines, the format `auto` chose (the detector a batch run calls at launch, on the
file's first lines; none when it reads too few of them, and the run refuses the file), the request
records that format's parser makes of the whole file, GoAccess's `valid_requests`, and whether
both goals hold: at least as many requests as GoAccess, and at least 95% of the request lines.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SHARE = 0.95


@dataclass(frozen=True)
class Outcome:
    name: str
    lines: int
    requests: int
    chosen: str | None
    read: int
    goaccess: int | None

    @property
    def passes(self) -> bool:
        return self.read >= (self.goaccess or 0) and self.read >= SHARE * self.requests


def crawl_audit_reads(path: Path) -> tuple[str | None, int]:
    """The format `auto` picks for the file and the request records its parser makes of every line."""
    from matcher.logformats import LogParseError, parser_for
    from matcher.logformats.detect import chosen_format, rank_formats

    raw = path.read_bytes().splitlines()
    chosen = chosen_format(rank_formats(raw))
    if chosen is None:
        return None, 0
    parse = parser_for(chosen.name)
    read = 0
    for line in raw:
        try:
            parse(line.decode("utf-8", "backslashreplace"))
        except LogParseError:
            continue
        read += 1
    return chosen.name, read


def goaccess_reads(path: Path, spec: str | dict) -> int:
    """GoAccess's count of valid requests in the file, read with the format `spec`."""
    given = {"log_format": spec} if isinstance(spec, str) else spec
    options = [f"--{key.replace('_', '-')}={value}" for key, value in given.items()]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run(["goaccess", str(path), "--no-global-config", *options, "-o", str(report)],
                       capture_output=True, timeout=120)
        if not report.exists():  # GoAccess stops when it reads none of the first lines
            return 0
        return int(json.loads(report.read_text())["general"]["valid_requests"])


def measure(folder: Path, manifest: dict, with_goaccess: bool) -> list[Outcome]:
    outcomes = []
    for name, entry in sorted(manifest.items()):
        path = folder / name
        if not path.exists():
            print(f"{name}: not in {folder}, skipped", file=sys.stderr)
            continue
        lines = sum(1 for line in path.read_bytes().splitlines() if line.strip())
        chosen, read = crawl_audit_reads(path)
        goaccess = goaccess_reads(path, entry["goaccess"]) if with_goaccess else None
        outcomes.append(Outcome(name, lines, entry["requests"], chosen, read, goaccess))
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--manifest", type=Path, default=Path(__file__).with_name("heldout_manifest.json"))
    parser.add_argument("--no-goaccess", action="store_true", help="crawl-audit's side only")
    args = parser.parse_args(argv)
    with_goaccess = not args.no_goaccess
    if with_goaccess and shutil.which("goaccess") is None:
        parser.error("goaccess is not installed (or give --no-goaccess)")
    files = json.loads(args.manifest.read_text())["files"]
    outcomes = measure(args.folder, files, with_goaccess)
    print(f"{'file':<34} {'lines':>5} {'requests':>8} {'auto chose':<16} {'read':>5} {'goaccess':>8}  goals")
    for o in outcomes:
        goaccess = "-" if o.goaccess is None else str(o.goaccess)
        print(f"{o.name:<34} {o.lines:>5} {o.requests:>8} {o.chosen or '(refused)':<16} {o.read:>5} {goaccess:>8}  "
              f"{'pass' if o.passes else 'FAIL'}")
    passed = sum(o.passes for o in outcomes)
    print(f"{passed} of {len(outcomes)} files meet both goals; "
          f"{sum(o.read for o in outcomes)} of {sum(o.requests for o in outcomes)} request lines read"
          + ("" if not with_goaccess else f", GoAccess {sum(o.goaccess or 0 for o in outcomes)}"))
    return 0 if passed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
