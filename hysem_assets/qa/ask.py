"""One question from the command line (``hysem ask``), answered quickly in a new process.

A new process pays for every import before it retrieves anything, so this path reads the
partition's tables straight from their files (the IO manager's layout), builds the engine
from the profile without importing Dagster (no resources, definitions or instance), and embeds with NumPy
where the model allows (:func:`hysem_assets.embedding.encoder.query_encoder`). Each answer is kept
in the partition's answer cache: asked again against the same tables, settings and code, a
question is read back without loading a model or a store. The key covers the files the
answer was drawn from (size and time of each), the profile and the version, so a new
materialization or another profile never gets a stale answer.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from hysem_assets.core.atomic import write_json
from hysem_assets.settings.environment import asset_file, hysem_home, hysem_variables
from hysem_assets.settings.profile import load_settings

#: Tables an answer needs; without them there is nothing to answer from.
REQUIRED_TABLES = ("vector_index", "library", "canonical_terms")
#: Tables of the numeric, global and synthesis routes; without them the first two hand over to retrieval and
#: synthesis says which command computes the findings.
OPTIONAL_TABLES = ("extracted_fields", "summary_tree", "findings")
#: Tables rewritten whenever a store an answer reads (the graph) is rebuilt.
STATE_TABLES = ("knowledge_graph",)


class TablesMissing(LookupError):
    """A partition whose tables an answer needs are not materialized; the message says what to run."""


def answer_cache_dir(query: str) -> Path:
    return hysem_home() / "answer_cache" / query


def _stat(path: Path) -> list[int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return [found.st_size, found.st_mtime_ns]


def _version() -> str:
    try:
        return version("hysem")
    except PackageNotFoundError:
        return "unknown"


def cache_key(query: str, question: str, profile: Path, *, include_retracted: bool = False) -> str:
    """The answer's identity: question, options, the state of its inputs, the ``profile`` file and the code."""
    state = {
        "query": query,
        "question": " ".join(question.split()),
        "include_retracted": include_retracted,
        "tables": {t: _stat(asset_file(t, query)) for t in (*REQUIRED_TABLES, *OPTIONAL_TABLES, *STATE_TABLES)},
        "profile": hashlib.sha256(profile.read_bytes()).hexdigest() if profile.is_file() else str(profile),
        "environment": hysem_variables(),
        "version": _version(),
    }
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:32]


def cached_answer(query: str, key: str) -> dict[str, Any] | None:
    path = answer_cache_dir(query) / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def remember_answer(query: str, key: str, answer: dict[str, Any]) -> None:
    """Write the answer atomically, so a reader never sees half of it."""
    write_json(answer_cache_dir(query) / f"{key}.json", answer)


def read_tables(query: str) -> dict[str, Any]:
    """The partition's tables for answering (None for a missing optional one), each checked against the record
    kept beside it: a truncated or replaced one stops the answer in one line (never an answer from part of it)."""
    from hysem_assets.stores.tables import read_table

    missing = [t for t in REQUIRED_TABLES if not asset_file(t, query).is_file()]
    if missing:
        raise TablesMissing(
            f"{', '.join(missing)} not materialized for {query!r}; run `hysem materialize --query {query}`."
        )
    return {
        table: read_table(asset_file(table, query)) if asset_file(table, query).is_file() else None
        for table in (*REQUIRED_TABLES, *OPTIONAL_TABLES)
    }


def ask(query: str, question: str, *, include_retracted: bool = False, use_cache: bool = True) -> tuple[dict, bool]:
    """The answer record for ``question`` in partition ``query``, and whether it came from the cache."""
    loaded = load_settings()
    key = cache_key(query, question, loaded.profile_file, include_retracted=include_retracted)
    if use_cache and (answer := cached_answer(query, key)) is not None:
        return answer, True
    from hysem_assets.qa.answer import answer_questions, readable
    from hysem_assets.qa.engine import tables_engine
    from hysem_assets.settings import redaction

    tables = read_tables(query)
    profile = loaded.profile
    redaction.declare_profile_secrets(profile.model_dump())
    redaction.install()
    settings = profile.assets
    if include_retracted:
        answers = settings.answers.model_copy(update={"include_retracted": True})
        settings = settings.model_copy(update={"answers": answers})
    with tables_engine(settings, query, tables) as engine:
        answers, _ = answer_questions([question], engine)
    answer = readable(answers[0])
    if not answer.get("unavailable"):  # a store was missing: the next ask, once it is back, must look again
        remember_answer(query, key, answer)
    return answer, False
