"""The robots.txt fetches an earlier run found (`--prior-run OUT`), so that a daily batch starts
from what each crawler held at the end of yesterday's logs."""
from __future__ import annotations

from pathlib import Path

from matcher.records import ROBOTS_FETCHES_TABLE
from matcher.robots_fetches import FetchKey, RobotsFetch, still_deciding
from pipeline.tables.reading import moment, rows
from pipeline.tables.run_folder import RunFolderError, read_manifest

__all__ = ["prior_fetches"]


def prior_fetches(out: str | Path) -> list[tuple[FetchKey, RobotsFetch]]:
    """The fetches of the run in `out` that still decide what a crawler held, each carried over
    with its key; RunFolderError for a folder that holds no complete run or no fetch table."""
    if ROBOTS_FETCHES_TABLE not in read_manifest(out)["tables"]:
        raise RunFolderError(f"--prior-run {out}: that run wrote no {ROBOTS_FETCHES_TABLE} table; audit its logs again with this version")
    # Only what decides each key's held copy is kept, so the memory is that of the keys, whatever
    # the number of rows: a run writes a key's rows together and in time order.
    carried: dict[FetchKey, tuple[RobotsFetch, ...]] = {}
    for row in rows(out, ROBOTS_FETCHES_TABLE):
        try:
            key = (row["host"], row["family"], row["identity"])
            fetch = RobotsFetch(moment(row["ts"]), row["status"], row["source"], row["crawler"], carried=True)
        except (KeyError, TypeError, ValueError) as error:
            raise RunFolderError(f"--prior-run {out}: unreadable {ROBOTS_FETCHES_TABLE} row: {error}") from None
        carried[key] = still_deciding(carried.get(key, ()), fetch)
    return [(key, fetch) for key, fetches in carried.items() for fetch in fetches]
