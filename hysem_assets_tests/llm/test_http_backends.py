"""The vllm and openai backends against a scripted server: request shapes, usage, timeouts, errors."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from hysem_assets.llm.cache import ResponseCache, cache_key
from hysem_assets.llm.cached import CachedBackend
from hysem_assets.llm.completion import Completion, LLMError
from hysem_assets.llm.registry import build_backend
from hysem_assets.settings.backends import BackendConfigError, GenerationParams
from hysem_assets_tests.llm.scripted_server import Reply, ScriptedLLMServer, Step, json_reply

MODEL = "Qwen/Qwen2.5-7B-Instruct"
SCHEMA: dict[str, Any] = {
    "title": "Answer",
    "type": "object",
    "properties": {"terms": {"type": "array", "items": {"type": "string"}}},
    "required": ["terms"],
    "additionalProperties": False,
}
MESSAGES = [{"role": "system", "content": "Extract terms."}, {"role": "user", "content": "PM2.5 and ozone."}]


def complete_once(backend: CachedBackend, **kwargs: Any) -> Completion:
    """One request in its own event loop, closing the backend's connections after, as an asset would."""

    async def run() -> Completion:
        try:
            return await backend.complete(MESSAGES, schema=SCHEMA, **kwargs)
        finally:
            await backend.aclose()

    return asyncio.run(run())


def test_vllm_sends_json_schema_response_format_and_sums_usage(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_LLM_API_KEY", "sk-test-secret")

    def sampling(body: dict) -> None:
        assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 64, 7)
        assert body["messages"] == MESSAGES

    steps = [
        Step(json_reply({"terms": ["PM2.5"]}, prompt_tokens=120, completion_tokens=9), sampling),
        Step(json_reply({"terms": ["ozone"]}, prompt_tokens=80, completion_tokens=6), sampling),
    ]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA, api_key="sk-test-secret") as server:
        backend = build_backend({"backend": "vllm", "model": MODEL, "base_url": server.url + "/v1", "cache": False})
        params = GenerationParams(temperature=0, max_tokens=64, seed=7)
        first = complete_once(backend, params=params)
        second = complete_once(backend, params=params)  # a second event loop: the session is reopened
    assert server.failures == []
    assert (first.parsed_json, second.parsed_json) == ({"terms": ["PM2.5"]}, {"terms": ["ozone"]})
    assert (first.prompt_tokens, first.completion_tokens, first.cached) == (120, 9, False)
    assert backend.usage.as_metadata() == {
        "llm_requests": 2,
        "llm_cache_hits": 0,
        "prompt_tokens": 200,
        "completion_tokens": 15,
        "total_tokens": 215,
    }
    assert "sk-test-secret" not in repr(backend.inner)


def test_ollama_adapter_puts_schema_in_format_and_reads_eval_counts():
    def options(body: dict) -> None:
        assert body["options"] == {"temperature": 0.0, "num_predict": 2048}

    steps = [Step(json_reply({"terms": ["ozone"]}, prompt_tokens=33, completion_tokens=4), options)]
    with ScriptedLLMServer(steps, model="qwen2.5:7b", schema=SCHEMA, dialect="ollama") as server:
        config = {
            "backend": "openai",
            "model": "qwen2.5:7b",
            "base_url": server.url,
            "structured_output": "ollama",
            "cache": False,
        }
        backend = build_backend(config)
        completion = complete_once(backend)
    assert server.failures == []
    assert (completion.parsed_json, completion.prompt_tokens, completion.completion_tokens) == (
        {"terms": ["ozone"]},
        33,
        4,
    )


def test_json_object_fallback_spells_the_schema_in_the_prompt():
    def json_mode(body: dict) -> None:
        assert body["response_format"] == {"type": "json_object"}
        assert '"terms"' in body["messages"][0]["content"] and body["messages"][0]["content"].startswith(
            "Extract terms."
        )

    steps = [Step(Reply('```json\n{"terms": ["NO2"]}\n```'), json_mode)]
    with ScriptedLLMServer(steps, model="llama-3.1-8b", schema=None) as server:
        config = {
            "backend": "openai",
            "model": "llama-3.1-8b",
            "base_url": server.url + "/v1",
            "structured_output": "json_object",
            "cache": False,
        }
        completion = complete_once(build_backend(config))
    assert server.failures == []
    assert completion.parsed_json == {"terms": ["NO2"]}


def timing_out_backend(server: ScriptedLLMServer, max_retries: int) -> CachedBackend:
    config = {
        "backend": "vllm",
        "model": MODEL,
        "base_url": server.url + "/v1",
        "cache": False,
        "timeout_s": 0.3,
        "max_retries": max_retries,
        "backoff_base_s": 0.0,
    }
    return build_backend(config)


def test_a_stalled_request_times_out_and_is_retried():
    steps = [Step(json_reply({"terms": []}, stall_s=1.0)), Step(json_reply({"terms": ["PM10"]}))]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        completion = complete_once(timing_out_backend(server, max_retries=1))
    assert server.failures == [] and len(server.requests) == 2
    assert completion.parsed_json == {"terms": ["PM10"]}


