"""Reader of the page-directives table (docs/semantics.md § Page directives).

JSON Lines, one row per page version:
`{"host", "path", "effective_from", "x_robots_tag": [header values],
"meta_robots": [{"name", "content"}]}`. Blank lines are skipped; gzip and bz2 files are
read as they are.

Like the robots table, a malformed table is the site owner's configuration, not
traffic: it stops the run with one message naming the file and row. Directives that
are merely unusable (an unknown name, a bad date) are not structural errors; they stay
in each row's `directives.lint`.
"""
from __future__ import annotations

from matcher.directives import PageDirectives, PageDirectivesError, page_directives_from_row
from pipeline.json_table import read_json_table


def read_page_directives(location: str) -> list[PageDirectives]:
    """All rows of the table at `location` (a local path or any Beam filesystem URL)."""
    return read_json_table("page-directives table", location, page_directives_from_row, PageDirectivesError)
