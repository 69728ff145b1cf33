"""Keys of rows, column by column: the distinct values of a column, the distinct tuples of several
columns of codes, and the rows of each; what lets a rule run once per distinct key."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

__all__ = ["distinct", "groups", "row_keys"]


def distinct(texts: pa.Array) -> tuple[list, np.ndarray]:
    """The distinct values of `texts` and, per row, the index of its value."""
    encoded = texts.dictionary_encode()
    return encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def row_keys(*parts: np.ndarray) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The distinct tuples of `parts` taken row by row, and per row the index of its tuple."""
    if not len(parts[0]):
        return [], np.zeros(0, np.int64)
    columns = [np.asarray(part, np.int64) for part in parts]
    combined = np.zeros(len(columns[0]), np.int64)
    for column in columns:
        low = column.min()
        # renumbered densely after each part, so the product stays below the number of rows squared
        _, combined = np.unique(combined * (column.max() - low + 1) + (column - low), return_inverse=True)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    firsts = np.stack([column[first] for column in columns], axis=1)
    return [tuple(row) for row in firsts.tolist()], inverse.reshape(-1).astype(np.int64)


def groups(ids: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(id, the rows holding it) for each id present in `ids`."""
    order = np.argsort(ids, kind="stable")
    present, starts = np.unique(ids[order], return_index=True)
    for value, start, end in zip(present.tolist(), starts.tolist(), [*starts[1:].tolist(), len(ids)]):
        yield value, order[start:end]
