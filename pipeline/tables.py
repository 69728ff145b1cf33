"""Reading back the tables a finished run wrote, JSON Lines or Parquet alike."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from datetime import datetime

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

# Parquet is read a slice at a time so that a run's verdicts never have to fit in memory.
_BATCH_ROWS = 65_536


def rows(folder: str, columns: Sequence[str] | None = None) -> Iterator[dict]:
    """Every row of the table in `folder`, one at a time; `columns` limits a Parquet read to
    those columns (JSON Lines rows come whole)."""
    for path in _parts(folder, "jsonl"):
        with FileSystems.open(path) as handle:
            # Only "\n" ends a row: JSON strings may hold U+2028 and other breaks.
            for line in io.TextIOWrapper(handle, encoding="utf-8", newline="\n"):
                if line.strip():
                    yield json.loads(line)
    for path in _parts(folder, "parquet"):
        with FileSystems.open(path) as handle:
            for batch in pq.ParquetFile(handle).iter_batches(_BATCH_ROWS, columns=columns):
                yield from batch.to_pylist()


def _parts(folder: str, extension: str) -> list[str]:
    matched = FileSystems.match([FileSystems.join(folder, f"part*.{extension}")])[0].metadata_list
    return sorted(match.path for match in matched)


def moment(value: datetime | str | None) -> datetime | None:
    """A timestamp column's value as a datetime: Parquet gives one, JSON Lines its RFC 3339 text."""
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
