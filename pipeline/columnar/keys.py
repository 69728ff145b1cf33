"""Keys of rows, column by column: the distinct values of a column, the distinct tuples of several
columns of codes, and the rows of each; what lets a rule run once per distinct key."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["codes", "distinct", "groups", "joined_items", "row_keys"]

# The lists of the verdict columns hold registry words and labels, which no control character is
# part of: one joins a list's items into one text that keys the list.
_ITEM_SEPARATOR = "\x1f"


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


def joined_items(lists: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Each list of texts as one text: two lists of non-empty texts give the same one exactly when
    they are equal."""
    return pc.binary_join(lists, _ITEM_SEPARATOR)


def codes(column: pa.ChunkedArray) -> np.ndarray:
    """A code per row that two rows share exactly when their values are equal (nulls alike)."""
    values = column.combine_chunks()
    if pa.types.is_list(values.type):
        values = joined_items(values)
    return pc.fill_null(values.dictionary_encode().indices, -1).to_numpy(zero_copy_only=False)
