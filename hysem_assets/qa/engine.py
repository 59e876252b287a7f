"""Building the QA engine from the profile's ``answers`` section and the stores.

``generator``, ``auditor`` and ``cypher`` are backend mappings: ``{backend: extractive}``
and ``{backend: rules}`` are the embedded defaults (options next to ``backend``); any
other mapping goes to :func:`hysem_assets.llm.registry.build_backend` (vllm, openai, ...).
``cypher: null`` writes symbolic queries from templates; a model writes ``cypher_candidates`` queries per
question, and the templates answer when none of them holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.embedding.encoder import Encoder, query_encoder
from hysem_assets.knowledge.fields import mapping_vocabulary
from hysem_assets.knowledge.mentions import merge_vocabularies
from hysem_assets.llm.registry import build_backend
from hysem_assets.qa.agents import Auditor, CypherWriter, Generator, ModelAuditor, ModelCypherWriter, ModelGenerator
from hysem_assets.qa.aggregates import category_fields
from hysem_assets.qa.answer import QAEngine
from hysem_assets.qa.cypher_candidates import example_patterns
from hysem_assets.qa.embedded import ExtractiveGenerator, RuleAuditor, SentenceVectors
from hysem_assets.qa.entity_questions import EntityKinds, EntityNames, load_entity_kinds
from hysem_assets.qa.global_route import SummaryTree
from hysem_assets.qa.number_fields import number_fields
from hysem_assets.qa.retrieval import RetrievalSettings, Retriever
from hysem_assets.qa.router import ModelRouter
from hysem_assets.qa.sources import chunk_rows, library_records, retracted_works
from hysem_assets.qa.terms import BroaderTerms, checked_broader_terms, entity_matchers
from hysem_assets.settings.catalog import review_for
from hysem_assets.settings.dictionaries import SynonymDictionary
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.profile import AnswerSettings, AssetSettings
from hysem_assets.settings.protocols import Protocol, load_protocols
from hysem_assets.stores.chunks import ChunkVectors
from hysem_assets.stores.connect import chunk_encoder, open_chunk_store, open_graph_store
from hysem_assets.stores.graph import GraphStore, partition_loaded
from hysem_assets.stores.graph_schema import GraphSchema, graph_schema


def retrieval_settings(settings: AnswerSettings) -> RetrievalSettings:
    return RetrievalSettings(
        settings.k,
        settings.depth,
        settings.hops,
        settings.max_hops,
        settings.min_dense_score,
        settings.include_retracted,
        settings.entity_list,
    )


def _options(config: Mapping[str, Any]) -> dict[str, Any]:
    """An embedded generator's or auditor's keywords; a key set to null keeps its default."""
    return {key: value for key, value in config.items() if key != "backend" and value is not None}


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
    store: ChunkVectors,
    embedder: Encoder,
    graph: GraphStore | None,
    schema: GraphSchema,
    spellings: Mapping[str, Mapping[str, str]],
    chunks: pd.DataFrame,
    library: pd.DataFrame,
    broader: BroaderTerms | None = None,
    cache_dir: Path | None = None,
    protocol: Protocol | None = None,
    extracted: pd.DataFrame | None = None,
    summary_tree: pd.DataFrame | None = None,
    findings: pd.DataFrame | None = None,
    entity_kinds: EntityKinds | None = None,
) -> QAEngine:
    """The engine for partition ``query``: its stores, the ``vector_index`` chunk table and the ``library`` table;
    with ``protocol`` and ``extracted`` (``extracted_fields``) the numeric route, with ``summary_tree`` the global
    route, with ``findings`` the synthesis route; ``entity_kinds`` (default: ``config/entity_questions.yaml``) the
    entity route, over the entity names the partition's graph holds."""
    # a partition without articles has nothing to count: its answers say so, whatever the graph holds
    loaded = graph is not None and not library.empty and partition_loaded(graph, query)
    retriever = Retriever(
        query=query,
        store=store,
        embedder=embedder,
        graph=graph if loaded else None,
        matchers=entity_matchers(schema, spellings, broader),
        chunks=chunk_rows(chunks),
        library=library_records(library, retracted_works(chunks)),
        settings=retrieval_settings(settings),
        entities=EntityNames.of_partition(graph, query) if graph is not None and loaded else EntityNames(),
    )
    writer: CypherWriter | None = None
    if settings.cypher:
        cypher_backend = build_backend(settings.cypher, cache_dir=cache_dir)
        writer = ModelCypherWriter(cypher_backend, settings.cypher_candidates, params=cypher_backend.default_params)
    remembered = SentenceVectors(embedder)  # shared: the auditor reuses the generator's vectors
    return QAEngine(
        retriever=retriever,
        schema=schema,
        generator=build_generator(settings.generator, remembered, cache_dir),
        auditor=build_auditor(settings.auditor, remembered, cache_dir),
        cypher_writer=writer,
        max_rounds=settings.max_rounds,
        router=ModelRouter(build_backend(settings.router, cache_dir=cache_dir)) if settings.router else None,
        numbers=number_fields(schema, protocol, extracted),
        categories=category_fields(schema, protocol),
        cypher_examples=example_patterns(schema) if writer is not None else [],
        cypher_max_rows=settings.cypher_max_rows,
        extracted=extracted,
        tree=SummaryTree.from_table(summary_tree),
        findings=findings,
        entity_kinds=entity_kinds or load_entity_kinds(),
        graph_missing=None
        if loaded or graph is None or library.empty
        else (
            f"The knowledge graph holds no load of {query!r} (never loaded, or its load was interrupted), so "
            f"nothing can be counted or listed; `hysem materialize --query {query} --select knowledge_graph` "
            "loads it."
        ),
    )


