"""Chat over HTTP with vLLM, Ollama, llama.cpp's server or any OpenAI-compatible API.

Requests go through the project's :class:`~hysem_assets.net.http.HttpClient`, so a
model server gets the same timeouts, rate limit and retries with backoff (429, 5xx,
timeouts, dropped connections) as every scholarly API. Servers differ only in how they
spell structured output; each spelling is a small :class:`Dialect`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hysem_assets import __version__
from hysem_assets.llm.completion import Completion, LLMError, Message
from hysem_assets.net.http import FetchError, HttpClient, RetryPolicy, make_session
from hysem_assets.settings.backends import (
    BackendConfigError,
    GenerationParams,
    OpenAIConfig,
    StructuredOutput,
    VllmConfig,
)
from hysem_assets.settings.environment import variable
from hysem_assets.settings.profile import HttpSettings
from hysem_assets.settings.redaction import redact

Schema = Mapping[str, Any]
#: (text, prompt tokens, completion tokens, finish reason) read from a server's answer.
Reply = tuple[str, int, int, str | None]


@dataclass(frozen=True)
class Dialect:
    """Where a server takes chat requests, how it wants the schema, and how it answers."""

    path: str
    build: Callable[[str, Sequence[Message], Schema | None, GenerationParams, bool], dict[str, Any]]
    read: Callable[[Mapping[str, Any]], Reply]


def schema_name(schema: Schema) -> str:
    """The ``json_schema.name`` OpenAI-style servers require: the schema's title, made safe."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]


def with_schema_instruction(messages: Sequence[Message], schema: Schema) -> list[Message]:
    """The messages with the schema spelled out in the system prompt.

    For servers that cannot constrain decoding to a schema, the prompt is the only place
    the model learns the expected shape; the first system message carries it (chat
    templates of several models accept a system message only in first position).
    """
    instruction = "Answer with one JSON object that matches this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False
    )
    if messages and messages[0]["role"] == "system":
        first = {**messages[0], "content": messages[0]["content"] + "\n\n" + instruction}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def _chat_completions(structured_output: StructuredOutput) -> Callable[..., dict[str, Any]]:
    def build(
        model: str, messages: Sequence[Message], schema: Schema | None, params: GenerationParams, strict: bool
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": list(messages), **params.as_dict()}
        if schema is None:
            return body
        if structured_output == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name(schema), "schema": dict(schema), "strict": strict},
            }
            return body
        body["messages"] = with_schema_instruction(messages, schema)
        if structured_output == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    return build


def _read_chat_completion(payload: Mapping[str, Any]) -> Reply:
    choice = payload["choices"][0]
    usage = payload.get("usage") or {}
    return (
        choice["message"].get("content") or "",
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        choice.get("finish_reason"),
    )


def _build_ollama_chat(
    model: str, messages: Sequence[Message], schema: Schema | None, params: GenerationParams, strict: bool
) -> dict[str, Any]:
    """Ollama's native ``/api/chat``: the schema goes in ``format``, sampling in ``options``."""
    options = {
        "temperature": params.temperature,
        "num_predict": params.max_tokens,
        "top_p": params.top_p,
        "seed": params.seed,
    }
    body: dict[str, Any] = {
        "model": model,
        "messages": list(messages),
        "stream": False,
        "options": {name: value for name, value in options.items() if value is not None},
    }
    if schema is not None:
        body["format"] = dict(schema)
    return body


def _read_ollama_chat(payload: Mapping[str, Any]) -> Reply:
    return (
        payload["message"].get("content") or "",
        int(payload.get("prompt_eval_count") or 0),
        int(payload.get("eval_count") or 0),
        payload.get("done_reason"),
    )


DIALECTS: dict[StructuredOutput, Dialect] = {
    "json_schema": Dialect("/chat/completions", _chat_completions("json_schema"), _read_chat_completion),
    "json_object": Dialect("/chat/completions", _chat_completions("json_object"), _read_chat_completion),
    "none": Dialect("/chat/completions", _chat_completions("none"), _read_chat_completion),
    "ollama": Dialect("/api/chat", _build_ollama_chat, _read_ollama_chat),
}


class OpenAICompatibleBackend:
    """One model on one server. The HTTP session is opened on first use in the running loop."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        http: HttpSettings,
        structured_output: StructuredOutput = "json_schema",
        strict: bool = True,
        api_key: str | None = None,
        requests_per_second: float = 50.0,
        max_concurrency: int = 4,
    ):
        self._model = model
        self.url = base_url.rstrip("/") + DIALECTS[structured_output].path
        self.dialect = DIALECTS[structured_output]
        self.strict = strict
        self.http = http
        self.requests_per_second = requests_per_second
        self.max_concurrency = max_concurrency
        self._headers = {"Content-Type": "application/json"} | (
            {"Authorization": f"Bearer {api_key}"} if api_key else {}
        )
        self._client: HttpClient | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r}, url={self.url!r})"

    @property
    def model(self) -> str:
        return self._model

    @property
    def server(self) -> str:
        """Where the model is served, as answers are cached under it: scheme, host, port and path, never
        credentials or query (so neither a secret nor the secrets this process happens to know shape it)."""
        parts = urlsplit(self.url)
        host = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else parts.hostname or ""
        return urlunsplit((parts.scheme, host + (f":{parts.port}" if parts.port else ""), parts.path, "", ""))

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Schema | None = None,
        params: GenerationParams | None = None,
    ) -> Completion:
        body = self.dialect.build(self._model, messages, schema, params or GenerationParams(), self.strict)
        try:
            _, raw = await self._http_client().request(self.url, data=json.dumps(body).encode("utf-8"))
        except FetchError as exc:
            raise LLMError(f"model {self._model!r} at {exc.url}: {exc.reason}") from exc
        try:
            text, prompt_tokens, completion_tokens, finish_reason = self.dialect.read(json.loads(raw))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            snippet = redact(raw[:4096].decode("utf-8", "replace"))[:200]
            raise LLMError(
                f"model {self._model!r} at {self.url}: unexpected response ({type(exc).__name__}): {snippet}"
            ) from exc
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish_reason,
        )

    def _http_client(self) -> HttpClient:
        if self._client is None:
            session = make_session(self.http, user_agent=f"hysem/{__version__} (llm client)")
            self._client = HttpClient(
                session,
                requests_per_second=self.requests_per_second,
                max_concurrency=self.max_concurrency,
                retry=RetryPolicy.from_settings(self.http),
                headers=self._headers,
                deadline_s=self.http.total_timeout_s,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.session.close()
            self._client = None


def from_config(config: VllmConfig | OpenAIConfig) -> OpenAICompatibleBackend:
    """The backend a profile describes; URL and key may come from the environment."""
    base_url = variable(config.base_url_env) or config.base_url
    if not base_url:
        hint = f" or the environment variable {config.base_url_env}" if config.base_url_env else ""
        raise BackendConfigError(f"The {config.backend!r} backend for model {config.model!r} needs base_url{hint}.")
    http = HttpSettings(
        connect_timeout_s=config.connect_timeout_s,
        read_timeout_s=config.timeout_s,
        total_timeout_s=config.total_timeout_s,
        max_retries=config.max_retries,
        backoff_base_s=config.backoff_base_s,
        backoff_max_s=config.backoff_max_s,
    )
    return OpenAICompatibleBackend(
        model=config.model,
        base_url=base_url,
        http=http,
        structured_output=config.structured_output if isinstance(config, OpenAIConfig) else "json_schema",
        strict=config.strict,
        api_key=variable(config.api_key_env),
        requests_per_second=config.requests_per_second,
        max_concurrency=config.max_concurrency,
    )
