"""Question answering over a partition: hybrid and symbolic retrieval, a revise loop, cited answers.

The names below load on first use, so a command that only reads the answer cache
(``hysem ask`` with a repeated question) imports no store, model or Dagster machinery.
"""

from __future__ import annotations

from hysem_assets.lazy import lazy_exports

#: Each public name and the module of this package that holds it.
_EXPORTS = {
    "ANSWER_DTYPES": "answer",
    "CypherPlan": "cypher",
    "CypherRejected": "cypher",
    "DPO_KEYS": "preferences",
    "NO_ARTICLES": "answer",
    "NO_EVIDENCE": "answer",
    "PREFERENCE_DTYPES": "preferences",
    "QAEngine": "answer",
    "QAInputError": "answer",
    "QAResult": "answer",
    "QuestionsError": "questions",
    "answer_question": "answer",
    "answer_questions": "answer",
    "build_engine": "engine",
    "dpo_rows": "preferences",
    "export_preferences": "preferences",
    "load_questions": "questions",
    "open_engine": "engine",
    "questions_for": "questions",
    "term_spellings": "engine",
    "validate_cypher": "cypher",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
