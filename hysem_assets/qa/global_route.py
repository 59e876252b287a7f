"""The global route: corpus-level questions answered from the summary tree, top down.

"What are the main themes?" has no passage that answers it, so the answer is read from the
``summary_tree`` asset: the corpus node's themes (its topics), each theme by the sentences of
its summary and, where the question has a focus, by the sentences of its documents closest
to the question. Each theme gives up to ``per_theme`` claims from different works, each
citing the chunk (or abstract) its sentence came from, so the answer names the works behind
every theme and the citation audit can check them like any other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.mmr import mmr
from hysem_assets.knowledge.summary_tree import Sentence, Source, TreeNode, tree_nodes
from hysem_assets.qa.drafts import Claim, Draft
from hysem_assets.qa.sources import ChunkRow, Library, SourceMetadata

#: How much a sentence's closeness to the question counts against its closeness to its theme: a theme is
#: told by its central sentences, and a question with a focus pulls the ones on that focus forward.
QUESTION_WEIGHT = 0.4


@dataclass(frozen=True)
class SummaryTree:
    """The tree of one partition: its corpus node, topics, and each topic's documents."""

    corpus: TreeNode | None
    topics: list[TreeNode]
    documents: dict[int | None, list[TreeNode]] = field(default_factory=dict)

    @classmethod
    def from_table(cls, table: pd.DataFrame | None) -> SummaryTree | None:
        nodes = tree_nodes(table)
        if not nodes:
            return None
        documents: dict[int | None, list[TreeNode]] = {}
        for node in nodes:
            if node.level == "document":
                documents.setdefault(node.topic, []).append(node)
        corpus = next((node for node in nodes if node.level == "corpus"), None)
        return cls(corpus, [node for node in nodes if node.level == "topic"], documents)


@dataclass(frozen=True)
class GlobalAnswer:
    draft: Draft
    sources: list[SourceMetadata]
    themes: list[dict[str, Any]]
    #: retracted works whose sentences the tree offered (left out unless included)
    retracted: list[str]

    @property
    def empty(self) -> bool:
        return not self.draft.claims

    def markdown(self) -> str:
        """The claims under their themes, each theme with its size."""
        parts = []
        for theme in self.themes:
            lines = [f"**{theme['label']}** ({theme['works']} work{'s' * (theme['works'] != 1)})"]
            for index in theme["claims"]:
                claim = self.draft.claims[index]
                cites = "; ".join(
                    dict.fromkeys(str(c.get("InTextCitation") or c.get("DOI") or "?") for c in claim.citations)
                )
                lines.append(f"- {claim.text} {cites}".rstrip())
            parts.append("\n".join(lines))
        return "\n\n".join(parts)


def _citation(source: Source, library: Library, chunks: Mapping[str, ChunkRow]) -> SourceMetadata | None:
    record = library.get(source.cluster_id)
    if record is None:
        return None
    chunk = chunks.get(source.chunk_id) if source.chunk_id else None
    if chunk is None or chunk.cluster_id != source.cluster_id:
        return record.metadata(None)
    return record.metadata(chunk.chunk_index, chunk.evidence)


def answer_from_tree(
    question: str,
    tree: SummaryTree,
    embedder: Encoder,
    library: Library,
    chunks: Mapping[str, ChunkRow],
    *,
    max_themes: int = 8,
    per_theme: int = 2,
    documents_per_theme: int = 3,
    include_retracted: bool = False,
) -> GlobalAnswer:
    """Claims per theme, most relevant themes first (see the module doc); retracted works are left out
    unless ``include_retracted``."""
    retracted: set[str] = set()

    def usable(sentence: Sentence) -> bool:
        records = [library.get(source.cluster_id) for source in sentence.sources]
        retracted.update(r.cluster_id for r in records if r is not None and r.retracted)
        return bool(records) and all(r is not None and (include_retracted or not r.retracted) for r in records)

    question_vector = embedder.encode([question])[0]
    ranked = sorted(
        tree.topics,
        key=lambda node: -(float(node.vector @ question_vector) + 0.1 * math.log1p(node.works)),
    )[:max_themes]
    pools = []
    for topic in ranked:
        documents = sorted(tree.documents.get(topic.topic, []), key=lambda node: -float(node.vector @ question_vector))
        pool = [s for s in topic.sentences if usable(s)]
        pool += [s for node in documents[:documents_per_theme] for s in node.sentences if usable(s)]
        pools.append(list({s.text: s for s in pool}.values()))
    encoded = embedder.encode([s.text for pool in pools for s in pool])  # one batch for every theme
    claims: list[Claim] = []
    sources: dict[tuple[str, int | None], SourceMetadata] = {}
    themes = []
    offset = 0
    for topic, pool in zip(ranked, pools, strict=True):
        vectors, offset = encoded[offset : offset + len(pool)], offset + len(pool)
        if not pool:
            continue
        score = QUESTION_WEIGHT * (vectors @ question_vector) + (1 - QUESTION_WEIGHT) * (vectors @ topic.vector)
        chosen = mmr(vectors, score, per_theme, groups=[s.sources[0].cluster_id for s in pool])
        indices = []
        for i in chosen:
            cited = [c for source in pool[i].sources if (c := _citation(source, library, chunks)) is not None]
            if not cited:
                continue
            for c in cited:
                sources[c.locator] = c
            indices.append(len(claims))
            claims.append(Claim(pool[i].text, tuple(c.as_dict() for c in dict.fromkeys(cited))))
        if indices:
            themes.append({"topic": topic.topic, "label": topic.label, "works": topic.works, "claims": indices,
                           "relevance": round(float(topic.vector @ question_vector), 4), "method": topic.method})  # fmt: skip
    return GlobalAnswer(Draft(tuple(claims)), list(sources.values()), themes, sorted(retracted))
