"""The shape of a deployment profile: one typed section per resource.

A profile is a YAML file in ``resources/`` (the embedded default ``local``, ``online`` for the
public APIs on a laptop, the production example ``gpu``) chosen by ``HYSEM_PROFILE``. Every section here is a
pydantic model that forbids unknown keys, so a misspelled key fails when the profile is
read, naming the file, the key and the keys allowed there, instead of falling back to a
default. The sections become the config of the resources built in
``hysem_assets.defs.resources`` (as Dagster ``Config``), where the UI shows them and the
launchpad can override them; reading a profile imports no Dagster, so a command that only
reads one (``hysem ask``) starts quickly. Secrets never live here: only the names of
environment variables.

:func:`load_settings` is the one entry point: every command, the Dagster definitions and the
``ask`` path take their profile from it, and this is the one module that reads profile files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from hysem_assets.settings.backends import StructuredOutput, check_section
from hysem_assets.settings.environment import (
    BUNDLED,
    config_dir,
    home_and_origin,
    profile_name,
    variable,
)
from hysem_assets.settings.yamlfile import ConfigFileError, read_yaml_mapping

#: The parse pipelines and the native pipeline's OCR engines (``parsing/ocr.py`` builds them).
Pipeline = Literal["native", "standard"]
OcrEngine = Literal["tesseract", "rapidocr", "off"]
#: Rows a graph store writes per transaction.
GRAPH_BATCH_SIZE = 1000
#: Cosine similarity above which an extracted term joins a dictionary entry.
TERM_THRESHOLD = 0.55
#: Mean cosine similarity at which the terms of a field without a dictionary form one group:
#: MiniLM puts a term and its broader or narrower sibling near 0.80, spelling variants above 0.9.
GROUP_THRESHOLD = 0.85


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceSettings(_Section):
    """Endpoint and politeness limits of one HTTP source."""

    base_url: str | None = Field(
        None, description="Base URL; HYSEM_<SOURCE>_URL wins; none: the public API or the mirror."
    )
    requests_per_second: float = Field(3.0, gt=0, description="Request starts per second.")
    requests_per_second_with_key: float | None = Field(
        None, gt=0, description="Higher rate some services grant with an API key (NCBI: 10/s)."
    )
    max_concurrency: int = Field(4, ge=1, description="Requests in flight at once.")
    page_size: int = Field(200, ge=1, description="Records per page or batch.")


class HttpSettings(_Section):
    """Timeouts and retry policy shared by every HTTP client."""

    connect_timeout_s: float = Field(10.0, gt=0, description="Seconds to open a connection.")
    read_timeout_s: float = Field(60.0, gt=0, description="Seconds to wait for a response.")
    total_timeout_s: float = Field(
        300.0,
        gt=0,
        description="Seconds one request may take in all: connecting, headers and the whole body (a server that drips its body is cut here).",
    )
    max_retries: int = Field(5, ge=0, description="Retries of a failed request (429, 5xx, network errors).")
    backoff_base_s: float = Field(0.5, ge=0, description="First backoff; doubled per retry, with jitter.")
    backoff_max_s: float = Field(60.0, ge=0, description="Longest backoff between retries.")


class PdfSettings(_Section):
    """Limits of the open-access PDF downloads, and whether JATS XML full texts come first."""

    max_megabytes: float = Field(50.0, gt=0, description="Largest PDF downloaded.")
    timeout_s: float = Field(300.0, gt=0, description="Seconds for one response, request to last byte.")
    max_redirects: int = Field(5, ge=0, description="Redirects followed per link.")
    requests_per_second: float = Field(2.0, gt=0, description="Request starts per second to any one host.")
    max_concurrency: int = Field(4, ge=1, description="Downloads in flight at once.")
    jats_full_text: bool = Field(
        True,
        description="Before any PDF, fetch the open-access JATS XML full text of a work with a PMCID (Europe PMC), "
        "parsed without a PDF step; false: PDFs only, and no full-text requests.",
    )


class ParsingSettings(_Section):
    """``assets.parsed_docs``: the Docling pipeline, its model artifacts and placement."""

    pipeline: Pipeline = Field(
        "native", description="native: weight-free text layer and reconstruction; standard: layout models."
    )
    artifacts_path: str | None = Field(None, description="Folder of pre-downloaded Docling models (standard pipeline).")
    devices: list[str] = Field(
        default_factory=list, description="One worker process is pinned to each in turn; empty: CPU."
    )
    workers: int = Field(1, ge=1, description="Parse worker processes.")
    num_threads: int = Field(1, ge=1, description="Threads per worker.")
    table_structure: bool = Field(True, description="Standard pipeline: TableFormer table structure.")
    formula_enrichment: bool = Field(True, description="Standard pipeline: LaTeX for formulas.")
    ocr_engine: OcrEngine = Field(
        "tesseract", description="Native pipeline: OCR engine for pages without a usable text layer."
    )
    ocr: bool = Field(False, description="Standard pipeline: Docling's own OCR, with its models from artifacts_path.")
    layout_heuristics: bool = Field(
        True, description="Standard pipeline: line-number, formula and sparse-table corrections."
    )
    document_timeout_s: float | None = Field(
        600.0, description="Seconds after which Docling stops a document and keeps the pages done; none: no limit."
    )
    max_pages: int | None = Field(
        1000, ge=1, description="Documents with more pages get status too_large; none: no limit."
    )
    max_page_content_mb: float | None = Field(
        16.0, gt=0, description="Decompressed content of any one page above which a document is too_large; none: off."
    )
    max_memory_mb: int | None = Field(
        3072, ge=256, description="Memory each worker may allocate (OS limit); a document over it: resource_limit."
    )
    max_seconds: float | None = Field(
        1200.0, gt=0, description="Wall time per document; its worker is killed and replaced: resource_limit."
    )
    pages_per_range: int = Field(
        100, ge=1, description="Longer documents are converted this many pages at a time, bounding memory."
    )


class ScreeningSettings(_Section):
    """``assets.screening``: what goes on to full text while screening is not finished, and when it is."""

    undecided_top_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Until the stopping rule is met, undecided works ranked within this top share of all works go "
        "on to pdfs, parsing and extraction beside the included ones (1: all of them; 0: included works only).",
    )
    target_recall: float = Field(
        0.95, gt=0, lt=1, description="Recall the stopping rule must guarantee (with 95% confidence) to stop."
    )


@dataclass(frozen=True)
class BackendSection:
    """Checks a model section's mapping against the backends section ``kind`` accepts
    (:data:`hysem_assets.settings.backends.SECTION_BACKENDS`) and keeps it as written."""

    kind: str

    def __call__(self, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else dict(check_section(self.kind, value))


def _backend(kind: str) -> AfterValidator:
    return AfterValidator(BackendSection(kind))


class ExtractionSettings(_Section):
    """``assets.extracted_fields``: the extraction model and how text is fed to it."""

    llm: Annotated[dict[str, Any], _backend("extraction")] = Field(
        default_factory=lambda: {"backend": "extractive"},
        description="Backend config: extractive (embedded), vllm, openai or vllm_inproc, with model and endpoint.",
    )
    chunk_tokens: int = Field(8000, ge=100, description="Tokens of text per prompt.")
    overlap: int = Field(500, ge=0, description="Tokens shared by consecutive chunks.")
    concurrency: int = Field(4, ge=1, description="Documents extracted at once.")
    max_attempts: int = Field(3, ge=1, description="Tries per chunk when the answer is not valid JSON.")


class TopicsSettings(_Section):
    """``assets.topics``: processes for the model grid, and the model that names topics."""

    workers: int = Field(1, ge=1, description="Processes fitting the grid's models.")
    llm: Annotated[dict[str, Any] | None, _backend("model")] = Field(
        None, description="Backend config naming topics; none: their top words."
    )


class TermsSettings(_Section):
    """``assets.canonical_terms``: the embedding model and the thresholds of synonym unification."""

    model: str | None = Field(
        None, description="sentence-transformers model name or folder; none: the packaged all-MiniLM-L6-v2."
    )
    device: str = Field("cpu", description="Torch device of the model.")
    threshold: float = Field(TERM_THRESHOLD, gt=0, le=1, description="Lowest cosine similarity that unifies a term.")
    group_threshold: float = Field(
        GROUP_THRESHOLD, gt=0, le=1, description="Lowest mean cosine similarity grouping terms without a dictionary."
    )
    thresholds: dict[str, float] = Field(
        default_factory=dict, description="Per-field thresholds overriding `threshold` (or `group_threshold`)."
    )


class VectorIndexSettings(_Section):
    """``assets.vector_index``: the chunk store (Qdrant) and the chunking and embedding choices."""

    url: str | None = Field(None, description="Qdrant server URL (HYSEM_QDRANT_URL wins); none: embedded, in `path`.")
    path: str | None = Field(None, description="Qdrant Edge folder (embedded store); none: $HYSEM_HOME/qdrant.")
    collection: str = Field("chunks", description="Collection holding every query's chunks (dense and BM25 vectors).")
    lock_timeout_s: float = Field(
        3600, ge=0, description="Seconds to wait for another process to close the embedded store."
    )
    model: str | None = Field(
        None, description="sentence-transformers model name or folder; none: the packaged all-MiniLM-L6-v2."
    )
    device: str = Field("cpu", description="Torch device of the embedding model.")
    embedding_backend: Literal["onnx", "onnx-int8", "torch"] = Field(
        "onnx-int8",
        description="How the CPU embeds chunks: onnx-int8 (int8 weights, 2.2-2.8x torch's speed, at most 0.0043 "
        "nDCG@10 lost, questions still embedded in float32), onnx (ONNX Runtime, torch's vectors, about 1.5x), "
        "torch (sentence-transformers); a GPU device runs torch.",
    )
    batch_size: int = Field(64, ge=1, description="Chunks embedded per batch.")
    max_tokens: int = Field(200, ge=8, description="Chunk size in the model's tokens (MiniLM reads at most 256).")
    overlap: int = Field(40, ge=0, description="Tokens shared by consecutive chunks.")

    @model_validator(mode="after")
    def _overlap_fits(self) -> VectorIndexSettings:
        if self.overlap >= self.max_tokens:
            raise ValueError("overlap must be smaller than max_tokens")
        return self


class GraphSettings(_Section):
    """``assets.knowledge_graph``: the graph store, embedded (ladybug) or Neo4j."""

    backend: Literal["ladybug", "neo4j"] = Field(
        "ladybug", description="ladybug (embedded file) or neo4j (Bolt server)."
    )
    path: str | None = Field(None, description="ladybug database file; none: $HYSEM_HOME/graph/kg.lbug.")
    buffer_pool_mb: int = Field(512, ge=64, description="ladybug buffer pool.")
    lock_timeout_s: float = Field(3600, ge=0, description="Seconds to wait for another process to close the file.")
    uri: str = Field("bolt://127.0.0.1:7687", description="Neo4j Bolt URI (HYSEM_NEO4J_URI wins).")
    user: str = Field("neo4j", description="Neo4j user; the password comes from HYSEM_NEO4J_PASSWORD.")
    database: str | None = Field(None, description="Neo4j database; none: the server's default.")
    batch_size: int = Field(GRAPH_BATCH_SIZE, ge=1, description="Rows written per transaction.")


class AnswerSettings(_Section):
    """``assets.answers``: retrieval depth, the revise loop and the generator, auditor and Cypher models."""

    k: int = Field(8, ge=1, description="Context chunks per question.")
    depth: int = Field(50, ge=1, description="How deep each ranking goes before fusion.")
    hops: int = Field(1, ge=0, description="Co-occurrence window, in chunks, for questions naming two or more terms.")
    max_hops: int = Field(3, ge=0, description="Widest co-occurrence window tried.")
    min_dense_score: float = Field(0.3, ge=-1, le=1, description="Lowest dense score kept.")
    max_rounds: int = Field(3, ge=1, description="Draft-audit-revise rounds per question.")
    include_retracted: bool = Field(
        False, description="Answer from retracted works too, with a warning naming them; default: leave them out."
    )
    entity_list: bool = Field(
        False,
        description="Fuse the chunks the question's entities lead to (the entity graph) with the dense, keyword and "
        "graph lists; off by default: measured, it lowered nDCG@10 on every collection (benchmarks/entities.py).",
    )
    generator: Annotated[dict[str, Any], _backend("generator")] = Field(
        default_factory=lambda: {"backend": "extractive"}, description="Backend config of the generator."
    )
    auditor: Annotated[dict[str, Any], _backend("auditor")] = Field(
        default_factory=lambda: {"backend": "rules"}, description="Backend config of the auditor."
    )
    cypher: Annotated[dict[str, Any] | None, _backend("model")] = Field(
        None, description="Backend config of the model writing Cypher; none: templates only."
    )
    cypher_candidates: int = Field(
        3, ge=1, description="Queries the Cypher model samples per question; the one most of them agree on answers."
    )
    cypher_max_rows: int = Field(
        100,
        ge=1,
        description="Rows (names, or works when it names none) a model-written query's answer may have; more: discarded.",
    )
    router: Annotated[dict[str, Any] | None, _backend("model")] = Field(
        None, description="Backend config of the model routing questions no rule routes; none: those are local."
    )


#: What a model endpoint can serve: the model sections of ``assets``.
ModelRole = Literal["extraction", "topics", "generator", "auditor", "cypher", "router"]
#: Where each role's section lives in ``assets``.
ROLE_SECTIONS: dict[str, tuple[str, str]] = {
    "extraction": ("extracted_fields", "llm"),
    "topics": ("topics", "llm"),
    "generator": ("answers", "generator"),
    "auditor": ("answers", "auditor"),
    "cypher": ("answers", "cypher"),
    "router": ("answers", "router"),
}


class ModelEndpoint(_Section):
    """``model_endpoint``: one OpenAI-compatible server (Ollama, llama.cpp, vLLM, a hosted API) named by
    environment variables. When its URL variable is set, it serves the roles in ``serves``; when not, the
    profile's own sections do, so one profile runs with a model and without."""

    url_env: str = Field(
        "HYSEM_LLM_URL", description="Variable holding the API root, e.g. `http://127.0.0.1:11434/v1`."
    )
    model_env: str = Field("HYSEM_LLM_MODEL", description="Variable holding the model name the server serves.")
    api_key_env: str = Field("HYSEM_LLM_API_KEY", description="Variable holding the API key, if the server needs one.")
    structured_output: StructuredOutput = Field(
        "json_schema", description="How the server is asked for JSON: json_schema, json_object, ollama or none."
    )
    serves: list[ModelRole] = Field(
        default_factory=lambda: ["extraction", "topics", "generator", "auditor", "router"],
        description="The model sections it replaces: extraction, topics, generator, auditor, cypher, router.",
    )


