"""Answers on disk, keyed by everything that determines them, so a re-run costs nothing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hysem_assets.core.atomic import write_json
from hysem_assets.llm.completion import Completion, Message


def cache_key(
    model: str,
    messages: Sequence[Message],
    schema: Mapping[str, Any] | None,
    params: Mapping[str, Any],
    *,
    server: str = "",
) -> str:
    """SHA-256 of the canonical JSON of (server, model, messages, schema, parameters).

    Keys sorted and separators fixed, so equal requests hash equally whatever order their
    dicts were built in. ``server`` is the model server's URL with secrets masked, so another
    server asks anew while a rotated key does not; a model in this process has none.
    """
    payload = {"model": model, "messages": list(messages), "schema": schema, "params": dict(params)}
    if server:
        payload["server"] = server
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """One JSON file per valid answer under ``directory/<2 hex>/<key>.json``, written atomically.

    Files rather than a database: concurrent runs (Dagster steps in separate processes)
    can share a cache without locks, since a rename either lands whole or not at all.
    """

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        try:
            stored = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return Completion(
            text=stored["text"],
            prompt_tokens=stored.get("prompt_tokens", 0),
            completion_tokens=stored.get("completion_tokens", 0),
            finish_reason=stored.get("finish_reason"),
            cached=True,
        )

    def put(self, key: str, completion: Completion) -> None:
        stored = {
            "text": completion.text,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "finish_reason": completion.finish_reason,
        }
        write_json(self._path(key), stored)
