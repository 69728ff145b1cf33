"""Reader of the page-directives table (DESIGN §8).

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

import json

from apache_beam.io.filesystems import FileSystems

from matcher.directives import PageDirectives, PageDirectivesError, page_directives_from_row


def read_page_directives(location: str) -> list[PageDirectives]:
    """All rows of the table at `location` (a local path or any Beam filesystem URL)."""
    try:
        with FileSystems.open(location) as handle:
            text = handle.read().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise PageDirectivesError(f"cannot read page-directives table {location}: {error}") from error
    rows = []
    # Split on newlines only: JSON strings may hold U+2028 and other breaks str.splitlines cuts at.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise PageDirectivesError("a row must be a JSON object")
            rows.append(page_directives_from_row(row))
        except (ValueError, RecursionError) as error:
            raise PageDirectivesError(f"{location}:{number}: {error}") from error
    return rows