class AssetSettings(BaseModel):
    """Per-asset backends and placement."""

    model_config = ConfigDict(extra="forbid")

    screening: ScreeningSettings = Field(default_factory=ScreeningSettings, description="Title and abstract screening.")
    parsed_docs: ParsingSettings = Field(default_factory=ParsingSettings, description="PDF parsing.")
    extracted_fields: ExtractionSettings = Field(default_factory=ExtractionSettings, description="Field extraction.")
    topics: TopicsSettings = Field(default_factory=TopicsSettings, description="Topic modelling.")
    canonical_terms: TermsSettings = Field(default_factory=TermsSettings, description="Synonym unification.")
    vector_index: VectorIndexSettings = Field(
        default_factory=VectorIndexSettings, description="Chunk store and embeddings."
    )
    knowledge_graph: GraphSettings = Field(default_factory=GraphSettings, description="Graph store.")
    answers: AnswerSettings = Field(default_factory=AnswerSettings, description="Question answering.")


class Profile(BaseModel):
    """One deployment profile, as read from ``resources/<name>.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The profile's name.")
    description: str = Field("", description="What the profile is for.")
    mirror: bool = Field(
        False, description="Serve the bundled sample snapshot on 127.0.0.1 for every source without a URL."
    )
    sources: dict[str, SourceSettings] = Field(
        default_factory=dict, description="HTTP sources by name (any of the source registry's)."
    )
    http: HttpSettings = Field(default_factory=HttpSettings, description="Timeouts and retries of every HTTP client.")
    allow_partial_results: bool = Field(
        False,
        description="Let a source whose pages still fail after retries replace a complete earlier fetch "
        "and flow on (`hysem materialize --allow-partial` for one run).",
    )
    pdfs: PdfSettings = Field(default_factory=PdfSettings, description="Open-access PDF downloads.")
    model_endpoint: ModelEndpoint | None = Field(
        None, description="An OpenAI-compatible server from the environment that serves the model sections when set."
    )
    assets: AssetSettings = Field(default_factory=AssetSettings, description="Per-asset backends and placement.")

    def source(self, name: str) -> SourceSettings:
        return self.sources.get(name) or SourceSettings()  # type: ignore[call-overload]


class ProfileError(ValueError):
    """A profile file is missing or does not match the expected shape."""


def _allowed_keys(location: tuple[Any, ...]) -> list[str]:
    """The keys a profile allows where the unknown key at ``location`` stands."""
    current: Any = Profile
    for part in location[:-1]:
        if get_origin(current) is dict:
            current = get_args(current)[1]  # ``part`` is a key of the mapping (a source's name)
            continue
        fields = getattr(current, "model_fields", {})
        if part not in fields:
            return []
        current = fields[part].annotation
    return sorted(getattr(current, "model_fields", {}))


def _describe(error: ValidationError) -> str:
    problems = []
    for problem in error.errors():
        location = tuple(problem["loc"])
        key = ".".join(map(str, location))
        if problem["type"] == "extra_forbidden":
            allowed = ", ".join(_allowed_keys(location)) or "none"
            problems.append(f"unknown key `{key}` (allowed here: {allowed})")
        else:
            problems.append(f"`{key}`: {problem['msg']}")
    return "; ".join(problems)


def read_profile(path: Path) -> Profile:
    """Read and validate one profile file; errors name the file, the key and what to fix."""
    try:
        data = read_yaml_mapping(path, expected="a mapping of keys (name, sources, http, pdfs, assets)").data
    except ConfigFileError as exc:
        raise ProfileError(f"Profile {exc}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise ProfileError(f"Profile {path} is invalid: {_describe(exc)}") from None


def with_model_endpoint(profile: Profile) -> Profile:
    """``profile`` with its model endpoint in the sections it serves, when the endpoint's URL variable is set."""
    endpoint = profile.model_endpoint
    if endpoint is None or (url := variable(endpoint.url_env)) is None:
        return profile
    model = variable(endpoint.model_env)
    if model is None:
        raise ProfileError(
            f"{endpoint.url_env} names a model server but {endpoint.model_env} is not set: set it to the name of "
            f"the model the server serves, or unset {endpoint.url_env} to run on the embedded default"
        )
    config = {
        "backend": "openai",
        "model": model,
        "base_url": url,
        "base_url_env": endpoint.url_env,
        "api_key_env": endpoint.api_key_env,
        "structured_output": endpoint.structured_output,
    }
    data = profile.model_dump()
    for role in endpoint.serves:
        section, key = ROLE_SECTIONS[role]
        data["assets"][section][key] = dict(config)
    return Profile.model_validate(data)


