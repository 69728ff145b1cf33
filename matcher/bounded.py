"""A cache whose keys come from log lines, so from anyone: it must not grow without bound."""
from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(dict[K, V]):
    """A dict that empties itself instead of growing past `limit` entries.

    Lookups stay plain dict lookups (the hot path); only an insertion checks the size. Emptying
    rather than evicting one entry is right for what is kept here: values cheap to rebuild,
    where a workload that keeps missing pays a rebuild per miss either way.
    """

    def __init__(self, limit: int):
        super().__init__()
        if limit < 1:
            raise ValueError(f"a cache needs room for one entry, got limit {limit}")
        self.limit = limit

    def __setitem__(self, key: K, value: V) -> None:
        if len(self) >= self.limit and key not in self:
            self.clear()
        super().__setitem__(key, value)

    def __reduce__(self):
        # Shipped to a worker empty: what a cache holds is rebuilt where it is used.
        return type(self), (self.limit,)
