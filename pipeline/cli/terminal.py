"""What a command prints on stdout: every line through the one terminal escaping
(`matcher.printable`), since most of it comes from logs, tables or a remote server (hosts,
robots.txt rules, archive timestamps, `Location` headers, file names)."""
from __future__ import annotations

from matcher.printable import printable


def say(text: str) -> None:
    """Print `text`, each of its lines escaped for the terminal."""
    print("\n".join(printable(line) for line in text.split("\n")))
