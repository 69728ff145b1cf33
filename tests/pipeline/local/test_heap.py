"""The arena cap of a local run's processes, read back from glibc's own statistics."""
import subprocess
import sys

import pytest

from pipeline.local import heap

# Eight threads allocate at once, each keeping what it took, then glibc prints one "Arena N:"
# block per heap it made.
_THREADS_ALLOCATING = """
import ctypes, sys, threading
from pipeline.local import heap
if sys.argv[1] == "capped":
    assert heap.limit_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
ready = threading.Barrier(8)
kept = []
def allocate():
    ready.wait()
    kept.extend(libc.malloc(1 << 16) for _ in range(64))
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.malloc_stats()
"""


def _arenas(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _THREADS_ALLOCATING, mode], capture_output=True, text=True, check=True, timeout=60
    )
    return sum(1 for line in done.stderr.splitlines() if line.startswith("Arena "))


@pytest.mark.slow
@pytest.mark.skipif(heap._mallopt() is None, reason="the C library has no mallopt (not glibc)")
def test_a_capped_process_keeps_two_heaps_however_many_threads_allocate():
    assert _arenas("uncapped") > heap.ARENAS
    assert _arenas("capped") <= heap.ARENAS
