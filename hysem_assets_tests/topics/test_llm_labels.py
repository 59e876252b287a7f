"""Topic labels from a language model, over real HTTP to a scripted OpenAI-compatible server."""

from __future__ import annotations

from hysem_assets.llm.registry import build_backend
from hysem_assets.topics.labels import llm_labeller
from hysem_assets_tests.llm.scripted_server import Reply, ScriptedLLMServer, Step

MODEL = "labeller-7b"


def test_topics_are_named_by_the_model_and_fall_back_to_top_words():
    def asks_for_a_label(body):
        assert "ozone, heart failure, random forest" in body["messages"][-1]["content"]

    steps = [Step(Reply('"Ozone and heart failure"'), asks_for_a_label), Step(Reply("   "))]
    with ScriptedLLMServer(steps, model=MODEL) as server:
        backend = build_backend({"backend": "vllm", "model": MODEL, "base_url": server.url + "/v1", "cache": False})
        label = llm_labeller(backend)
        named = label(["ozone", "heart_failure", "random_forest"])
        fallback = label(["pm25", "stroke", "lstm", "china"])
    assert server.failures == []
    assert named == "Ozone and heart failure"
    assert fallback == "pm25, stroke, lstm"