def test_a_server_that_keeps_stalling_gives_a_clear_error():
    steps = [Step(json_reply({"terms": []}, stall_s=1.0)) for _ in range(2)]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        with pytest.raises(LLMError, match=r"TimeoutError.*after 2 attempts"):
            complete_once(timing_out_backend(server, max_retries=1))
    assert len(server.requests) == 2


def test_a_rejected_request_is_not_retried_and_never_shows_the_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_LLM_API_KEY", "sk-test-secret")
    with ScriptedLLMServer([], model="other-model", schema=SCHEMA, api_key="sk-test-secret") as server:
        backend = build_backend({"backend": "vllm", "model": MODEL, "base_url": server.url + "/v1", "cache": False})
        with pytest.raises(LLMError, match="HTTP 400") as caught:
            complete_once(backend)
    assert len(server.requests) == 1 and "model" in server.failures[0]
    assert "sk-test-secret" not in str(caught.value)


def test_base_url_comes_from_the_environment_when_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_LLM_URL", "http://127.0.0.1:9/v1")
    backend = build_backend({"backend": "vllm", "model": MODEL, "base_url": "http://example.invalid/v1"})
    assert backend.inner.url == "http://127.0.0.1:9/v1/chat/completions"
    monkeypatch.delenv("HYSEM_LLM_URL")
    with pytest.raises(BackendConfigError, match="needs base_url"):
        build_backend({"backend": "openai", "model": "m"})


def cached_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json")) if directory.exists() else []


def cached_backend(server: ScriptedLLMServer, cache_dir: Path, **overrides: Any) -> CachedBackend:
    config = {"backend": "vllm", "model": MODEL, "base_url": server.url + "/v1", "cache_dir": cache_dir, **overrides}
    return build_backend(config)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"terms": ["PM2.5"], "notes": "also ozone"},
            "answer: Additional properties are not allowed ('notes' was unexpected)",
        ),
        ({}, "answer: missing required 'terms'"),
        ({"terms": "PM2.5"}, "terms: 'PM2.5' is not of type 'array'"),
        ({"terms": ["PM2.5", 10]}, "terms.1: 10 is not of type 'string'"),
    ],
)
def test_an_answer_that_breaks_the_schema_is_invalid_and_asked_anew_once_the_server_is_fixed(
    tmp_path: Path, answer: dict, problem: str
):
    steps = [Step(json_reply(answer)), Step(json_reply({"terms": ["PM2.5"]}))]  # then the server is fixed
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        invalid = complete_once(cached_backend(server, tmp_path))
        cached_after_invalid = cached_files(tmp_path)
        fixed = complete_once(cached_backend(server, tmp_path))
    assert (invalid.parsed_json, invalid.invalid) == (None, problem)
    assert cached_after_invalid == []
    assert len(server.requests) == 2 and server.failures == []
    assert (fixed.parsed_json, fixed.invalid, fixed.cached) == ({"terms": ["PM2.5"]}, None, False)
    assert len(cached_files(tmp_path)) == 1


def test_an_invalid_answer_kept_by_an_older_cache_is_asked_anew(tmp_path: Path):
    with ScriptedLLMServer([Step(json_reply({"terms": ["ozone"]}))], model=MODEL, schema=SCHEMA) as server:
        backend = cached_backend(server, tmp_path)
        key = cache_key(MODEL, MESSAGES, SCHEMA, GenerationParams().as_dict(), server=backend.server)
        ResponseCache(tmp_path).put(key, Completion(text="{}"))
        completion = complete_once(backend)
    assert len(server.requests) == 1 and completion.parsed_json == {"terms": ["ozone"]}
    assert json.loads(cached_files(tmp_path)[0].read_text())["text"] == '{"terms": ["ozone"]}'


def test_another_server_does_not_replay_the_answers_of_the_first(tmp_path: Path):
    with ScriptedLLMServer([Step(json_reply({"terms": ["PM2.5"]}))], model=MODEL, schema=SCHEMA) as first:
        assert complete_once(cached_backend(first, tmp_path)).parsed_json == {"terms": ["PM2.5"]}
    with ScriptedLLMServer([Step(json_reply({"terms": ["NO2"]}))], model=MODEL, schema=SCHEMA) as second:
        backend = cached_backend(second, tmp_path)
        fresh, replayed = complete_once(backend), complete_once(backend)
    assert len(first.requests) == len(second.requests) == 1
    assert (fresh.parsed_json, fresh.cached, replayed.parsed_json, replayed.cached) == (
        {"terms": ["NO2"]},
        False,
        {"terms": ["NO2"]},
        True,
    )
    assert len(cached_files(tmp_path)) == 2


def test_a_server_that_drips_its_answer_is_cut_at_the_total_timeout_and_nothing_is_kept(tmp_path: Path):
    steps = [Step(json_reply({"terms": ["PM2.5"]}, drip_s=0.2))]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        backend = cached_backend(server, tmp_path, timeout_s=0.5, total_timeout_s=1.0, max_retries=0)
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            complete_once(backend)
        elapsed = time.monotonic() - started
    assert elapsed < 3.0  # the whole answer would take about a minute
    assert str(caught.value) == (
        f"model {MODEL!r} at {server.url}/v1/chat/completions: no complete response within 1 s after 1 attempts"
    )
    assert cached_files(tmp_path) == []
