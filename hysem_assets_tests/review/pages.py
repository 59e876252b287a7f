"""The report page as a reader sees it: its elements, and the text between them."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

#: A line of a Markdown pipe table: a row between pipes, or the ``|---|`` rule under its header.
_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}:?\s*\|", re.MULTILINE)


class Page(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: Counter[str] = Counter()
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements[tag] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def pipe_rows(self) -> list[str]:
        """Markdown table lines left as text instead of a table."""
        return [row.group() for chunk in self.text for row in _PIPE_ROW.finditer(chunk)]
