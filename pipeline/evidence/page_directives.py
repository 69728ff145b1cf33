"""Reader of the page-directives table (docs/semantics.md § Page directives).

JSON Lines, one row per page version:
`{"host", "path", "effective_from", "x_robots_tag": [header values],
"meta_robots": [{"name", "content"}]}`. Blank lines are skipped; gzip and bz2 files are
read as they are.

Like the robots table, a malformed table is the site owner's configuration, not
traffic: it stops the run with one message naming the file and row. Directives that
are merely unusable (an unknown name, a bad date) are not structural errors: the run goes
on without them, and says so on stderr at launch, with file, row and the text at fault.
"""
from __future__ import annotations

import sys

from matcher.directives import PageDirectives, PageDirectivesError, page_directives_from_row
from pipeline.evidence.json_table import json_rows, problem_list
from matcher.printable import printable


def read_page_directives(location: str) -> list[PageDirectives]:
    """All rows of the table at `location` (a local path or any Beam filesystem URL)."""
    name = "page-directives table"
    numbered, problems = json_rows(name, location, page_directives_from_row, PageDirectivesError)
    if problems:
        raise PageDirectivesError(problem_list(name, location, problems))
    for number, row in numbered:
        for lint in row.directives.lint:
            message = f"{location}:{number}: {lint.source} {lint.raw!r}: {lint.message}"
            print(f"crawl-audit: page directives: {printable(message)}", file=sys.stderr)
    return [row for _, row in numbered]
