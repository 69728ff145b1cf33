"""A small reading of an HTML document for the report tests: its elements and its tables."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Dom:
    elements: list[tuple[str, dict]] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    # table id -> rows (head, body and foot alike) -> cell texts
    tables: dict[str, list[list[str]]] = field(default_factory=dict)
    text: str = ""

    def table(self, ident: str) -> tuple[list[str], list[list[str]], list[str] | None]:
        """Header, body rows and footer of a table whose footer is its last row."""
        rows = self.tables[ident]
        return rows[0], rows[1:-1], rows[-1]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dom = Dom()
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.dom.elements.append((tag, attributes))
        if "id" in attributes:
            self.dom.ids.add(attributes["id"])
        if tag == "table" and "id" in attributes:
            self._table = self.dom.tables.setdefault(attributes["id"], [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self._texts.append(data)
        if self._cell is not None:
            self._cell.append(data)


def read(html: str) -> Dom:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    reader.dom.text = "".join(reader._texts)
    return reader.dom


def number(cell: str) -> int:
    return int(cell.replace(",", ""))
