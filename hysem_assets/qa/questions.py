"""Questions configured per query (``config/questions.yaml``): what ``qa_job`` answers by default.

``questions:`` maps query slugs to their own questions; ``default:`` lists the questions
asked of every query that has none of its own, so a newly added query is answered too.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from hysem_assets.settings.environment import config_dir

SHAPE = "'questions: {query slug: [question, ...]}' and optionally 'default: [question, ...]'"


class QuestionsError(ValueError):
    """The questions file is unreadable or not shaped as SHAPE."""


def _is_question_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(q, str) and q.strip() for q in value)


def _read(path: Path | None) -> tuple[dict[str, list[str]], list[str]]:
    path = path or config_dir() / "questions.yaml"
    if not path.is_file():
        return {}, []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise QuestionsError(f"Questions file {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise QuestionsError(f"Questions file {path} must hold {SHAPE}.")
    per_query, default = data.get("questions") or {}, data.get("default") or []
    if not (
        isinstance(per_query, dict) and all(map(_is_question_list, per_query.values())) and _is_question_list(default)
    ):
        raise QuestionsError(f"Questions file {path} must hold {SHAPE}, each question a non-empty string.")
    return {str(slug): [q.strip() for q in qs] for slug, qs in per_query.items()}, [q.strip() for q in default]


def load_questions(path: Path | None = None) -> dict[str, list[str]]:
    """Query slug -> its own questions; a missing file means no configured questions."""
    return _read(path)[0]


def questions_for(slug: str, path: Path | None = None) -> list[str]:
    """The questions ``qa_job`` answers for ``slug``: its own, else the default ones."""
    per_query, default = _read(path)
    return per_query.get(slug) or default
