"""`crawl-audit report OUT`: the closing report of a finished run printed again, and its
`report.html` rebuilt (the same bytes)."""
from __future__ import annotations

import argparse

from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_OK, InputError
from pipeline.report import html, text


def report(args: argparse.Namespace) -> int:
    try:
        summary = text.render(text.load(args.out))
        written = html.write(args.out, args.html)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    say(f"{summary}\n\nreport: {written}")
    return EXIT_OK
