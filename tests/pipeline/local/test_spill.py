"""Grouping on disk keeps `GroupByKey`'s contract: every value comes back with its key, whichever
bundle or process wrote it, and the folder goes when the run is over."""
from __future__ import annotations

import pytest

import os
from collections import defaultdict

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from crawl_delay_reference import KEYS
from pipeline.local.spill import SpillFn, grouping_on_disk, shard_of, spilled_values


def test_spilled_values_come_back_by_key_whichever_bundle_wrote_them(tmp_path):
    fn = SpillFn(str(tmp_path))
    elements = [(key, f"pack {n} of {key}".encode()) for n in range(3) for key in KEYS]
    files = []
    for bundle in (elements[::2], elements[1::2]):
        fn.start_bundle()
        for element in bundle:
            fn.process(element)
        files += [windowed.value for windowed in fn.finish_bundle()]
    by_shard = defaultdict(list)
    for shard, path in files:
        by_shard[shard].append(path)
    assert len(files) == len(set(path for _, path in files)) == sum(map(len, by_shard.values()))
    released = {}
    for shard, paths in by_shard.items():
        values = spilled_values(paths)
        assert {shard_of(key) for key in values} == {shard}
        released.update(values)
    assert {key: sorted(values) for key, values in released.items()} == {
        key: sorted(value for k, value in elements if k == key) for key in KEYS
    }


@pytest.mark.slow
def test_grouping_on_disk_groups_as_group_by_key_does_and_removes_its_folder():
    pairs = [(KEYS[n % len(KEYS)], f"value {n}".encode()) for n in range(200)]
    expected = {key: sorted(value for k, value in pairs if k == key) for key in KEYS}
    with grouping_on_disk() as grouping:
        folder = grouping.folder
        with TestPipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
            grouped = (
                p
                | beam.Create(pairs)
                | "Group" >> grouping
                | beam.MapTuple(lambda key, values: (key, sorted(values)))
            )
            assert_that(grouped, equal_to(sorted(expected.items())))
        assert os.listdir(folder)  # the values went through files
    assert not os.path.exists(folder)
