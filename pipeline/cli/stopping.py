"""SIGTERM (systemd, docker, `timeout`) and SIGINT (Ctrl-C) end a command the way an error does:
the work is unwound in the main thread, so everything it started is stopped and removed on the
way out (a run's staging folder, its spill and worker-socket folders, Beam's temporary folder,
the fork server and its workers), then one line says what stopped it, exit 128 + the signal."""
from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stopped(BaseException):
    """The command was stopped by a signal; not an Exception, so no handler on the way takes it
    for a failure of its own."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGINT raise `Stopped` in the main thread while inside."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for each in SIGNALS:  # a second Ctrl-C must not cut the clean-up short
            signal.signal(each, signal.SIG_IGN)
        # What the runner's threads say as they are torn down is about the stop, not a failure.
        logging.disable(logging.CRITICAL)
        threading.excepthook = lambda arguments: None
        raise Stopped(signum)

    previous = {each: signal.signal(each, stop) for each in SIGNALS}
    try:
        yield
    finally:
        for each, handler in previous.items():
            signal.signal(each, handler)
