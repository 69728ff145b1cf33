"""A robots table's versions grouped into one history per host."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import timedelta

from matcher.history.host import DEFAULT_ERROR_LIMIT, DEFAULT_GRACE, HostHistory
from matcher.history.versions import RobotsVersion
from matcher.hosts import host_key

__all__ = ["RobotsHistory"]


class RobotsHistory(Mapping[str, HostHistory]):
    """Every host's robots.txt history, looked up by host in any spelling `hosts.host_key` accepts.

    `error_limit` is how long an error state lasts before the last good version applies again;
    `grace` is how long a crawler may act on a cached earlier version (zero turns it off).
    """

    def __init__(
        self,
        versions: Iterable[RobotsVersion],
        *,
        error_limit: timedelta = DEFAULT_ERROR_LIMIT,
        grace: timedelta = DEFAULT_GRACE,
    ) -> None:
        by_host: dict[str, list[RobotsVersion]] = {}
        for version in versions:
            by_host.setdefault(version.host, []).append(version)
        self._hosts = {
            host: HostHistory(host_versions, error_limit=error_limit, grace=grace)
            for host, host_versions in by_host.items()
        }

    def __getitem__(self, host: str) -> HostHistory:
        return self._hosts[host_key(host)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._hosts)

    def __len__(self) -> int:
        return len(self._hosts)
