"""Dagster resources, one per profile section, built once from one typed profile.

``build_resources`` reads the profile that ``HYSEM_PROFILE`` names (a file in
``resources/``) and turns each of its sections into a ``ConfigurableResource``:
``definitions.py`` and the ``hysem`` command call it, so a run and the command line
use the same settings; the Dagster UI lists every resource with its config, the
launchpad can override it, and tests swap one for another. Asset bodies receive
resources and never read the profile themselves.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dagster import Config, ConfigurableResource, InitResourceContext
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from hysem_assets.defs.storage import ParquetStorage
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.library.table import CitationSettings, load_citation_settings
from hysem_assets.mirror.server import MirrorServer, bundled_snapshot_dirs
from hysem_assets.qa.questions import questions_for
from hysem_assets.settings import profile as sections
from hysem_assets.settings import redaction
from hysem_assets.settings.catalog import Review, review_for
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.profile import Profile, load_settings
from hysem_assets.settings.protocols import Protocol, load_protocols
from hysem_assets.settings.queries import EntryWindow, QuerySpec, get_query
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, no_progress
from hysem_assets.sources.citations import ChaseOutcome
from hysem_assets.sources.endpoints import base_url, chase, fetch, lookup, needs_mirror, resolve_endpoint
from hysem_assets.sources.lookups import LookupOutcome
from hysem_assets.sources.registry import CITATIONS_FROM, check_profile, mirrored
from hysem_assets.stores.chunks import ChunkVectors
from hysem_assets.stores.connect import chunk_encoder, open_chunk_store, open_graph_store
from hysem_assets.stores.graph import GraphStore
from hysem_assets.topics.config import TopicSettings, load_topic_settings

if TYPE_CHECKING:  # imported where used: parsing pulls in Docling, which most steps never need
    from hysem_assets.fulltext.download import PdfLimits
    from hysem_assets.parsing.limits import WorkerLimits
    from hysem_assets.parsing.options import ParseOptions

Section = TypeVar("Section", bound=BaseModel)


def as_config(section: type[Section]) -> type[Section]:
    """The profile section ``section`` as Dagster ``Config``, so the UI shows its fields and the
    launchpad checks overrides; a subclass of the section that takes a section as it is."""

    def from_section(cls: type, data: Any) -> Any:
        return data.model_dump() if isinstance(data, section) and not isinstance(data, cls) else data

    namespace = {
        "__module__": __name__,
        "__doc__": section.__doc__,
        "_from_section": model_validator(mode="before")(classmethod(from_section)),
    }
    return type(section.__name__, (section, Config), namespace)


SourceSettings = as_config(sections.SourceSettings)
HttpSettings = as_config(sections.HttpSettings)
PdfSettings = as_config(sections.PdfSettings)
ParsingSettings = as_config(sections.ParsingSettings)
ScreeningSettings = as_config(sections.ScreeningSettings)
ExtractionSettings = as_config(sections.ExtractionSettings)
TopicsSettings = as_config(sections.TopicsSettings)
TermsSettings = as_config(sections.TermsSettings)
VectorIndexSettings = as_config(sections.VectorIndexSettings)
GraphSettings = as_config(sections.GraphSettings)
AnswerSettings = as_config(sections.AnswerSettings)

#: The bundled mirror checks that a key is sent, as Scopus does, but any value passes.
MIRROR_API_KEY = "sample-snapshot"


class ScholarlyApis(ConfigurableResource):
    """Endpoints of every source and service of the source registry.

    With ``mirror`` on (the embedded default), the bundled sample snapshot is served on
    127.0.0.1 for the duration of the step to every source without a URL, so the same
    HTTP clients run offline. API keys come from the environment when a client is built.
    """

    mirror: bool = Field(False, description="Serve the bundled sample snapshot to sources without a URL.")
    sources: dict[str, SourceSettings] = Field(default_factory=dict, description="HTTP sources by name.")
    http: HttpSettings = Field(default_factory=HttpSettings, description="Timeouts and retries.")
    allow_partial_results: bool = Field(
        False, description="Let a fetch that lost pages after retries replace a complete one and flow on."
    )

    _profile: Profile = PrivateAttr()
    _mirror: MirrorServer | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._profile = Profile(name="scholarly_apis", mirror=self.mirror, sources=self.sources, http=self.http)
        if needs_mirror(self._profile, list(mirrored())):
            self._mirror = MirrorServer(bundled_snapshot_dirs())
            self._mirror.start()

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        if self._mirror is not None:
            self._mirror.stop()

    def endpoint(self, source: str, spec: QuerySpec | None = None) -> Endpoint:
        mirror_urls = self._mirror.base_urls if self._mirror else None
        endpoint = resolve_endpoint(source, self._profile, spec.mailto if spec else None, mirror_urls)
        served_by_mirror = mirror_urls is not None and endpoint.base_url == mirror_urls.get(source, "").rstrip("/")
        if served_by_mirror and not endpoint.api_key:
            endpoint = replace(endpoint, api_key=MIRROR_API_KEY)
        return endpoint

    def base_url(self, source: str) -> str:
        """Where ``source`` lives (environment variable, profile, mirror, public API)."""
        return base_url(source, self._profile, self._mirror.base_urls if self._mirror else None)

    def fetch(
        self,
        source: str,
        spec: QuerySpec,
        progress: ProgressCallback = no_progress,
        window: EntryWindow | None = None,
    ) -> FetchOutcome:
        return fetch(self.endpoint(source, spec), spec, self.http, progress, window)

    def lookup(
        self, source: str, dois: list[str], spec: QuerySpec, progress: ProgressCallback = no_progress
    ) -> LookupOutcome:
        return lookup(self.endpoint(source, spec), dois, self.http, progress)

    def chase(
        self, seeds: list[str], spec: QuerySpec, known: set[str], progress: ProgressCallback = no_progress
    ) -> ChaseOutcome:
        """The citations of ``seeds`` as the query's ``citations`` settings ask; ``known`` works get no record."""
        return chase(self.endpoint(CITATIONS_FROM, spec), seeds, spec.citations, self.http, progress, known)


