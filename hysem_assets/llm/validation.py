"""Whether a model's answer is what its request's JSON schema asks for, and if not, why.

A server's structured-output mode is a request, not a guarantee: servers without
constrained decoding, or with a loose one, return extra keys, miss required ones or give
a string for a list. Every answer is checked here before anyone keeps or reads it, so an
invalid one is named as such rather than read as empty fields, and never cached.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from hysem_assets.llm.completion import Completion, parse_json_text

#: Problems named in one reason at most; the rest are counted.
MAX_PROBLEMS = 5
_MESSAGE_CHARS = 200


@lru_cache(maxsize=64)
def _validator(canonical_schema: str) -> Draft202012Validator:
    """One validator per schema: building it costs more than checking a small answer."""
    return Draft202012Validator(json.loads(canonical_schema))


def _problem(error: ValidationError) -> str:
    """One problem, at the field it is at; the keys an object lacks are named together."""
    where = ".".join(str(part) for part in error.absolute_path) or "answer"
    if error.validator == "required":
        missing = [key for key in error.validator_value if key not in error.instance]
        return f"{where}: missing required {', '.join(map(repr, missing))}"
    return f"{where}: {error.message[:_MESSAGE_CHARS]}"


def schema_problems(value: Any, schema: Mapping[str, Any]) -> str | None:
    """What is wrong with ``value`` under ``schema``, each problem with the field it is at; None when nothing is."""
    validator = _validator(json.dumps(schema, sort_keys=True, ensure_ascii=False))
    problems = list(dict.fromkeys(_problem(error) for error in validator.iter_errors(value)))
    if not problems:
        return None
    more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
    return "; ".join(problems[:MAX_PROBLEMS]) + more


def not_json_reason(completion: Completion) -> str:
    """Why an answer that should be JSON is not, with the hint when generation was cut short."""
    truncated = (
        " (generation stopped at max_tokens; raise params.max_tokens)" if completion.finish_reason == "length" else ""
    )
    return f"not a JSON object{truncated}: {completion.text[:_MESSAGE_CHARS]!r}"


def checked(completion: Completion, schema: Mapping[str, Any] | None) -> Completion:
    """``completion`` with ``parsed_json`` set when it satisfies ``schema``, else with ``invalid`` saying why.

    Without a schema there is nothing to check. A backend that already holds the value
    (the embedded extractor) is checked on that value rather than on its text.
    """
    if schema is None:
        return completion
    value = completion.parsed_json if completion.parsed_json is not None else parse_json_text(completion.text)
    if value is None:
        return replace(completion, parsed_json=None, invalid=not_json_reason(completion))
    problems = schema_problems(value, schema)
    if problems:
        return replace(completion, parsed_json=None, invalid=problems)
    return replace(completion, parsed_json=value, invalid=None)
