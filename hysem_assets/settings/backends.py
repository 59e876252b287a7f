"""The profile's description of one asset's model backend, validated before anything starts.

The ``backend`` key picks the shape; unknown keys are errors, so a typo in a profile
fails loudly instead of silently falling back to a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class GenerationParams(BaseModel):
    """Sampling parameters; part of the cache key, so equal parameters replay equal answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(0.0, ge=0)
    max_tokens: int = Field(2048, ge=1)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int | None = None

    def as_dict(self) -> dict[str, float | int]:
        """The parameters that are set, as sent to a server and hashed into cache keys."""
        return self.model_dump(exclude_none=True)


StructuredOutput = Literal["json_schema", "json_object", "ollama", "none"]


class BackendConfigError(ValueError):
    """A backend description that does not match any backend's expected shape."""


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    #: Replay answers from disk (keyed by model, messages, schema and parameters).
    cache: bool = True
    #: Where cached answers live; default ``$HYSEM_HOME/llm_cache``.
    cache_dir: Path | None = None
    #: Requests in flight at once.
    max_concurrency: int = Field(4, ge=1)
    params: GenerationParams = Field(default_factory=GenerationParams)


class _Http(_Common):
    model: str
    base_url: str | None = None
    #: An environment variable that, when set, replaces ``base_url``.
    base_url_env: str | None = "HYSEM_LLM_URL"
    #: The environment variable holding the API key (sent as a Bearer token, never logged).
    api_key_env: str = "HYSEM_LLM_API_KEY"
    #: Seconds a request may wait for the server's answer before it is retried.
    timeout_s: float = Field(300.0, gt=0)
    connect_timeout_s: float = Field(10.0, gt=0)
    max_retries: int = Field(3, ge=0)
    backoff_base_s: float = Field(1.0, ge=0)
    backoff_max_s: float = Field(30.0, ge=0)
    requests_per_second: float = Field(50.0, gt=0)
    #: Ask the server for output that matches the schema exactly (json_schema only).
    strict: bool = True


class VllmConfig(_Http):
    """A ``vllm serve`` server; structured output always through ``response_format`` json_schema."""

    backend: Literal["vllm"]
    base_url: str | None = "http://127.0.0.1:8000/v1"


class OpenAIConfig(_Http):
    """Any OpenAI-compatible server, with how it spells structured output.

    ``base_url`` is the API root a client library would take (``http://host:8080/v1``),
    except for ``structured_output: ollama``, which talks to Ollama's native ``/api/chat``
    and takes the server root (``http://host:11434``).
    """

    backend: Literal["openai"]
    structured_output: StructuredOutput = "json_schema"


class VllmInprocConfig(_Common):
    """``vllm.LLM`` inside the asset's process, on the GPUs the process can see."""

    backend: Literal["vllm_inproc"]
    model: str
    tensor_parallel_size: int = Field(1, ge=1)
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1)
    max_model_len: int | None = Field(None, ge=1)
    #: Further keyword arguments for ``vllm.LLM`` (dtype, quantization, enforce_eager...).
    engine_args: dict[str, Any] = Field(default_factory=dict)
    #: Requests gathered into one engine batch at most.
    max_concurrency: int = Field(64, ge=1)


class ExtractiveConfig(_Common):
    """The embedded default: dictionaries, noun phrases, cues, regular expressions and MiniLM ranking.

    Its fields and dictionaries come from the query's review protocol, not from here.
    """

    backend: Literal["extractive"]
    #: A sentence-transformers model path or name; default the packaged all-MiniLM-L6-v2.
    embedding_model: str | None = None
    device: str = "cpu"
    #: Sentences kept for a text field, most similar to the field's explanation first.
    sentences: int = Field(2, ge=1)
    #: Below this cosine similarity a sentence is not an answer (the field stays empty).
    min_similarity: float = Field(0.1, ge=-1, le=1)
    #: How a CPU embeds: onnx (ONNX Runtime, torch's vectors, faster), onnx-int8, torch; a GPU runs torch.
    embedding_backend: Literal["onnx", "onnx-int8", "torch"] = "onnx-int8"
    #: Most sentences of one excerpt embedded for similarity; a longer one embeds its opening and the
    #: sentences that share most words with the protocol (extraction/focus.py). 0: every sentence.
    sentence_budget: int = Field(128, ge=0)
    #: Most word pieces of one excerpt the span tagger reads (fields with ``method: tagger:...``): the title
    #: and abstract, then the sections named like methods and results (pico/tagger.py). 0: all of it.
    tagger_budget: int = Field(2048, ge=0)