def term_spellings(
    dictionaries: Mapping[str, SynonymDictionary], canonical_terms: pd.DataFrame | None = None
) -> dict[str, dict[str, str]]:
    """``field -> spelling -> canonical``: the synonym dictionaries, plus the partition's mapped raw terms."""
    spellings = {field: dict(d.spellings) for field, d in dictionaries.items()}
    mapped = mapping_vocabulary(canonical_terms) if canonical_terms is not None else {}
    return merge_vocabularies(spellings, mapped)


def broader_terms(protocol: Protocol, dictionaries: Mapping[str, SynonymDictionary]) -> BroaderTerms:
    """The protocol's broader terms, checked against its synonym dictionaries."""
    return checked_broader_terms(
        protocol.broader_terms,
        canonical={field: set(d.entries) for field, d in dictionaries.items()},
        where=f"config/protocols/{protocol.name}.yaml",
    )


@contextmanager
def open_engine(
    settings: AssetSettings,
    *,
    query: str,
    protocol: Protocol,
    schema: GraphSchema,
    chunks: pd.DataFrame,
    library: pd.DataFrame,
    canonical_terms: pd.DataFrame | None = None,
    cache_dir: Path | None = None,
    extracted: pd.DataFrame | None = None,
    summary_tree: pd.DataFrame | None = None,
    findings: pd.DataFrame | None = None,
) -> Iterator[QAEngine]:
    """The engine over the stores of partition ``query`` (the profile's ``answers``,
    ``vector_index`` and ``knowledge_graph`` sections) and the graph ``schema`` its graph was
    loaded with; stores are closed on exit."""
    dictionaries = protocol.dictionaries()
    with ExitStack() as opened:  # chunk store first, then graph: the one order, so waiting never deadlocks
        store = open_chunk_store(settings.vector_index)
        opened.callback(store.close)
        graph_store = open_graph_store(settings.knowledge_graph)
        opened.callback(graph_store.close)
        yield build_engine(
            settings.answers,
            query=query,
            store=store,
            embedder=query_encoder(chunk_encoder(settings.vector_index)),
            graph=graph_store,
            schema=schema,
            spellings=term_spellings(dictionaries, canonical_terms),
            chunks=chunks,
            library=library,
            broader=broader_terms(protocol, dictionaries),
            cache_dir=cache_dir,
            protocol=protocol,
            extracted=extracted,
            summary_tree=summary_tree,
            findings=findings,
        )


def qa_engine(
    settings: AssetSettings,
    query: str,
    protocol: Protocol,
    schema: GraphSchema,
    chunks: pd.DataFrame,
    library: pd.DataFrame,
    terms: pd.DataFrame | None,
    extracted: pd.DataFrame | None = None,
    summary_tree: pd.DataFrame | None = None,
    findings: pd.DataFrame | None = None,
):
    """The QA engine over the stores of one query (a context manager); ``extracted``
    (``extracted_fields``) serves the numeric route, ``summary_tree`` the global route and ``findings``
    the synthesis route."""
    return open_engine(
        settings,
        query=query,
        protocol=protocol,
        schema=schema,
        chunks=chunks,
        library=library,
        canonical_terms=terms,
        cache_dir=hysem_home() / "llm_cache" / "answers",
        extracted=extracted,
        summary_tree=summary_tree,
        findings=findings,
    )


def tables_engine(settings: AssetSettings, query: str, tables: Mapping[str, pd.DataFrame | None]):
    """:func:`qa_engine` over a partition's tables by asset name (``vector_index``, ``library``,
    ``canonical_terms`` and, when present, ``extracted_fields``, ``summary_tree`` and ``findings``), with the
    query's protocol and the graph schema of every protocol, as the graph was loaded."""
    protocol = review_for(query).protocol
    return qa_engine(
        settings,
        query,
        protocol,
        graph_schema(load_protocols(), protocol),
        tables["vector_index"],
        tables["library"],
        tables["canonical_terms"],
        tables.get("extracted_fields"),
        tables.get("summary_tree"),
        tables.get("findings"),
    )
