"""BM25 keyword index (``bm25s``) over chunk texts, saved in one folder per partition.

Dense vectors miss exact strings (an acronym, a pollutant formula, a model name); BM25
finds them, which is why hybrid search fuses both.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

STOPWORDS = "en"
_IDS_FILE = "chunk_ids.json"


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords=STOPWORDS, return_ids=False, show_progress=False)


class KeywordIndex:
    """BM25 scores of chunk ids for a text query."""

    def __init__(self, ids: list[str], retriever: bm25s.BM25 | None) -> None:
        self.ids = ids
        self.retriever = retriever

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str]) -> KeywordIndex:
        if not ids:
            return cls([], None)
        retriever = bm25s.BM25()
        retriever.index(_tokens(texts), show_progress=False)
        return cls(list(ids), retriever)

    def save(self, folder: Path) -> None:
        """Write beside ``folder`` and swap it in, so a killed run never leaves half an index there."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
        try:
            if self.retriever is not None:
                self.retriever.save(str(staging), show_progress=False)
            (staging / _IDS_FILE).write_text(json.dumps(self.ids), encoding="utf-8")
            previous = folder.with_name(f".{folder.name}.previous")
            shutil.rmtree(previous, ignore_errors=True)
            if folder.exists():
                folder.rename(previous)
            staging.rename(folder)
            shutil.rmtree(previous, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex:
        ids_file = folder / _IDS_FILE
        if not ids_file.is_file():
            raise FileNotFoundError(f"No keyword index in {folder}: index the partition first")
        ids = json.loads(ids_file.read_text(encoding="utf-8"))
        retriever = bm25s.BM25.load(str(folder), show_progress=False) if ids else None
        return cls(ids, retriever)

    def search(self, text: str, *, limit: int = 10) -> list[tuple[str, float]]:
        """Best chunk ids and scores; chunks sharing no term with ``text`` are left out."""
        if self.retriever is None or limit <= 0:
            return []
        documents, scores = self.retriever.retrieve(
            _tokens([text]), k=min(limit, len(self.ids)), show_progress=False, n_threads=1
        )
        return [
            (self.ids[int(doc)], float(score))
            for doc, score in zip(documents[0], scores[0], strict=True)
            if score > 0 and np.isfinite(score)
        ]
