"""Fewer malloc arenas in the processes of a local run.

glibc gives each thread that allocates at the same time as another a heap of its own (an
arena), up to eight per core, and keeps what is freed in each for that heap's reuse. Beam's
runner and worker harness run bundles, gRPC streams and the state API on many threads, so a
long run's processes keep many part-empty heaps: their memory grows with the run's length while
the objects alive stay about the same. Two arenas per process keep that memory shared; the
threads mostly wait on one another for the interpreter lock anyway, so they seldom wait for a
heap. bench/README.md has the figures.
"""
from __future__ import annotations

import ctypes

# The arenas a process of a local run may have.
ARENAS = 2
# glibc's `mallopt` parameter for the most arenas (malloc.h).
_M_ARENA_MAX = -8


def limit_arenas() -> bool:
    """Cap this process's malloc arenas at `ARENAS` from now on, as a forked child inherits; False
    where the C library has no such setting (not glibc)."""
    mallopt = _mallopt()
    return mallopt is not None and mallopt(_M_ARENA_MAX, ARENAS) == 1


def _mallopt():
    # the symbols the process has loaded, the C library's among them: no search for its file
    try:
        return getattr(ctypes.CDLL(None), "mallopt", None)
    except (OSError, TypeError):
        return None