def bundled_profiles() -> Path:
    """The folder of the bundled deployment profiles (``local``, ``online``, ``gpu``)."""
    return BUNDLED / "profiles"


def profile_path(name: str | None = None) -> Path:
    """The profile file: ``name`` or ``HYSEM_PROFILE`` (a bundled name or a path), default ``local``."""
    name = name or profile_name()
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return Path(name).expanduser().resolve()
    return bundled_profiles() / f"{name}.yaml"


@dataclass(frozen=True)
class Settings:
    """What this process runs with: the typed profile and the file it came from, and the folders of its
    state (with what chose that folder) and of its configuration."""

    profile: Profile
    profile_file: Path
    home: Path
    home_origin: str
    config_dir: Path


def load_settings(name: str | None = None) -> Settings:
    """The settings of this process, read anew (the environment may change between calls in one process):
    the profile ``name`` or ``HYSEM_PROFILE``, ``HYSEM_HOME`` and the config folder."""
    home, origin = home_and_origin()
    return Settings(load_profile(name), profile_path(name), home, origin, config_dir())


def load_profile(name: str | None = None) -> Profile:
    """Read and validate the active profile, with its model endpoint where one is set; errors name the file
    (or the variable) and what to fix."""
    path = profile_path(name)
    if not path.is_file():
        available = sorted(p.stem for p in bundled_profiles().glob("*.yaml"))
        raise ProfileError(
            f"Profile file {path} does not exist. Set HYSEM_PROFILE to one of {available} "
            "or to the path of a profile YAML file."
        )
    return with_model_endpoint(read_profile(path))
