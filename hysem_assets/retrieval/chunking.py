"""Section-aware token chunks of parsed Markdown.

Headings split a document into sections and a chunk never crosses one, so every chunk
can say where it comes from ("Methods > Exposure assessment"), and a citation can point
there. Inside a section, windows of ``max_tokens`` tokens overlap by ``overlap`` tokens
so a sentence cut at a border is still whole in one of the two chunks. Tokens are
counted by a pluggable tokenizer (the embedding model's, in the asset), and chunk text is
always an exact slice of the document.

Most works of a real corpus have no open-access full text, so every work is also chunked
from its title and abstract (:func:`work_chunks`), in windows of whole sentences, and each
chunk says which level of evidence it is (``abstract`` or ``full text``). A full text's own
copy of the abstract is left out, so no work is indexed twice for the same words.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from hysem_assets.core.empty import typed_when_empty
from hysem_assets.core.text import sentence_spans

#: Character spans of the tokens of a text.
TokenSpans = Callable[[str], list[tuple[int, int]]]

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
SECTION_SEPARATOR = " > "
CHUNK_COLUMNS = ("chunk_id", "cluster_id", "chunk_index", "section", "text", "token_count", "content_hash")
CHUNK_DTYPES = {"chunk_index": "int64", "token_count": "int64"}
#: Levels of evidence a chunk can be: a work's title and abstract, or its parsed full text.
ABSTRACT = "abstract"
FULL_TEXT = "full text"
#: The columns of the ``vector_index`` chunk table: a chunk, and the level of evidence it is.
WORK_CHUNK_COLUMNS = (*CHUNK_COLUMNS, "evidence")
#: A full-text chunk with at least this share of its words in the work's abstract repeats it.
ABSTRACT_REPEAT = 0.8
_WORD = re.compile(r"\w+")


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


def blank_reference_lists(markdown: str) -> str:
    """``markdown`` with every reference list, heading and body, turned to spaces (line breaks kept).

    A cited title ("... a randomised trial") is not a finding of the citing work, so
    extraction reads none; blanking, not cutting, keeps every character offset valid.
    """
    parts, done = [], 0
    for section in markdown_sections(markdown):
        if is_reference_section(section.path):
            heading = markdown.rfind("\n", 0, section.start - 1) + 1
            parts += [markdown[done:heading], re.sub(r"[^\n]", " ", markdown[heading : section.end])]
            done = section.end
    return "".join([*parts, markdown[done:]])


def chunk_documents(
    documents: pd.DataFrame, *, max_tokens: int = 200, overlap: int = 40, spans: TokenSpans = word_spans
) -> pd.DataFrame:
    """One row per chunk of each document (columns ``cluster_id``, ``markdown``), reference lists left out."""
    works = pd.DataFrame(columns=["cluster_id", "title", "abstract"])
    chunks = work_chunks(works, documents, max_tokens=max_tokens, overlap=overlap, spans=spans)
    return chunks[list(CHUNK_COLUMNS)]


def sentence_windows(text: str, *, max_tokens: int = 200, spans: TokenSpans = word_spans) -> list[tuple[int, int, int]]:
    """``(start, end, tokens)`` windows of whole sentences of at most ``max_tokens`` tokens.

    Consecutive windows share one sentence, so a claim that needs its neighbour is whole in
    one of them; a sentence longer than a window is cut into token windows of its own.
    """
    sentences = [(start, end, len(spans(text[start:end]))) for start, end in sentence_spans(text)]
    windows: list[tuple[int, int, int]] = []
    first = 0
    while first < len(sentences):
        start, end, tokens = sentences[first]
        if tokens > max_tokens:
            pieces = spans(text[start:end])
            windows += [
                (start + piece[0][0], start + piece[-1][1], len(piece))
                for piece in (pieces[n : n + max_tokens] for n in range(0, len(pieces), max_tokens))
            ]
            first += 1
            continue
        last = first
        while last + 1 < len(sentences) and tokens + sentences[last + 1][2] <= max_tokens:
            last += 1
            tokens += sentences[last][2]
        windows.append((start, sentences[last][1], tokens))
        if last + 1 >= len(sentences):
            break
        first = last if last > first and sentences[last][2] + sentences[last + 1][2] <= max_tokens else last + 1
    return windows


def abstract_chunks(title: str, abstract: str, *, max_tokens: int = 200, spans: TokenSpans = word_spans) -> list[Chunk]:
    """A work's title and abstract as chunks: the abstract in sentence windows under the section
    ``<title> > Abstract``; a work without an abstract is its title alone."""
    title, abstract = " ".join((title or "").split()), (abstract or "").strip()
    if not abstract:
        return [Chunk(0, "Title", title, len(spans(title)))] if title else []
    section = f"{title}{SECTION_SEPARATOR}Abstract" if title else "Abstract"
    windows = sentence_windows(abstract, max_tokens=max_tokens, spans=spans)
    return [Chunk(n, section, abstract[start:end], tokens) for n, (start, end, tokens) in enumerate(windows)]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def repeats_abstract(text: str, abstract_words: set[str]) -> bool:
    """True for a full-text chunk made of the abstract's words (the paper's copy of its abstract)."""
    words = _words(text)
    return bool(words) and sum(w in abstract_words for w in words) >= ABSTRACT_REPEAT * len(words)


def _is_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def work_chunks(
    works: pd.DataFrame,
    documents: pd.DataFrame,
    *,
    max_tokens: int = 200,
    overlap: int = 40,
    spans: TokenSpans = word_spans,
) -> pd.DataFrame:
    """Every work's chunks: its title and abstract first (``abstract`` evidence), then its parsed
    full text (``full text``), reference lists and the full text's copy of the abstract left out.

    ``works`` has columns ``cluster_id``, ``title``, ``abstract``; ``documents`` has
    ``cluster_id`` and ``markdown`` (a full text, or missing). A work with neither title,
    abstract nor full text has nothing to search and no chunk.
    """
    full_texts = {
        str(cluster_id): markdown
        for cluster_id, markdown in zip(documents["cluster_id"], documents["markdown"], strict=True)
        if _is_text(markdown)
    }
    by_id = {str(work["cluster_id"]): work for work in works.to_dict("records")}
    rows = []
    for cluster_id in [*by_id, *(c for c in full_texts if c not in by_id)]:
        work = by_id.get(cluster_id, {})
        abstract = work.get("abstract") if _is_text(work.get("abstract")) else ""
        title = work.get("title") if _is_text(work.get("title")) else ""
        chunks = [(c, ABSTRACT) for c in abstract_chunks(title, abstract, max_tokens=max_tokens, spans=spans)]
        if cluster_id in full_texts:
            seen = set(_words(abstract))
            chunks += [
                (c, FULL_TEXT)
                for c in chunk_markdown(full_texts[cluster_id], max_tokens=max_tokens, overlap=overlap, spans=spans)
                if not is_reference_section(c.section) and not (seen and repeats_abstract(c.text, seen))
            ]
        rows += [
            {
                "chunk_id": f"{cluster_id}:{index}",
                "cluster_id": cluster_id,
                "chunk_index": index,
                "section": chunk.section,
                "text": chunk.text,
                "token_count": chunk.token_count,
                "content_hash": content_hash(chunk.section, chunk.text),
                "evidence": evidence,
            }
            for index, (chunk, evidence) in enumerate(chunks)
        ]
    return typed_when_empty(pd.DataFrame(rows, columns=list(WORK_CHUNK_COLUMNS)), CHUNK_DTYPES)
