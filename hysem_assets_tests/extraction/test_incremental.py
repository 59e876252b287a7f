"""Incremental extraction against a scripted vLLM-style server: merging, retries, timeouts, cache."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.chunking import chunk_text
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.settings.fields import response_schema
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.llm.scripted_server import Reply, ScriptedLLMServer, Step, json_reply

MODEL = "Qwen/Qwen2.5-7B-Instruct"
FIELDS = load_protocol("pollution-cardio-ml").extraction_fields()
SCHEMA = response_schema(FIELDS)
CHUNKING = {"chunk_tokens": 70, "overlap": 10}
TEXT = "\n\n".join(
    [
        "Alpha part. We trained a random forest and a LASSO model on daily PM2.5 in Bavaria to predict admissions "
        "among 48,213 adults; the forest explained 41% of the variance (R2 0.41) in held-out years of data.",
        "Bravo part. In a prospective cohort followed for nine years, gradient boosting related PM2.5 and NO2 to "
        "incident heart failure; the hazard ratio was 1.09 (95% CI 1.03-1.16) per interquartile range increase.",
        "Charlie part. An XGBoost sensitivity analysis added stroke as a second outcome, and results were similar "
        "across Bavaria and the rest of Germany, with no heterogeneity by sex, age group or season at all.",
    ]
)
METRIC_R2 = {"name": "R2", "value": 0.41, "unit": None, "ci_low": None, "ci_high": None, "context": "random forest"}
METRIC_HR = {
    "name": "hazard ratio",
    "value": 1.09,
    "unit": None,
    "ci_low": 1.03,
    "ci_high": 1.16,
    "context": "per IQR PM2.5",
}
ANSWERS: list[dict[str, Any]] = [
    {
        "study_type": "cohort study",
        "ml_methods_used": ["random forest", "LASSO"],
        "pollutant_terms": ["PM2.5"],
        "health_outcome": [],
        "geography": ["Bavaria"],
        "sample_size": 48213,
        "metrics": [METRIC_R2],
    },
    {
        "study_type": "prospective cohort study followed for nine years",
        "ml_methods_used": ["Random  Forest", "gradient boosting"],
        "pollutant_terms": ["pm2.5", "NO2"],
        "health_outcome": ["heart failure"],
        "geography": [],
        "sample_size": 512,
        "metrics": [{**METRIC_R2, "name": "r2", "context": "Random forest"}, METRIC_HR],
    },
    {
        "study_type": "cohort",
        "ml_methods_used": ["XGBoost"],
        "pollutant_terms": [],
        "health_outcome": ["Heart failure ", "stroke"],
        "geography": ["Bavaria", "Germany"],
        "sample_size": None,
        "metrics": [],
    },
]
MERGED_AFTER = [  # the record so far that chunks 2 and 3 must be shown
    None,
    {
        "study_type": "cohort study",
        "ml_methods_used": ["random forest", "LASSO"],
        "pollutant_terms": ["PM2.5"],
        "health_outcome": [],
        "geography": ["Bavaria"],
        "sample_size": 48213,
        "metrics": [METRIC_R2],
    },
    {
        "study_type": "prospective cohort study followed for nine years",
        "ml_methods_used": ["random forest", "LASSO", "gradient boosting"],
        "pollutant_terms": ["PM2.5", "NO2"],
        "health_outcome": ["heart failure"],
        "geography": ["Bavaria"],
        "sample_size": 48213,
        "metrics": [METRIC_R2, METRIC_HR],
    },
]
FINAL = {
    **MERGED_AFTER[2],
    "ml_methods_used": ["random forest", "LASSO", "gradient boosting", "XGBoost"],
    "health_outcome": ["heart failure", "stroke"],
    "geography": ["Bavaria", "Germany"],
}


def record_so_far(body: dict) -> dict | None:
    user = body["messages"][1]["content"]
    if not user.startswith("Record so far"):
        return None
    return json.loads(user.split("\n", 2)[1])


def backend_for(server: ScriptedLLMServer, cache_dir: Path | None = None, **overrides: Any):
    config = {
        "backend": "vllm",
        "model": MODEL,
        "base_url": server.url + "/v1",
        "cache": cache_dir is not None,
        "cache_dir": cache_dir,
        "backoff_base_s": 0.0,
        **overrides,
    }
    return build_backend(config)


def chunk_steps() -> list[Step]:
    chunks = chunk_text(TEXT, **CHUNKING)
    assert len(chunks) == 3

    def expect(number: int):
        def check(body: dict) -> None:
            system, user = body["messages"][0]["content"], body["messages"][1]["content"]
            assert (
                all(f"- {spec.name} (" in system for spec in FIELDS)
                and "Name the design, not the statistical method" in system
            )
            assert f"Excerpt {number + 1} of 3 of the article 'Forests and particles'" in user
            assert f"<document>\n{chunks[number].text}\n</document>" in user
            assert record_so_far(body) == MERGED_AFTER[number]

        return check

    return [
        Step(json_reply(answer, prompt_tokens=100 + n, completion_tokens=10 + n), expect(n))
        for n, answer in enumerate(ANSWERS)
    ]


def test_three_chunks_are_read_in_order_with_the_record_so_far_and_merged(tmp_path: Path):
    document = Document("w1", TEXT, {"title": "Forests and particles"})
    with ScriptedLLMServer(chunk_steps(), model=MODEL, schema=SCHEMA) as server:
        backend = backend_for(server, tmp_path / "cache")
        (result,) = extract_documents_sync([document], FIELDS, backend, **CHUNKING)
        # the script is spent: a request now would fail
        rerun = backend_for(server, tmp_path / "cache")
        (again,) = extract_documents_sync([document], FIELDS, rerun, **CHUNKING)
    assert server.failures == [] and len(server.requests) == 3
    assert (result.status, result.error, result.chunks) == ("ok", None, 3)
    assert result.values == FINAL
    assert (result.prompt_tokens, result.completion_tokens) == (303, 33)
    assert backend.usage.as_metadata()["total_tokens"] == 336

    assert again.values == FINAL and (again.prompt_tokens, again.completion_tokens, again.cache_hits) == (0, 0, 3)
    assert rerun.usage.as_metadata() == {
        "llm_requests": 0,
        "llm_cache_hits": 3,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
    }


def test_invalid_json_is_sent_back_with_the_reason_and_the_retry_recovers():
    def correction(body: dict) -> None:
        assert body["messages"][-2] == {"role": "assistant", "content": 'Sure! {"study_type": '}
        assert body["messages"][-1]["role"] == "user" and "not a JSON object" in body["messages"][-1]["content"]

    steps = [
        Step(Reply('Sure! {"study_type": ', prompt_tokens=50, completion_tokens=5)),
        Step(json_reply({**ANSWERS[2]}, prompt_tokens=70, completion_tokens=30), correction),
    ]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        (result,) = extract_documents_sync(
            [Document("w2", "Charlie part. XGBoost and stroke.")], FIELDS, backend_for(server)
        )
    assert server.failures == [] and len(server.requests) == 2
    assert result.status == "ok" and result.values["ml_methods_used"] == ["XGBoost"]
    assert (result.prompt_tokens, result.completion_tokens) == (120, 35)


def test_output_that_stays_invalid_is_an_error_row_and_other_documents_go_on():
    def respond(body: dict) -> Step:
        if "Bad document" in body["messages"][1]["content"]:
            return Step(json_reply({**ANSWERS[0], "ml_methods_used": "random forest"}))
        return Step(json_reply(ANSWERS[2]))

    documents = [
        Document("bad", "Bad document about a random forest."),
        Document("empty", "  \n"),
        Document("good", "Charlie part."),
    ]
    with ScriptedLLMServer(respond, model=MODEL, schema=SCHEMA) as server:
        results = extract_documents_sync(documents, FIELDS, backend_for(server), max_attempts=2, concurrency=3)
    assert server.failures == [] and len(server.requests) == 3
    assert [r.doc_id for r in results] == ["bad", "empty", "good"]
    bad, empty, good = results
    assert bad.status == "error" and "invalid output after 2 attempts" in bad.error and "ml_methods_used" in bad.error
    assert bad.values["ml_methods_used"] == [] and bad.prompt_tokens == 200
    assert (empty.status, empty.error, empty.chunks) == ("empty", "no text to extract from", 0)
    assert good.status == "ok" and good.values["health_outcome"] == ["Heart failure", "stroke"]


def test_a_server_that_stalls_past_the_timeout_is_an_error_row():
    steps = [Step(json_reply(ANSWERS[0], stall_s=1.0))]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        backend = backend_for(server, timeout_s=0.3, max_retries=0)
        (result,) = extract_documents_sync([Document("slow", "Alpha part.")], FIELDS, backend)
    assert len(server.requests) == 1
    assert result.status == "error" and "TimeoutError" in result.error and result.error.startswith("chunk 1 of 1")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {**ANSWERS[2], "notes": "stroke too"},
            "answer: Additional properties are not allowed ('notes' was unexpected)",
        ),
        (
            {},
            "answer: missing required 'study_type', 'ml_methods_used', 'pollutant_terms', 'health_outcome', 'geography', 'sample_size', 'metrics'",
        ),
        ({**ANSWERS[2], "sample_size": "about 500"}, "sample_size: 'about 500' is not of type 'integer', 'null'"),
    ],
)
def test_an_answer_that_breaks_the_schema_is_an_error_row_never_cached_and_asked_anew(
    tmp_path: Path, answer: dict, problem: str
):
    document = Document("w3", "Charlie part. XGBoost and stroke.")
    steps = [Step(json_reply(answer)), Step(json_reply(ANSWERS[2]))]  # then the server is fixed
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        (failed,) = extract_documents_sync([document], FIELDS, backend_for(server, tmp_path), max_attempts=1)
        cached_after_failure = list(tmp_path.rglob("*.json"))
        (fixed,) = extract_documents_sync([document], FIELDS, backend_for(server, tmp_path), max_attempts=1)
    assert (failed.status, failed.error) == ("error", f"chunk 1 of 1: invalid output after 1 attempts: {problem}")
    assert failed.values["ml_methods_used"] == [] and cached_after_failure == []
    assert len(server.requests) == 2 and server.failures == []
    assert (fixed.status, fixed.error, fixed.values["ml_methods_used"]) == ("ok", None, ["XGBoost"])
    assert len(list(tmp_path.rglob("*.json"))) == 1


def test_a_server_that_drips_its_answer_is_an_error_row_at_the_deadline_and_nothing_is_cached(tmp_path: Path):
    steps = [Step(json_reply(ANSWERS[0], drip_s=0.2))]
    with ScriptedLLMServer(steps, model=MODEL, schema=SCHEMA) as server:
        backend = backend_for(server, tmp_path, timeout_s=0.5, total_timeout_s=1.0, max_retries=0)
        started = time.monotonic()
        (result,) = extract_documents_sync([Document("drip", "Alpha part.")], FIELDS, backend)
    assert time.monotonic() - started < 3.0  # the whole answer would take minutes
    assert (result.status, result.error) == (
        "error",
        f"chunk 1 of 1: model {MODEL!r} at {server.url}/v1/chat/completions: "
        "no complete response within 1 s after 1 attempts",
    )
    assert list(tmp_path.rglob("*.json")) == []


@pytest.mark.parametrize("bad", [{"chunk_tokens": 10, "overlap": 10}, {"chunk_tokens": 0, "overlap": 0}])
def test_impossible_chunking_is_refused(bad: dict):
    with pytest.raises(ValueError, match="overlap"):
        chunk_text("some text", **bad)
