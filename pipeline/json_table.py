"""Reading the JSON Lines tables a site owner supplies (robots history, page directives)."""
from __future__ import annotations

import json
from typing import Callable, TypeVar

from apache_beam.io.filesystems import FileSystems

from pipeline.confined import NotReadable, require_regular

Row = TypeVar("Row")


def read_json_table(
    name: str, location: str, to_row: Callable[[dict], Row], error: type[ValueError]
) -> list[Row]:
    """`to_row` of every non-blank line of the table at `location` (a path or any Beam filesystem
    URL; gzip and bz2 read as they are).

    A table is configuration, not traffic: the first bad row stops the run with `error`, whose
    message names the file and row.
    """
    return [row for _, row in read_json_rows(name, location, to_row, error)]


def read_json_rows(
    name: str, location: str, to_row: Callable[[dict], Row], error: type[ValueError]
) -> list[tuple[int, Row]]:
    """Like `read_json_table`, each row with its line number."""
    try:
        require_regular(location)
        with FileSystems.open(location) as handle:
            text = handle.read().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, NotReadable) as cause:
        raise error(f"cannot read {name} {location}: {cause}") from cause
    rows = []
    # Split on newlines only: JSON strings may hold U+2028 and other breaks str.splitlines cuts at.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise error("a row must be a JSON object")
            # A lone surrogate ("\ud800") decodes but can never be written out again.
            json.dumps(row, ensure_ascii=False).encode("utf-8")
            rows.append((number, to_row(row)))
        except RecursionError:
            raise error(f"{location}:{number}: nested too deeply") from None
        except (ValueError, OSError) as cause:
            raise error(f"{location}:{number}: {cause}") from cause
    return rows
