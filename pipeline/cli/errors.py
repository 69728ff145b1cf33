"""Exit codes and the one error every command reports a user's mistake with."""
from __future__ import annotations

EXIT_OK = 0
# check: a URL disallowed; lint: findings; verify: not verified; update-ranges: a source not saved;
# history: done in part (run it again to resume).
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class InputError(Exception):
    """A problem with what the user gave us, printed as `crawl-audit: MESSAGE` (a table with
    several problems: one line each, under the first), exit 2."""


class UsageError(ValueError):
    """A command line that cannot be read: the flag and what is wrong with it, and the command whose
    `--help` says more."""

    def __init__(self, message: str, command: str):
        super().__init__(message)
        self.command = command
