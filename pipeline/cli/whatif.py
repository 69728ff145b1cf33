"""`crawl-audit whatif OUT --host H --proposed FILE`: a finished run's requests of one host
decided again under a proposed robots.txt."""
from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_OK, InputError
from pipeline.cli.robots_file import read_bytes
from pipeline.report import html, whatif as answers


def whatif(args: argparse.Namespace) -> int:
    try:
        question = answers.Question(
            args.out, args.host, Path(args.proposed).name, read_bytes(args.proposed), args.start, args.end
        )
        digest = answers.run(question, args.registry)
        written = html.write(args.out)
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    say(f"{answers.render(digest)}\n\nwritten: {args.out}/{answers.FOLDER}/, report: {written}")
    return EXIT_OK
