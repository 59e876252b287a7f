"""Building the QA engine from the ``answer_models`` resource and the stores.

``generator``, ``auditor`` and ``cypher`` are backend mappings: ``{backend: extractive}``
and ``{backend: rules}`` are the embedded defaults (options next to ``backend``); any
other mapping goes to :func:`hysem_assets.llm.build_backend` (vllm, openai, ...).
``cypher: null`` writes symbolic queries from templates.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.embeddings import Encoder
from hysem_assets.knowledge.fields import mapping_vocabulary
from hysem_assets.knowledge.mentions import merge_vocabularies
from hysem_assets.knowledge.schema import GraphSchema, load_schema
from hysem_assets.llm import build_backend
from hysem_assets.profile import AnswerSettings
from hysem_assets.qa.agents import Auditor, CypherWriter, Generator, ModelAuditor, ModelCypherWriter, ModelGenerator
from hysem_assets.qa.answer import QAEngine
from hysem_assets.qa.embedded import ExtractiveGenerator, RuleAuditor
from hysem_assets.qa.retrieval import RetrievalSettings, Retriever
from hysem_assets.qa.sources import chunk_rows, library_records
from hysem_assets.qa.terms import BroaderTerms, entity_matchers, load_broader_terms
from hysem_assets.resources import AnswerModels, ChunkStore, GraphDatabase
from hysem_assets.retrieval.indexing import keyword_folder
from hysem_assets.retrieval.keyword import KeywordIndex
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore
from hysem_assets.terms import SynonymDictionary, load_dictionaries


def retrieval_settings(settings: AnswerSettings) -> RetrievalSettings:
    return RetrievalSettings(settings.k, settings.depth, settings.hops, settings.max_hops, settings.min_dense_score)


def _options(config: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key != "backend"}


def build_generator(config: Mapping[str, Any], embedder: Encoder, cache_dir: Path | None = None) -> Generator:
    if config.get("backend") == "extractive":
        return ExtractiveGenerator(embedder, **_options(config))
    return ModelGenerator(build_backend(config, cache_dir=cache_dir))


def build_auditor(config: Mapping[str, Any], embedder: Encoder, cache_dir: Path | None = None) -> Auditor:
    if config.get("backend") == "rules":
        return RuleAuditor(embedder, **_options(config))
    return ModelAuditor(build_backend(config, cache_dir=cache_dir))


def build_engine(
    settings: AnswerSettings,
    *,
    query: str,
    store: QdrantChunkStore,
    index: KeywordIndex,
    embedder: Encoder,
    graph: GraphStore | None,
    schema: GraphSchema,
    spellings: Mapping[str, Mapping[str, str]],
    chunks: pd.DataFrame,
    library: pd.DataFrame,
    broader: BroaderTerms | None = None,
    cache_dir: Path | None = None,
) -> QAEngine:
    """The engine for partition ``query``: its stores, the ``vector_index`` chunk table and the ``library`` table."""
    retriever = Retriever(
        query=query,
        store=store,
        index=index,
        embedder=embedder,
        graph=graph,
        matchers=entity_matchers(schema, spellings, broader),
        chunks=chunk_rows(chunks),
        library=library_records(library),
        settings=retrieval_settings(settings),
    )
    writer: CypherWriter | None = (
        ModelCypherWriter(build_backend(settings.cypher, cache_dir=cache_dir)) if settings.cypher else None
    )
    return QAEngine(
        retriever=retriever,
        schema=schema,
        generator=build_generator(settings.generator, embedder, cache_dir),
        auditor=build_auditor(settings.auditor, embedder, cache_dir),
        cypher_writer=writer,
        max_rounds=settings.max_rounds,
    )


def term_spellings(
    canonical_terms: pd.DataFrame | None = None, dictionaries: Mapping[str, SynonymDictionary] | None = None
) -> dict[str, dict[str, str]]:
    """``field -> spelling -> canonical``: the synonym dictionaries, plus the partition's mapped raw terms."""
    dictionaries = load_dictionaries() if dictionaries is None else dictionaries
    spellings = {field: dict(d.spellings) for field, d in dictionaries.items()}
    mapped = mapping_vocabulary(canonical_terms) if canonical_terms is not None else {}
    return merge_vocabularies(spellings, mapped)


def broader_terms(dictionaries: Mapping[str, SynonymDictionary] | None = None) -> BroaderTerms:
    """config/broader_terms.yaml, checked against the synonym dictionaries."""
    dictionaries = load_dictionaries() if dictionaries is None else dictionaries
    return load_broader_terms(canonical={field: set(d.entries) for field, d in dictionaries.items()})


@contextmanager
def open_engine(
    models: AnswerModels,
    *,
    query: str,
    chunk_store: ChunkStore,
    graph_database: GraphDatabase | None,
    chunks: pd.DataFrame,
    library: pd.DataFrame,
    canonical_terms: pd.DataFrame | None = None,
    cache_dir: Path | None = None,
) -> Iterator[QAEngine]:
    """The engine over the stores of partition ``query``; stores are closed on exit.

    ``chunk_store`` also gives the keyword folder and the encoder the chunks were indexed
    with; without a ``graph_database`` there is no graph retrieval and no symbolic route.
    """
    dictionaries = load_dictionaries()
    with ExitStack() as opened:  # chunk store first, then graph: the one order, so waiting never deadlocks
        store = chunk_store.open()
        opened.callback(store.close)
        graph_store = graph_database.open() if graph_database is not None else None
        if graph_store is not None:
            opened.callback(graph_store.close)
        yield build_engine(
            models.settings,
            query=query,
            store=store,
            index=KeywordIndex.load(keyword_folder(chunk_store.keyword_root(), query)),
            embedder=chunk_store.encoder(),
            graph=graph_store,
            schema=load_schema(),
            spellings=term_spellings(canonical_terms, dictionaries),
            chunks=chunks,
            library=library,
            broader=broader_terms(dictionaries),
            cache_dir=cache_dir,
        )
