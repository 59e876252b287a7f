"""The messages of context-aware incremental extraction: explanations, record so far, one excerpt."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hysem_assets.llm.completion import Message
from hysem_assets.settings.fields import FieldSpec

DOCUMENT_OPEN, DOCUMENT_CLOSE = "<document>", "</document>"
_DOCUMENT = re.compile(re.escape(DOCUMENT_OPEN) + r"\n?(.*?)\n?" + re.escape(DOCUMENT_CLOSE), re.DOTALL)

SYSTEM_PROMPT = (
    "You extract structured information from scientific articles for a systematic literature review. "
    "You read one excerpt of an article at a time, together with the record extracted from the "
    "excerpts before it.\n"
    "- Report only what the excerpt states; never guess or fill in from general knowledge.\n"
    "- Use the record so far as context: spell things already recorded the same way, and give a "
    "text field only when the excerpt is more specific than the record.\n"
    "- Use an empty list or null for fields the excerpt says nothing about.\n"
    "Answer with a single JSON object whose keys are the field names below."
)


def _type_label(spec: FieldSpec) -> str:
    if spec.type == "list":
        return "list of strings"
    if spec.type == "text":
        return "string or null"
    if spec.value is not None:
        return f"{spec.value} or null"
    return "list of objects" if spec.many else "object or null"


def field_explanations(fields: Sequence[FieldSpec]) -> str:
    """One bullet per field (and per property of structured records) with its type and explanation."""
    lines = []
    for spec in fields:
        lines.append(f"- {spec.name} ({_type_label(spec)}): {spec.description.strip()}")
        for name, prop in (spec.properties or {}).items():
            requirement = "required" if prop.required else "or null"
            lines.append(f"    - {name} ({prop.value}, {requirement}): {prop.description.strip()}")
    return "\n".join(lines)


def extraction_messages(
    fields: Sequence[FieldSpec],
    excerpt: str,
    *,
    number: int,
    count: int,
    record_so_far: dict[str, Any],
    title: str | None = None,
) -> list[Message]:
    """System prompt with field explanations; user prompt with the record so far and excerpt ``number`` of ``count``."""
    of_title = f" of the article {title!r}" if title else ""
    user = (
        f"Record so far (from the excerpts before this one):\n{json.dumps(record_so_far, ensure_ascii=False)}\n\n"
        if number > 1
        else ""
    ) + (
        f"Excerpt {number} of {count}{of_title}:\n{DOCUMENT_OPEN}\n{excerpt}\n{DOCUMENT_CLOSE}\n\n"
        "Return the JSON object for this excerpt."
    )
    return [
        {"role": "system", "content": f"{SYSTEM_PROMPT}\n\nFields:\n{field_explanations(fields)}"},
        {"role": "user", "content": user},
    ]


def correction_message(reason: str) -> Message:
    """The follow-up after an invalid answer: what was wrong, and to answer again."""
    return {
        "role": "user",
        "content": f"That answer is not valid: {reason}\nAnswer again with only the JSON object, using the field names and types described.",
    }


def excerpt_of(messages: Sequence[Message]) -> str:
    """The excerpt inside the document tags of the latest user message with them (else the last user message)."""
    user_messages = [message["content"] for message in messages if message["role"] == "user"]
    for content in reversed(user_messages):
        if found := _DOCUMENT.search(content):
            return found.group(1)
    return user_messages[-1] if user_messages else ""
