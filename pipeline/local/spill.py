"""Grouping on disk, for a local batch run: `GroupByKey`'s contract, with the values through files.

A local runner holds a grouped collection whole in its own memory, and then in a worker's as it
hands it over, so a large run's crawl-delay packs grew the launching process with the log. So
`GroupOnDisk` has each bundle append its (key, value) records to one file per shard of the keys,
groups only the files' names, and reads one shard's files back at a time, yielding each of its
keys with its values. It takes KV[key, bytes] and gives (key, list of bytes), as `GroupByKey`
does; the folder must be on this machine, which every local worker shares.
"""
from __future__ import annotations

import os
import tempfile
import uuid
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

import apache_beam as beam
from apache_beam import coders
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindows

__all__ = ["SPILL_SHARDS", "GroupOnDisk", "SpillFn", "grouping_on_disk", "shard_of", "spilled_values"]

# Shards of the keys: a shard's values are what is held in memory at once, a 64th of all.
SPILL_SHARDS = 64
_RECORD_LENGTH = 4  # bytes of the length before each (key, value) record of a spilled file
_RECORDS = coders.FastPrimitivesCoder()


def shard_of(key) -> int:
    """The spill shard of a key, the same in every process (unlike `hash`, which is salted)."""
    return zlib.crc32(_RECORDS.encode(key)) % SPILL_SHARDS


class SpillFn(beam.DoFn):
    """(key, value) -> (shard, file) for each file a bundle wrote under `folder`: the bundle's
    records of that shard's keys, length-prefixed."""

    def __init__(self, folder: str):
        self._folder = folder
        self.spilled = Metrics.counter(self.__class__, "spilled_bytes")

    def start_bundle(self):
        self._files: dict[int, BinaryIO] = {}

    def process(self, element):
        record = _RECORDS.encode(element)
        shard = shard_of(element[0])
        spilled = self._files.get(shard)
        if spilled is None:
            name = f"{shard:02d}-{uuid.uuid4().hex}"
            spilled = self._files[shard] = open(os.path.join(self._folder, name), "wb")
        spilled.write(len(record).to_bytes(_RECORD_LENGTH, "big") + record)
        self.spilled.inc(_RECORD_LENGTH + len(record))

    def finish_bundle(self):
        for shard, spilled in self._files.items():
            spilled.close()
            yield GlobalWindows.windowed_value((shard, spilled.name))


def spilled_values(paths: Iterable[str]) -> dict:
    """The values of spilled files by key."""
    values: dict = {}
    for path in paths:
        with open(path, "rb") as spilled:
            while length := spilled.read(_RECORD_LENGTH):
                key, value = _RECORDS.decode(spilled.read(int.from_bytes(length, "big")))
                values.setdefault(key, []).append(value)
    return values


def _read_back(shard_files) -> Iterator[tuple]:
    """(shard, its files) -> (key, its values) for each key of the shard, handing each over as it
    goes so the shard is the most held at once."""
    _, paths = shard_files
    values = spilled_values(paths)
    while values:
        yield values.popitem()


class GroupOnDisk(beam.PTransform):
    """KV[key, bytes] -> (key, list of bytes), grouped through files under `folder`."""

    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder

    def expand(self, pairs):
        return (
            pairs
            | "SpillByShard" >> beam.ParDo(SpillFn(self.folder))
            | "GroupSpilledFiles" >> beam.GroupByKey()
            | "ReadBackByKey" >> beam.FlatMap(_read_back)
        )


@contextmanager
def grouping_on_disk(prefix: str = "crawl-audit-spill-") -> Iterator[GroupOnDisk]:
    """A `GroupOnDisk` in a temporary folder, removed with everything spilled into it on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield GroupOnDisk(folder)
