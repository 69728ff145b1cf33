"""The robots table of a streaming run, re-read every `--robots-refresh`.

The slowly-updating side input pattern: a version added to the table applies to requests audited
after the next refresh, without a restart. A table that fails to load keeps the previous one in
force and is counted. With `--robots-refresh 0` the table is read once, at launch.
"""
from __future__ import annotations

import logging
from datetime import timedelta

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms import trigger, window
from apache_beam.transforms.periodicsequence import PeriodicImpulse
from apache_beam.utils.timestamp import Timestamp

from matcher.history import RobotsTableError
from matcher.line_auditor import RobotsByHost, robots_by_host
from pipeline.evidence.robots_table import read_robots_table

_LOG = logging.getLogger(__name__)


def robots_snapshot(location: str) -> RobotsByHost:
    """The whole robots table as the audit's side input holds it: host -> its versions."""
    return robots_by_host(read_robots_table(location))


class ReloadRobotsTableFn(beam.DoFn):
    """A fresh snapshot per tick; a table that does not load keeps the previous one in force."""

    def __init__(self, location: str):
        self._location = location
        self.reloads = Metrics.counter(self.__class__, "reloads")
        self.failures = Metrics.counter(self.__class__, "failed_reloads")

    def process(self, tick):
        try:
            snapshot = robots_snapshot(self._location)
        except (RobotsTableError, OSError) as error:
            self.failures.inc()
            _LOG.error("robots table not reloaded, the previous one stays in force: %s", error)
            return
        self.reloads.inc()
        yield snapshot


class RefreshRobotsTable(beam.PTransform):
    """One robots snapshot per `interval`, as a global-window stream whose latest pane wins;
    read it with `AsSingleton`."""

    def __init__(self, location: str, interval: timedelta):
        super().__init__()
        self._location = location
        self._interval = interval.total_seconds()

    def expand(self, pbegin):
        return (
            pbegin
            | "RobotsRefreshTicks" >> PeriodicImpulse(start_timestamp=Timestamp.now(), fire_interval=self._interval)
            | "ReloadRobotsTable" >> beam.ParDo(ReloadRobotsTableFn(self._location))
            | "EachReloadFires" >> beam.WindowInto(
                window.GlobalWindows(),
                trigger=trigger.Repeatedly(trigger.AfterCount(1)),
                accumulation_mode=trigger.AccumulationMode.DISCARDING,
            )
            # Two ticks can share a pane; a singleton view must see one table.
            | "LatestRobotsTable" >> beam.combiners.Latest.Globally().without_defaults()
        )
