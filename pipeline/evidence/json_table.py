"""Reading the JSON Lines tables a site owner supplies (robots history, page directives)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Callable, TypeVar


from pipeline.evidence.confined import NotReadable, read_location

Row = TypeVar("Row")

# Problems one error lists in full; a table of nothing but bad rows is likely the wrong file.
_LISTED = 20


def read_json_table(
    name: str, location: str, to_row: Callable[[dict], Row], error: type[ValueError]
) -> list[Row]:
    """`to_row` of every non-blank line of the table at `location` (a path or any Beam filesystem
    URL; gzip and bz2 read as they are).

    A table is configuration, not traffic: bad rows stop the run with one `error` that names
    the file and row of each.
    """
    rows, problems = json_rows(name, location, to_row, error)
    if problems:
        raise error(problem_list(name, location, problems))
    return [row for _, row in rows]


def json_rows(
    name: str, location: str, to_row: Callable[[dict], Row], error: type[ValueError]
) -> tuple[list[tuple[int, Row]], list[str]]:
    """Each good row with its line number, and a `location:line: reason` for each bad one; a
    table that cannot be read at all raises `error`."""
    try:
        text = read_location(location).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, NotReadable) as cause:
        raise error(f"cannot read {name} {location}: {cause}") from cause
    rows, problems = [], []
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
            problems.append(f"{location}:{number}: nested too deeply")
        except (ValueError, OSError) as cause:
            problems.append(f"{location}:{number}: {cause}")
    return rows, problems


def problem_list(name: str, location: str, problems: Sequence[str]) -> str:
    """One problem as it is; several as a heading and one line each."""
    if len(problems) == 1:
        return problems[0]
    more = len(problems) - _LISTED
    return "\n".join((
        f"{len(problems)} problems in the {name} {location}:",
        *(f"  {problem}" for problem in problems[:_LISTED]),
        *([f"  ... and {more} more"] if more > 0 else []),
    ))