class PdfFetcher(ConfigurableResource):
    """Limits of the open-access PDF downloads (``pdfs``)."""

    settings: PdfSettings = Field(default_factory=PdfSettings, description="Size cap, timeouts, rates.")

    def limits(self) -> PdfLimits:
        from hysem_assets.fulltext.download import PdfLimits

        s = self.settings
        return PdfLimits(
            max_bytes=int(s.max_megabytes * 2**20),
            timeout_s=s.timeout_s,
            max_redirects=s.max_redirects,
            requests_per_second=s.requests_per_second,
            max_concurrency=s.max_concurrency,
        )


class PdfParser(ConfigurableResource):
    """The Docling pipeline of ``parsed_docs``, its model artifacts and its placement."""

    settings: ParsingSettings = Field(default_factory=ParsingSettings, description="Pipeline, OCR, devices, workers.")

    def options(self) -> ParseOptions:
        """What each parse worker is told (the placement, devices and workers, stays with the asset)."""
        from hysem_assets.parsing.options import ParseOptions

        s = self.settings
        return ParseOptions(
            pipeline=s.pipeline,
            artifacts_path=Path(s.artifacts_path) if s.artifacts_path else None,
            num_threads=s.num_threads,
            table_structure=s.table_structure,
            formula_enrichment=s.formula_enrichment,
            ocr=s.ocr,
            ocr_engine=s.ocr_engine,
            layout_heuristics=s.layout_heuristics,
            document_timeout_s=s.document_timeout_s,
            max_pages=s.max_pages,
            max_page_content_mb=s.max_page_content_mb,
            pages_per_range=s.pages_per_range,
        )

    def limits(self) -> WorkerLimits:
        """What the pool enforces on each worker: its memory and each document's wall time."""
        from hysem_assets.parsing.limits import WorkerLimits

        return WorkerLimits(memory_mb=self.settings.max_memory_mb, seconds=self.settings.max_seconds)


class Screener(ConfigurableResource):
    """What goes on to full text before screening is finished, and the recall that finishes it (``screening``)."""

    settings: ScreeningSettings = Field(default_factory=ScreeningSettings, description="Threshold, target recall.")


