"""Backend descriptions: validated up front, with errors that say what to fix."""

from __future__ import annotations

import importlib.util

import pytest

from hysem_assets.llm.cache import cache_key
from hysem_assets.settings.backends import BackendConfigError, parse_backend_config


def test_unknown_backend_and_misspelled_keys_are_errors():
    with pytest.raises(BackendConfigError, match="backend"):
        parse_backend_config({"backend": "tgi", "model": "m"})
    with pytest.raises(BackendConfigError, match="temprature"):
        parse_backend_config({"backend": "vllm", "model": "m", "params": {"temprature": 0.2}})
    with pytest.raises(BackendConfigError, match="model"):
        parse_backend_config({"backend": "openai", "base_url": "http://127.0.0.1:8080/v1"})


def test_defaults_of_the_embedded_backend():
    config = parse_backend_config({"backend": "extractive"})
    assert (config.cache, config.params.temperature, config.sentences) == (True, 0.0, 2)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_in_process_vllm_without_the_package_says_how_to_get_it():
    from hysem_assets.llm.registry import build_backend

    with pytest.raises(BackendConfigError, match=r"pip install vllm.*`vllm` backend"):
        build_backend({"backend": "vllm_inproc", "model": "Qwen/Qwen2.5-7B-Instruct", "tensor_parallel_size": 2})


def test_cache_key_covers_server_model_messages_schema_and_parameters_but_not_dict_order():
    messages = [{"role": "user", "content": "hi"}]
    key = cache_key("m", messages, {"type": "object", "title": "A"}, {"temperature": 0.0, "max_tokens": 8})
    assert key == cache_key(
        "m",
        [{"content": "hi", "role": "user"}],
        {"title": "A", "type": "object"},
        {"max_tokens": 8, "temperature": 0.0},
    )
    variants = [
        cache_key("other", messages, {"type": "object", "title": "A"}, {"temperature": 0.0, "max_tokens": 8}),
        cache_key(
            "m",
            [{"role": "user", "content": "hi!"}],
            {"type": "object", "title": "A"},
            {"temperature": 0.0, "max_tokens": 8},
        ),
        cache_key("m", messages, None, {"temperature": 0.0, "max_tokens": 8}),
        cache_key("m", messages, {"type": "object", "title": "A"}, {"temperature": 0.7, "max_tokens": 8}),
        cache_key(
            "m",
            messages,
            {"type": "object", "title": "A"},
            {"temperature": 0.0, "max_tokens": 8},
            server="http://127.0.0.1:8000/v1/chat/completions",
        ),
    ]
    assert len({key, *variants}) == 6
