"""Question answering over a partition: hybrid and symbolic retrieval, a revise loop, cited answers."""

from hysem_assets.qa.answer import NO_EVIDENCE, QAEngine, QAInputError, QAResult, answer_question, answer_questions
from hysem_assets.qa.cypher import CypherPlan, CypherRejected, validate_cypher
from hysem_assets.qa.engine import build_engine, open_engine, term_spellings
from hysem_assets.qa.preferences import DPO_KEYS, dpo_rows, export_preferences
from hysem_assets.qa.questions import QuestionsError, load_questions, questions_for

__all__ = [
    "DPO_KEYS",
    "NO_EVIDENCE",
    "CypherPlan",
    "CypherRejected",
    "QAEngine",
    "QAInputError",
    "QAResult",
    "QuestionsError",
    "answer_question",
    "answer_questions",
    "build_engine",
    "dpo_rows",
    "export_preferences",
    "load_questions",
    "questions_for",
    "open_engine",
    "term_spellings",
    "validate_cypher",
]