class FieldExtractor(ConfigurableResource):
    """The extraction model of ``extracted_fields`` and how text is fed to it."""

    settings: ExtractionSettings = Field(default_factory=ExtractionSettings, description="Backend and chunking.")


class TopicModeller(ConfigurableResource):
    """Processes for the topic grid and the model that names topics (``topics``)."""

    settings: TopicsSettings = Field(default_factory=TopicsSettings, description="Workers and labelling model.")


class TermUnifier(ConfigurableResource):
    """The embedding model and thresholds of synonym unification (``canonical_terms``)."""

    settings: TermsSettings = Field(default_factory=TermsSettings, description="Model, device, thresholds.")


class ChunkStore(ConfigurableResource):
    """The chunk store (Qdrant, embedded or a server) with its chunking and embedding model."""

    settings: VectorIndexSettings = Field(default_factory=VectorIndexSettings, description="Store, model, chunking.")

    def open(self) -> ChunkVectors:
        return open_chunk_store(self.settings)

    def encoder(self) -> Encoder:
        """The model that embeds chunks and questions alike (see :func:`chunk_encoder`)."""
        return chunk_encoder(self.settings)


class GraphDatabase(ConfigurableResource):
    """The knowledge graph store: embedded ladybug or a Neo4j server."""

    settings: GraphSettings = Field(default_factory=GraphSettings, description="Backend, file or server, batch size.")

    def open(self) -> GraphStore:
        return open_graph_store(self.settings)


class ReviewConfig(ConfigurableResource):
    """The review's configuration in config/: each partition's query (queries.yaml), the
    protocol it names (protocols/) and its questions (questions.yaml), the topic grid and the
    citation style. Assets ask this
    resource, never the files."""

    def review(self, slug: str) -> Review:
        return review_for(slug)

    def query(self, slug: str) -> QuerySpec:
        return get_query(slug)

    def protocol(self, slug: str) -> Protocol:
        return review_for(slug).protocol

    def protocols(self) -> dict[str, Protocol]:
        """Every protocol that loads: the graph schema is their union."""
        return load_protocols()

    def questions(self, slug: str) -> list[str]:
        """config/questions.yaml: the questions ``answers`` asks of query ``slug`` by default."""
        return questions_for(slug)

    def topic_settings(self) -> TopicSettings:
        """config/topics.yaml: the topic model's grid and preprocessing."""
        return load_topic_settings()

    def citation_settings(self) -> CitationSettings:
        """config/citations.yaml: the library's default citation style and locale."""
        return load_citation_settings(config_dir() / "citations.yaml")


class AnswerModels(ConfigurableResource):
    """Retrieval depth, the revise loop and the generator, auditor and Cypher models of ``answers``."""

    settings: AnswerSettings = Field(default_factory=AnswerSettings, description="Retrieval and models.")


def build_resources(profile: Profile | None = None) -> dict[str, Any]:
    """Every resource of the code location from one profile (default: the active one)."""
    profile = profile or load_settings().profile
    check_profile(profile)
    redaction.declare_profile_secrets(profile.model_dump())
    redaction.install_on_dagster()
    sections = profile.assets
    return {
        "io_manager": ParquetStorage(),
        "scholarly_apis": ScholarlyApis(
            mirror=profile.mirror,
            sources=dict(profile.sources),
            http=profile.http,
            allow_partial_results=profile.allow_partial_results,
        ),
        "pdf_fetcher": PdfFetcher(settings=profile.pdfs),
        "screener": Screener(settings=sections.screening),
        "pdf_parser": PdfParser(settings=sections.parsed_docs),
        "field_extractor": FieldExtractor(settings=sections.extracted_fields),
        "topic_modeller": TopicModeller(settings=sections.topics),
        "term_unifier": TermUnifier(settings=sections.canonical_terms),
        "chunk_store": ChunkStore(settings=sections.vector_index),
        "graph_database": GraphDatabase(settings=sections.knowledge_graph),
        "answer_models": AnswerModels(settings=sections.answers),
        "review_config": ReviewConfig(),
    }
