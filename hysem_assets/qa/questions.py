"""Questions configured per query (``config/questions.yaml``): what ``qa_job`` answers by default."""

from __future__ import annotations

from pathlib import Path

import yaml

from hysem_assets.settings import config_dir


class QuestionsError(ValueError):
    """The questions file is unreadable or not ``questions: {slug: [question, ...]}``."""


def load_questions(path: Path | None = None) -> dict[str, list[str]]:
    """Query slug -> its questions; a missing file means no configured questions."""
    path = path or config_dir() / "questions.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise QuestionsError(f"Questions file {path} is not valid YAML: {exc}") from exc
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, dict) or not all(
        isinstance(qs, list) and all(isinstance(q, str) and q.strip() for q in qs) for qs in questions.values()
    ):
        raise QuestionsError(f"Questions file {path} must map 'questions' to {{query slug: [non-empty question, ...]}}.")
    return {str(slug): [q.strip() for q in qs] for slug, qs in questions.items()}
