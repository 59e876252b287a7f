"""Splitting a document's text into overlapping token windows.

Tokens are counted with the WordPiece tokenizer of the packaged all-MiniLM-L6-v2
(``tokenizer.json`` through the Rust ``tokenizers`` library: offline, fast, no torch).
The generating model's own tokenizer is unknown here (it depends on the profile), and a
30k-entry WordPiece vocabulary splits scientific text into at least as many pieces as
the 100k+ BPE vocabularies of current instruction models, so a chunk of N WordPiece
tokens is at most about N tokens for the model: budgets err on the safe side. Counting
whitespace words instead would undercount numbers, units and chemical names (PM2.5 is
four WordPiece tokens) and overflow contexts. Offsets map tokens back to characters, so
chunks are exact slices of the original text and end at word boundaries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hysem_assets.embedding.minilm import TOKENIZER_NAME, Offsets, count_tokens, wordpiece_offsets

__all__ = ["TOKENIZER_NAME", "Chunk", "chunk_text", "count_tokens", "wordpiece_offsets"]


@dataclass(frozen=True)
class Chunk:
    """One window of a document: its text, where it lies in the document, its token count."""

    index: int
    text: str
    start: int
    end: int
    tokens: int


def _word_start(offsets: Offsets, index: int, floor: int) -> int:
    """``index`` moved back to the first token of its word, but not below ``floor``."""
    while index > floor and offsets[index][0] == offsets[index - 1][1]:
        index -= 1
    return index


def chunk_text(
    text: str,
    *,
    chunk_tokens: int = 8000,
    overlap: int = 500,
    tokenize: Callable[[str], Offsets] = wordpiece_offsets,
) -> list[Chunk]:
    """Windows of at most ``chunk_tokens`` tokens, each repeating at least the last ``overlap`` of the previous.

    Both ends move back to the start of a word, so the overlap may grow by part of a word.
    The overlap keeps a sentence cut at a boundary whole in one of the two chunks.
    Text without tokens (empty or whitespace) gives no chunks.
    """
    if chunk_tokens < 1 or not 0 <= overlap < chunk_tokens:
        raise ValueError(f"need chunk_tokens >= 1 and 0 <= overlap < chunk_tokens (got {chunk_tokens}, {overlap})")
    offsets = tokenize(text)
    chunks: list[Chunk] = []
    first = 0
    while offsets:
        last = first + chunk_tokens
        if last < len(offsets):
            last = _word_start(offsets, last, floor=first + overlap + 1)
        else:
            last = len(offsets)
        start = offsets[first][0]
        end = offsets[last][0] if last < len(offsets) else len(text)
        chunks.append(
            Chunk(index=len(chunks), text=text[start:end].rstrip(), start=start, end=end, tokens=last - first)
        )
        if last == len(offsets):
            break
        first = _word_start(offsets, last - overlap, floor=first + 1)
    return chunks
