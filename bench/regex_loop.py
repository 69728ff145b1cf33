"""The floor of any audit in Python: one compiled vhost_combined regex matched against every line.

    python bench/regex_loop.py 'W/logs/web-*'        # prints {"lines": N, "matched": M}

Standard library only, so that start-up costs what a bare script costs; `pipeline_bench.py`
measures it beside GoAccess and `crawl-audit run` on the same files.
"""
from __future__ import annotations

import glob
import gzip
import json
import re
import sys
from typing import Sequence

# A quoted field with backslash escapes, written as runs of plain characters between escapes: about
# three times faster than an alternation tried at every character, and the floor should be fast.
_QUOTED = r'"([^"\\]*(?:\\.[^"\\]*)*)"'
# Apache's `%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"`.
VHOST_COMBINED = re.compile(
    rf'(\S+) (\S+) (\S+) (\S+) \[([^\]]+)\] {_QUOTED} (\d{{3}}) (\d+|-) {_QUOTED} {_QUOTED}'
)


def regex_loop(pattern: str) -> dict:
    """Lines of the files matching `pattern`, and how many of them VHOST_COMBINED matches."""
    lines = matched = 0
    match = VHOST_COMBINED.match
    for path in sorted(glob.glob(pattern)):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="backslashreplace") as handle:
            for line in handle:
                lines += 1
                if match(line) is not None:
                    matched += 1
    return {"lines": lines, "matched": matched}


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1:
        raise SystemExit("usage: regex_loop.py GLOB")
    print(json.dumps(regex_loop(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
