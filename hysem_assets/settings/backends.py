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

    temperature: float = Field(0.0, ge=0, description="0 answers the same way every time.")
    max_tokens: int = Field(2048, ge=1, description="Longest answer in tokens.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling; none: the server's default.")
    seed: int | None = None

    def as_dict(self) -> dict[str, float | int]:
        """The parameters that are set, as sent to a server and hashed into cache keys."""
        return self.model_dump(exclude_none=True)


StructuredOutput = Literal["json_schema", "json_object", "ollama", "none"]


class BackendConfigError(ValueError):
    """A backend description that does not match any backend's expected shape."""


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    cache: bool = Field(
        True,
        description="Replay answers from disk (keyed by server, model, messages, schema and parameters); only answers that satisfy their schema are kept.",
    )
    cache_dir: Path | None = Field(None, description="Where cached answers live; default `$HYSEM_HOME/llm_cache`.")
    max_concurrency: int = Field(4, ge=1, description="Requests in flight at once.")
    params: GenerationParams = Field(
        default_factory=GenerationParams, description="Sampling: temperature, max_tokens, top_p, seed."
    )


class _Http(_Common):
    model: str = Field(description="The model name the server serves.")
    base_url: str | None = Field(None, description="The API root, e.g. `http://127.0.0.1:8000/v1`.")
    base_url_env: str | None = Field(
        "HYSEM_LLM_URL", description="An environment variable that, when set, replaces `base_url`."
    )
    api_key_env: str = Field(
        "HYSEM_LLM_API_KEY",
        description="The environment variable holding the API key (sent as a Bearer token, never logged).",
    )
    timeout_s: float = Field(
        300.0, gt=0, description="Seconds a request may wait for the server's answer before it is retried."
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="Seconds to open a connection.")
    total_timeout_s: float = Field(
        600.0,
        gt=0,
        description="Seconds one request may take in all (connecting, waiting, the whole answer) before it is retried; a server that drips its answer is cut here.",
    )
    max_retries: int = Field(3, ge=0, description="Retries of a request that failed or timed out.")
    backoff_base_s: float = Field(1.0, ge=0, description="First wait between retries; doubles each time.")
    backoff_max_s: float = Field(30.0, ge=0, description="Longest wait between retries.")
    requests_per_second: float = Field(50.0, gt=0, description="Requests started per second at most.")
    strict: bool = Field(
        True, description="Ask the server for output that matches the schema exactly (json_schema only)."
    )


class VllmConfig(_Http):
    """A ``vllm serve`` server; structured output always through ``response_format`` json_schema."""

    backend: Literal["vllm"]
    base_url: str | None = Field("http://127.0.0.1:8000/v1", description="The server's API root.")


class OpenAIConfig(_Http):
    """Any OpenAI-compatible server, with how it spells structured output.

    ``base_url`` is the API root a client library would take (``http://host:8080/v1``),
    except for ``structured_output: ollama``, which talks to Ollama's native ``/api/chat``
    and takes the server root (``http://host:11434``).
    """

    backend: Literal["openai"]
    structured_output: StructuredOutput = Field(
        "json_schema", description="How the server is asked for JSON: json_schema, json_object, ollama or none."
    )


class VllmInprocConfig(_Common):
    """``vllm.LLM`` inside the asset's process, on the GPUs the process can see."""

    backend: Literal["vllm_inproc"]
    model: str = Field(description="A model name or a path to its weights.")
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs one model is split across.")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1, description="Share of each GPU's memory vLLM may take.")
    max_model_len: int | None = Field(None, ge=1, description="Longest context; default the model's own.")
    engine_args: dict[str, Any] = Field(
        default_factory=dict,
        description="Further keyword arguments for `vllm.LLM` (dtype, quantization, enforce_eager...).",
    )
    max_concurrency: int = Field(64, ge=1, description="Requests gathered into one engine batch at most.")


