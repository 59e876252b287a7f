"""Section-aware token chunks of parsed Markdown.

Headings split a document into sections and a chunk never crosses one, so every chunk
can say where it comes from ("Methods > Exposure assessment"), and a citation can point
there. Inside a section, windows of ``max_tokens`` tokens overlap by ``overlap`` tokens
so a sentence cut at a border is still whole in one of the two chunks. Tokens are
counted by a pluggable tokenizer (the embedding model's, in the asset), and chunk text is
always an exact slice of the document.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

#: Character spans of the tokens of a text.
TokenSpans = Callable[[str], list[tuple[int, int]]]

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
SECTION_SEPARATOR = " > "
CHUNK_COLUMNS = ("chunk_id", "cluster_id", "chunk_index", "section", "text", "token_count", "content_hash")


def word_spans(text: str) -> list[tuple[int, int]]:
    """Whitespace-separated words: a tokenizer that needs no model."""
    return [match.span() for match in re.finditer(r"\S+", text)]


@dataclass(frozen=True)
class Section:
    """A heading path and the character span of the body below that heading."""

    path: str
    start: int
    end: int


def markdown_sections(markdown: str) -> list[Section]:
    """Sections in document order; text before the first heading has the path ""."""
    sections: list[Section] = []
    trail: list[tuple[int, str]] = []
    path, start, offset, fenced = "", 0, 0, False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line.rstrip("\r\n"))
        if heading:
            sections.append(Section(path, start, offset))
            level, title = len(heading.group(1)), heading.group(2).strip()
            trail = [(lvl, name) for lvl, name in trail if lvl < level] + [(level, title)]
            path = SECTION_SEPARATOR.join(name for _, name in trail)
            start = offset + len(line)
        offset += len(line)
    sections.append(Section(path, start, offset))
    return [s for s in sections if markdown[s.start : s.end].strip()]


@dataclass(frozen=True)
class Chunk:
    index: int
    section: str
    text: str
    token_count: int


def chunk_markdown(
    markdown: str, *, max_tokens: int = 200, overlap: int = 40, spans: TokenSpans = word_spans
) -> list[Chunk]:
    """Chunks of at most ``max_tokens`` tokens, overlapping by ``overlap``, within sections."""
    if not 0 <= overlap < max_tokens:
        raise ValueError(f"overlap ({overlap}) must be at least 0 and below max_tokens ({max_tokens})")
    chunks: list[Chunk] = []
    for section in markdown_sections(markdown):
        body = markdown[section.start : section.end]
        tokens = spans(body)
        step = max_tokens - overlap
        for first in range(0, len(tokens), step):
            window = tokens[first : first + max_tokens]
            text = body[window[0][0] : window[-1][1]]
            chunks.append(Chunk(len(chunks), section.path, text, len(window)))
            if first + max_tokens >= len(tokens):
                break
    return chunks


def content_hash(section: str, text: str) -> str:
    """Identity of a chunk's content: same section and text, same hash, no new embedding."""
    return hashlib.sha256(f"{section}\x1f{text}".encode()).hexdigest()[:32]


_REFERENCE_SECTION = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:references|bibliography|literature cited|works cited|reference list)\s*$",
    re.IGNORECASE,
)


def is_reference_section(section: str) -> bool:
    """A reference list cites other works; its lines are not evidence of the citing article.

    ``section`` is a heading path such as ``Title > 7 References``; its last heading decides.
    """
    return bool(_REFERENCE_SECTION.match((section or "").rsplit(" > ", 1)[-1]))


def chunk_documents(
    documents: pd.DataFrame, *, max_tokens: int = 200, overlap: int = 40, spans: TokenSpans = word_spans
) -> pd.DataFrame:
    """One row per chunk of each document (columns ``cluster_id``, ``markdown``), reference lists left out."""
    rows = [
        {
            "chunk_id": f"{cluster_id}:{chunk.index}",
            "cluster_id": cluster_id,
            "chunk_index": chunk.index,
            "section": chunk.section,
            "text": chunk.text,
            "token_count": chunk.token_count,
            "content_hash": content_hash(chunk.section, chunk.text),
        }
        for cluster_id, markdown in zip(documents["cluster_id"], documents["markdown"], strict=True)
        if isinstance(markdown, str)
        for chunk in chunk_markdown(markdown, max_tokens=max_tokens, overlap=overlap, spans=spans)
        if not is_reference_section(chunk.section)
    ]
    return pd.DataFrame(rows, columns=list(CHUNK_COLUMNS))
