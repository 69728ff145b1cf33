"""Caches whose keys come from log lines, so from anyone, or that live as long as a streaming
job: they must not grow without bound. Two policies, for two kinds of use."""
from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["BoundedCache", "Lru"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(dict[K, V]):
    """A dict that empties itself instead of growing past `limit` entries.

    Lookups stay plain dict lookups (the hot path); only an insertion checks the size. Emptying
    rather than evicting one entry is right for what is kept here: values cheap to rebuild,
    where a workload that keeps missing pays a rebuild per miss either way.
    """

    def __init__(self, limit: int, longest_key: int | None = None, key_chars: int | None = None):
        super().__init__()
        if limit < 1:
            raise ValueError(f"a cache needs room for one entry, got limit {limit}")
        self.limit = limit
        # Bounds on the text of the keys, so that the cache's bytes are bounded too, however long
        # what a log line says: a key longer than `longest_key` is not remembered, and the cache
        # empties before its keys would hold more than `key_chars` characters in all.
        self.longest_key = longest_key
        self.key_chars = key_chars
        self._chars = 0

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self:
            length = _key_text_length(key)
            if self.longest_key is not None and length > self.longest_key:
                return
            if len(self) >= self.limit or (self.key_chars is not None and self._chars + length > self.key_chars):
                self.clear()
            self._chars += length
        super().__setitem__(key, value)

    def clear(self) -> None:
        super().clear()
        self._chars = 0

    def __reduce__(self):
        # Shipped to a worker empty: what a cache holds is rebuilt where it is used.
        return type(self), (self.limit, self.longest_key, self.key_chars)


def _key_text_length(key: object) -> int:
    """The characters of text a key holds: a string's, or the sum of a tuple's strings."""
    if isinstance(key, str):
        return len(key)
    if isinstance(key, tuple):
        return sum(len(part) for part in key if isinstance(part, str))
    return 0


class Lru(Generic[K, V]):
    """At most `capacity` entries; reading or writing an entry makes it the most recent."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an LRU cache holds at least one entry, not {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