class ExtractiveConfig(_Common):
    """The embedded default: dictionaries, noun phrases, cues, regular expressions and MiniLM ranking.

    Its fields and dictionaries come from the query's review protocol, not from here.
    """

    backend: Literal["extractive"]
    embedding_model: str | None = Field(
        None, description="A sentence-transformers model path or name; default the packaged all-MiniLM-L6-v2."
    )
    device: str = Field("cpu", description="Where the embedding model runs (`cpu`, `cuda:0`).")
    sentences: int = Field(
        2, ge=1, description="Sentences kept for a text field, most similar to the field's explanation first."
    )
    min_similarity: float = Field(
        0.1,
        ge=-1,
        le=1,
        description="Below this cosine similarity a sentence is not an answer (the field stays empty).",
    )
    embedding_backend: Literal["onnx", "onnx-int8", "torch"] = Field(
        "onnx-int8",
        description="How a CPU embeds: onnx (ONNX Runtime, torch's vectors, faster), onnx-int8, torch; a GPU runs torch.",
    )
    sentence_budget: int = Field(
        128,
        ge=0,
        description="Most sentences of one excerpt embedded for similarity; a longer one embeds its opening and the sentences that share most words with the protocol (extraction/focus.py). 0: every sentence.",
    )
    sentence_shortlist: int = Field(
        3,
        ge=0,
        description="Where a field wants the one sentence most like its description (a category stated nowhere in cue words, a text field's fallback), the sentences besides the first that are embedded: those sharing most words with the description (extraction/reading.py). 0: every sentence.",
    )
    tagger_budget: int = Field(
        2048,
        ge=0,
        description="Most word pieces of one excerpt the span tagger reads (fields with `method: tagger:...`): the title and abstract, then the sections named like methods and results (pico/tagger.py). 0: all of it.",
    )


class EmbeddedGeneratorConfig(BaseModel):
    """The embedded answer generator: the question's most similar sentences, quoted and cited.

    Keys left out or null keep the generator's own defaults.
    """

    model_config = ConfigDict(extra="forbid")

    backend: Literal["extractive"]
    claims: int | None = Field(None, ge=1, description="Sentences quoted as claims at most.")
    min_similarity: float | None = Field(
        None, ge=-1, le=1, description="Below this cosine similarity to the question a sentence is not quoted."
    )
    margin: float | None = Field(
        None, ge=0, description="How far below the best sentence's similarity a claim may stand."
    )


class RulesAuditorConfig(BaseModel):
    """The embedded auditor: each claim checked for relevance to the question and support in its source.

    Keys left out or null keep the auditor's own defaults.
    """

    model_config = ConfigDict(extra="forbid")

    backend: Literal["rules"]
    min_relevance: float | None = Field(
        None, ge=-1, le=1, description="Below this similarity to the question a claim is irrelevant."
    )
    min_support: float | None = Field(
        None, ge=-1, le=1, description="Below this similarity to its source a claim is unsupported."
    )


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


def _fields_at(model: type[BaseModel], path: tuple) -> dict[str, Any]:
    """The fields of the section at ``path`` inside ``model`` (``("params",)``: the sampling keys)."""
    for part in path:
        model = model.model_fields[part].annotation
    return model.model_fields


def check_section(kind: str, config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``config`` unchanged when it is one of the backends section ``kind`` accepts.

    Otherwise a :class:`ValueError` that names the backends allowed, or the key that is wrong
    and the keys its backend allows, for the profile's error message.
    """
    models = {model.model_fields["backend"].annotation.__args__[0]: model for model in SECTION_BACKENDS[kind]}
    name = config.get("backend")
    if not isinstance(name, str) or name not in models:
        raise ValueError(f"`backend` must be one of {', '.join(sorted(models))} (got {name!r})")
    model = models[name]
    try:
        model.model_validate(dict(config))
    except ValidationError as exc:
        problems = []
        for problem in exc.errors():
            key = ".".join(map(str, problem["loc"]))
            if problem["type"] == "extra_forbidden":
                allowed = ", ".join(sorted(_fields_at(model, problem["loc"][:-1])))
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
        "total_timeout_s",
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
