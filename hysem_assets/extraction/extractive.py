"""The embedded default backend: extraction without a generative model.

It answers the same structured requests as an LLM, reading the excerpt between the
document tags of the prompt and filling each requested field the way ``fields.yaml``
says: synonym dictionaries for lists, the sentences most similar to the field's
explanation (packaged MiniLM embeddings) for text, regular expressions for numbers.
It is deterministic, runs on a laptop CPU, and spends no tokens; how good it is,
``benchmarks/extraction_quality.py`` measures against hand-made gold annotations.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hysem_assets.embeddings import Encoder
from hysem_assets.environment import config_dir
from hysem_assets.extraction.fields import FieldsError, FieldSpec, load_fields
from hysem_assets.extraction.numbers import metric_values, sample_size
from hysem_assets.extraction.prompts import excerpt_of
from hysem_assets.extraction.sentences import most_similar_sentences
from hysem_assets.extraction.text import split_sentences
from hysem_assets.llm.completion import Completion, GenerationParams, LLMError, Message
from hysem_assets.llm.config import ExtractiveConfig
from hysem_assets.terms.dictionaries import load_dictionary
from hysem_assets.terms.matcher import TermMatcher

#: Which field shapes each extractive method can fill.
_METHOD_SHAPES = {
    "dictionary": lambda spec: spec.type == "list",
    "sentence": lambda spec: spec.type == "text",
    "count": lambda spec: spec.type == "structured" and spec.value == "integer",
    "metric_values": lambda spec: spec.is_records,
}


class ExtractiveBackend:
    """Implements :class:`~hysem_assets.llm.backend.LLMBackend` for schema-constrained requests."""

    def __init__(
        self,
        fields: Sequence[FieldSpec],
        dictionaries: Mapping[str, TermMatcher],
        *,
        embedding_model: str | None = None,
        device: str = "cpu",
        sentences: int = 2,
        min_similarity: float = 0.1,
        fingerprint: str = "",
    ):
        self.fields = {spec.name: spec for spec in fields}
        self.dictionaries = dict(dictionaries)
        self.encoder = Encoder(embedding_model, device=device)
        self.sentences = sentences
        self.min_similarity = min_similarity
        self._model_id = f"extractive/{Path(self.encoder.name).name}@{fingerprint}"
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """Names the method and a hash of its fields, dictionaries and settings: edits invalidate the cache."""
        return self._model_id

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        params: GenerationParams | None = None,
    ) -> Completion:
        if schema is None:
            raise LLMError("the extractive backend answers only requests with a JSON schema")
        requested = list(schema.get("properties", {}))
        values = await asyncio.to_thread(self.extract, excerpt_of(messages), requested)
        return Completion(text=json.dumps(values, ensure_ascii=False), parsed_json=values)

    def extract(self, text: str, names: Sequence[str]) -> dict[str, Any]:
        """Values of the fields ``names`` found in ``text``; a field without a method stays empty."""
        return {name: self._value(self.fields[name], text) if name in self.fields else None for name in names}

    def _value(self, spec: FieldSpec, text: str) -> Any:
        if spec.extractive == "dictionary":
            return self.dictionaries[spec.name].find(text)
        if spec.extractive == "sentence":
            return self._sentences(text, spec.description)
        if spec.extractive == "count":
            return sample_size(text)
        if spec.extractive == "metric_values":  # keep the properties the field declares, nothing else
            return [
                {name: found.get(name) for name in spec.properties or {}}
                for found in metric_values(text, self.dictionaries[spec.name])
            ]
        return [] if spec.type == "list" or spec.many else None

    def _sentences(self, text: str, description: str) -> str | None:
        with self._lock:  # one encoder pass at a time: torch already uses every core
            chosen = most_similar_sentences(
                split_sentences(text),
                description,
                self.encoder,
                keep=self.sentences,
                min_similarity=self.min_similarity,
            )
        return " ".join(chosen) or None

    async def aclose(self) -> None:
        """Nothing to release: the encoder stays loaded for the process."""


def _fingerprint(fields: Sequence[FieldSpec], dictionary_files: Sequence[Path], config: ExtractiveConfig) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([spec.model_dump() for spec in fields], sort_keys=True).encode())
    digest.update(json.dumps([config.embedding_model, config.sentences, config.min_similarity]).encode())
    for path in dictionary_files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def from_config(config: ExtractiveConfig) -> ExtractiveBackend:
    """The backend for the profile's fields file and dictionaries directory (defaults under config/)."""
    fields = load_fields(config.fields_path)
    for spec in fields:
        if spec.extractive and not _METHOD_SHAPES[spec.extractive](spec):
            raise FieldsError(
                f"Field {spec.name!r}: extractive method {spec.extractive!r} cannot fill a {spec.type} field of this shape."
            )
    directory = config.dictionaries_dir or config_dir() / "dictionaries"
    files = {
        spec.name: directory / f"{spec.name}.yaml"
        for spec in fields
        if spec.extractive in ("dictionary", "metric_values")
    }
    return ExtractiveBackend(
        fields,
        {name: load_dictionary(path).matcher for name, path in files.items()},
        embedding_model=config.embedding_model,
        device=config.device,
        sentences=config.sentences,
        min_similarity=config.min_similarity,
        fingerprint=_fingerprint(fields, sorted(files.values()), config),
    )
