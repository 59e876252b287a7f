"""The embedded default backend: extraction without a generative model, for any review protocol.

It answers the same structured requests as an LLM, reading the excerpt between the
document tags of the prompt and filling each requested field of the query's protocol by
what the field declares (:func:`method_for`): the trained span tagger (hysem_assets/pico) for a
field naming ``method: tagger:<role>``, synonym dictionaries where a field has one,
open-vocabulary noun phrases ranked by cues and packaged MiniLM embeddings for terms,
cue-announced spans for text with cues, the sentences most similar to the explanation for
text without, cue phrases and similarity for categories, regular expressions for counts,
durations, quantities and effect estimates. It is deterministic, runs on a laptop CPU,
and spends no tokens; ``benchmarks/open_extraction.py`` and
``benchmarks/extraction_quality.py`` measure it against hand labels.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.core.text import not_english
from hysem_assets.embedding import bert_numpy
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.minilm import MODEL_NAME
from hysem_assets.extraction.categories import choose_category, value_texts
from hysem_assets.extraction.designs import categories, is_design
from hysem_assets.extraction.numbers import duration, metric_values, quantity, sample_size
from hysem_assets.extraction.open_terms import rank_terms
from hysem_assets.extraction.passages import best_span
from hysem_assets.extraction.prompts import excerpt_of
from hysem_assets.extraction.reading import Reading
from hysem_assets.findings.estimates import effect_estimates
from hysem_assets.llm.completion import Completion, LLMError, Message, UnreadableText
from hysem_assets.pico import tagger as pico_tagger
from hysem_assets.pico.roles import role_values
from hysem_assets.settings.backends import ExtractiveConfig, GenerationParams
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.protocols import (
    ESTIMATE_PROPERTIES,
    METRIC_PROPERTIES,
    Protocol,
    ProtocolField,
    load_protocol,
)

#: Changes whenever the rules change what they extract, so cached answers of older rules are not replayed.
RULES_VERSION = "tagger-12"

Method = Literal[
    "dictionary",
    "phrases",
    "sentences",
    "span",
    "category",
    "tagger",
    "count",
    "duration",
    "effect_estimates",
    "metric_values",
    "quantity",
]


def method_for(field: ProtocolField, designs: bool = True) -> Method:
    """How the embedded extractor fills ``field``: the method it names, else by its rules (:func:`rule_for`)."""
    return "tagger" if field.method else rule_for(field, designs)


def fallback_for(field: ProtocolField, designs: bool = True) -> Method:
    """The rule for a tagger field whose role finds nothing: for comparators the span a cue announces ("compared
    with X"), since ranked noun phrases would name a comparator for every text; else the rule of its type."""
    role = (field.method or "").partition(":")[2]
    return "span" if role == "comparators" and field.cues else rule_for(field, designs)


def rule_for(field: ProtocolField, designs: bool = True) -> Method:
    """The rule that fills ``field`` by its type, kind, dictionary and cues (also where the tagger finds nothing).

    A design column (:func:`~hysem_assets.extraction.designs.is_design`) is chosen among its categories;
    without ``designs`` (as before design columns were), a text field's dictionary is not read."""
    if field.type == "category" or designs and is_design(field):
        return "category"
    if field.type == "terms":
        return "dictionary" if field.dictionary else "phrases"
    if field.type == "text":
        return "span" if field.cues else "sentences"
    kind = field.number_kind
    if kind == "metric":
        return "metric_values"
    if kind == "effect_estimate":
        return "effect_estimates"
    return {"count": "count", "duration": "duration"}.get(kind, "quantity")  # type: ignore[return-value]


class ExtractiveBackend:
    """Implements :class:`~hysem_assets.llm.backend.LLMBackend` for schema-constrained requests of one protocol."""

    #: In this process: no server takes part in cache keys.
    server = ""

    def __init__(
        self,
        protocol: Protocol,
        dictionaries: Mapping[str, TermMatcher],
        *,
        embedding_backend: str,
        sentence_budget: int,
        sentence_shortlist: int = 0,
        tagger_budget: int = 0,
        embedding_model: str | None = None,
        device: str = "cpu",
        sentences: int = 2,
        min_similarity: float = 0.1,
        fingerprint: str = "",
        own_values: bool = True,
    ):
        self.protocol = protocol
        self.own_values = own_values
        self.fields = {spec.name: spec for spec in protocol.fields}
        self.dictionaries = dict(dictionaries)
        self.encoder = Encoder(
            embedding_model, device=device, backend=embedding_backend if device == "cpu" else "torch"
        )
        self.sentences = sentences
        self.min_similarity = min_similarity
        self.sentence_budget = sentence_budget
        self.sentence_shortlist = sentence_shortlist
        designs = [spec for spec in protocol.fields if rule_for(spec, own_values) == "category"]
        self.categories = {spec.name: categories(protocol, spec) for spec in designs}
        self.focus = _focus_texts(protocol, self.categories)
        self.tagger = pico_tagger.load() if any(spec.method for spec in protocol.fields) else None
        self.tagger_budget = tagger_budget
        tagger_version = f"+tagger@{self.tagger.version}" if self.tagger else ""
        embedder = f"{Path(self.encoder.name).name}@{self.encoder.content}"  # the weights' hash, not their name
        rules = "" if own_values else "+all-text"
        self._model_id = f"extractive/{embedder}{tagger_version}@{protocol.fingerprint}/{fingerprint}{rules}"
        self._lock = threading.Lock()
        self._shared_vectors: dict[str, Any] = {}  # descriptions and short phrases, across readings

    @property
    def model(self) -> str:
        """Names the method, the hashes of the model files it runs, the protocol's fingerprint and a hash of the
        settings: edits and other weights invalidate the cache."""
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
        """Values of the fields ``names`` found in ``text``; a name the protocol lacks stays empty.

        Raises :class:`UnreadableText` for a text in another language: the rules and the tagger read English.
        """
        reason = not_english(text)
        if reason:
            raise UnreadableText(reason)
        reading = Reading(
            text,
            self.encoder,
            self._lock,
            self._shared_vectors,
            focus=self.focus,
            budget=self.sentence_budget,
            shortlist=self.sentence_shortlist,
            parts=self.own_values,
        )
        tagged = [self.fields[n] for n in names if n in self.fields and self.fields[n].method]
        roles = role_values(text, self.tagger.read(text, self.tagger_budget)) if tagged and self.tagger else {}
        return {name: self._value(self.fields[name], reading, roles) if name in self.fields else None for name in names}

    def _others(self, field: ProtocolField) -> dict[str, str]:
        """Descriptions of the protocol's other phrase fields (terms, text): what a phrase must fit worse."""
        return {
            spec.name: spec.description
            for spec in self.protocol.fields
            if spec.name != field.name and spec.type in ("terms", "text")
        }

    def _value(self, field: ProtocolField, reading: Reading, roles: Mapping[str, list[str]]) -> Any:
        method = method_for(field, self.own_values)
        text = reading.text
        if method == "tagger":
            values = roles[(field.method or "").partition(":")[2]]
            if values:
                return values if field.type == "terms" else values[0]
            method = fallback_for(field, self.own_values)  # nothing tagged (not a clinical abstract, say)
        if method == "dictionary":
            return reading.ranked_terms(self.dictionaries[field.name])
        if method == "phrases":
            return [term.text for term in rank_terms(reading, field.description, field.cues, self._others(field))]
        if method == "sentences":
            return self._sentences(reading, field.description)
        if method == "span":
            other_cues = [cue for spec in self.protocol.fields if spec.name != field.name for cue in spec.cues]
            span = best_span(reading, field.description, field.cues, self._others(field), other_cues)
            if field.type == "terms":
                return [span.text] if span else []
            return span.text if span else None
        if method == "category":
            chosen = choose_category(reading, self.categories[field.name])
            return chosen[0] if chosen else None
        if method == "metric_values":  # keep the properties the field declares, nothing else
            return [
                {name: found.get(name) for name in METRIC_PROPERTIES}
                for found in metric_values(text, self.dictionaries[field.name])
            ]
        if method == "effect_estimates":
            return [{name: found.get(name) for name in ESTIMATE_PROPERTIES} for found in effect_estimates(text)]
        if method == "count":
            value: float | None = sample_size(text)
        elif method == "duration":
            value = duration(text, field.unit)
        else:
            value = quantity(text, field.unit, field.cues)
        if field.records:  # several values per work: one record each
            measure = field.unit or field.name.replace("_", " ")
            return [] if value is None else [{**dict.fromkeys(ESTIMATE_PROPERTIES), "measure": measure, "value": value}]
        return value

    def _sentences(self, reading: Reading, description: str) -> str | None:
        """Up to ``sentences`` sentences most similar to ``description``, in text order, above ``min_similarity``."""
        if not reading.sentences:
            return None
        similarities = reading.sentence_similarity(reading.embed_constant([description])[0])
        best = sorted(range(len(reading.sentences)), key=lambda index: -float(similarities[index]))[: self.sentences]
        chosen = [reading.sentences[i] for i in sorted(best) if similarities[i] >= self.min_similarity]
        return " ".join(chosen) or None

    async def aclose(self) -> None:
        """Nothing to release: the encoder stays loaded for the process."""


def _focus_texts(protocol: Protocol, choices: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What a long excerpt's sentences are chosen by: each field's description with its cues, each category's."""
    texts = [" ".join([spec.description, *spec.cues]) for spec in protocol.fields]
    texts += [text for values in choices.values() for text in value_texts(values)]
    return list(dict.fromkeys(texts))


def _settings_fingerprint(config: ExtractiveConfig, dictionaries: Mapping[str, Path]) -> str:
    """Rules, settings and the dictionaries' contents: a dictionary edit changes answers as a rule change does."""
    contents = {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in sorted(dictionaries.items())}
    settings = [
        RULES_VERSION,
        config.embedding_model,
        config.embedding_backend,
        config.sentences,
        config.min_similarity,
        config.sentence_budget,
        config.sentence_shortlist,
        config.tagger_budget,
        contents,
    ]
    return hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:12]


def _embedding_backend(config: ExtractiveConfig) -> str:
    """The configured backend; left at its default, torch for a model the ONNX export does not cover (a hub name,
    a model other than BERT with mean pooling), which worked before ONNX was the default."""
    if "embedding_backend" in config.model_fields_set or config.embedding_model in (None, MODEL_NAME):
        return config.embedding_backend
    return config.embedding_backend if bert_numpy.supported(Path(config.embedding_model)) else "torch"


def from_protocol(
    protocol: Protocol, config: ExtractiveConfig | None = None, *, own_values: bool = True
) -> ExtractiveBackend:
    """The backend for ``protocol``: its fields, and the synonym dictionaries its fields name.

    ``own_values`` False reads every sentence alike and a text field's dictionary not at all, as
    before design columns and section weights were (``benchmarks/own_values.py`` compares both)."""
    config = config or ExtractiveConfig(backend="extractive")
    files = protocol.dictionary_files()
    return ExtractiveBackend(
        protocol,
        {name: load_dictionary(path).matcher for name, path in files.items()},
        embedding_model=config.embedding_model,
        device=config.device,
        embedding_backend=_embedding_backend(config),
        sentences=config.sentences,
        min_similarity=config.min_similarity,
        sentence_budget=config.sentence_budget,
        sentence_shortlist=config.sentence_shortlist,
        tagger_budget=config.tagger_budget,
        fingerprint=_settings_fingerprint(config, files),
        own_values=own_values,
    )


def from_config(config: ExtractiveConfig, protocol: Protocol | None = None) -> ExtractiveBackend:
    """The backend for the query's protocol (the ``generic`` one when none is given)."""
    return from_protocol(protocol or load_protocol(None), config)
