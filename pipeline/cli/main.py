"""The `crawl-audit` command line: one parser (`pipeline.cli.parser`), one handler per command in
the module of its command group, and one way to report a user's mistake.

Exit codes:
  check          0 every URL allowed, 1 at least one URL disallowed
  lint           0 no findings, 1 findings printed
  verify         0 verified, 1 any other identity
  update-ranges  0 every source saved, 1 a source was not saved
  history        0 done, 1 done in part (run it again to resume)
  run            0 done, 1 a run-health check named by --fail-on found a problem
  report, whatif, schema   0 done
  every command  2 usage or input error, said in one line: `crawl-audit: ...`
                 130 stopped by SIGINT (Ctrl-C), 143 by SIGTERM, said in one line
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from pipeline.cli.errors import EXIT_ERROR, EXIT_OK, InputError, UsageError
from pipeline.cli.parser import PROGRAM, parser
from pipeline.cli.stopping import Stopped, stopped_by_signals
from matcher.printable import printable


def main(argv: Sequence[str] | None = None) -> int:
    commands = parser()
    try:
        args, extra = commands.parse_known_args(argv)
        # `run` hands every flag it does not know to Beam; the other commands take none.
        passes_to_beam = getattr(args, "passes_to_beam", False)
        if extra and not passes_to_beam:
            commands.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as leaving:  # --help or --version, printed
        return leaving.code
    except UsageError as error:
        return _said(f"{error} (see {error.command} --help)")
    try:
        with stopped_by_signals():
            return args.handler(args, extra) if passes_to_beam else args.handler(args)
    except InputError as error:
        return _said(str(error))
    except BrokenPipeError:
        return _reader_gone()
    except Stopped as stopped:
        return _stopped(stopped)
    except Exception as error:
        # Beam's own runner re-raises what a transform raised, the stop included, as its own error.
        stopped = _stop_behind(error)
        if stopped is None:
            raise
        return _stopped(stopped)


def _stop_behind(error: BaseException) -> Stopped | None:
    """The signal's stop that `error` was raised in handling, if it was."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, Stopped):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _stopped(stopped: Stopped) -> int:
    print(f"{PROGRAM}: stopped by {stopped}; nothing was left half written", file=sys.stderr)
    return stopped.exit_code


def _reader_gone() -> int:
    """The reader of stdout (`| head`) has what it wanted and left; that is not a failure. What is
    still buffered for it goes nowhere, so leaving does not fail on it again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OK


def _said(message: str) -> int:
    """Print a user's mistake; a table with several problems lists one a line, under the first."""
    first, *rest = message.split("\n")
    print(f"{PROGRAM}: {printable(first)}", file=sys.stderr)
    for line in rest:
        print(printable(line), file=sys.stderr)
    return EXIT_ERROR