class EmbeddedGeneratorConfig(BaseModel):
    """The embedded answer generator: the question's most similar sentences, quoted and cited.

    Keys left out keep the generator's own defaults.
    """

    model_config = ConfigDict(extra="forbid")

    backend: Literal["extractive"]
    #: Sentences quoted as claims at most.
    claims: int | None = Field(None, ge=1)
    #: Below this cosine similarity to the question a sentence is not quoted.
    min_similarity: float | None = Field(None, ge=-1, le=1)
    #: How far below the best sentence's similarity a claim may stand.
    margin: float | None = Field(None, ge=0)


class RulesAuditorConfig(BaseModel):
    """The embedded auditor: each claim checked for relevance to the question and support in its source.

    Keys left out keep the auditor's own defaults.
    """

    model_config = ConfigDict(extra="forbid")

    backend: Literal["rules"]
    min_relevance: float | None = Field(None, ge=-1, le=1)
    min_support: float | None = Field(None, ge=-1, le=1)


BackendConfig = Annotated[
    VllmConfig | OpenAIConfig | VllmInprocConfig | ExtractiveConfig,
    Field(discriminator="backend"),
]
_ADAPTER: TypeAdapter[BackendConfig] = TypeAdapter(BackendConfig)

_SERVERS = (VllmConfig, OpenAIConfig, VllmInprocConfig)
#: What each model section of a profile accepts: a model server, or the section's embedded backend.
SECTION_BACKENDS: dict[str, tuple[type[BaseModel], ...]] = {
    "extraction": (*_SERVERS, ExtractiveConfig),
    "generator": (*_SERVERS, EmbeddedGeneratorConfig),
    "auditor": (*_SERVERS, RulesAuditorConfig),
    "model": _SERVERS,
}


def check_section(kind: str, config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``config`` unchanged when it is one of the backends section ``kind`` accepts.

    Otherwise a :class:`ValueError` that names the backends allowed, or the key that is wrong
    and the keys its backend allows, for the profile's error message.
    """
    models = {model.model_fields["backend"].annotation.__args__[0]: model for model in SECTION_BACKENDS[kind]}
    name = config.get("backend")
    if name not in models:
        raise ValueError(f"`backend` must be one of {', '.join(sorted(models))} (got {name!r})")
    model = models[name]
    try:
        model.model_validate(dict(config))
    except ValidationError as exc:
        problems = []
        for problem in exc.errors():
            key = ".".join(map(str, problem["loc"]))
            if problem["type"] == "extra_forbidden":
                allowed = ", ".join(sorted(model.model_fields))
                problems.append(f"unknown key `{key}` for backend {name!r} (allowed: {allowed})")
            else:
                problems.append(f"`{key}`: {problem['msg']}")
        raise ValueError("; ".join(problems)) from None
    return config


def parse_backend_config(config: Mapping[str, Any]) -> BackendConfig:
    """Validate a profile's backend mapping; the error says which keys are wrong and why."""
    try:
        return _ADAPTER.validate_python(dict(config))
    except ValidationError as exc:
        raise BackendConfigError(f"Invalid LLM backend configuration: {exc}") from exc


#: Keys that change where a backend is reached, how it is paced or where it runs, never what it answers.
_TRANSPORT = frozenset(
    {
        "cache",
        "cache_dir",
        "max_concurrency",
        "base_url",
        "base_url_env",
        "api_key_env",
        "timeout_s",
        "connect_timeout_s",
        "max_retries",
        "backoff_base_s",
        "backoff_max_s",
        "requests_per_second",
        "device",
        "tensor_parallel_size",
        "gpu_memory_utilization",
    }
)


def answer_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a backend description that change its answers, for keys of results kept on disk.

    Every key counts but the transport ones, so a key added later invalidates kept results
    rather than being silently ignored.
    """
    described = parse_backend_config(config).model_dump(mode="json")
    return {key: value for key, value in described.items() if key not in _TRANSPORT}
