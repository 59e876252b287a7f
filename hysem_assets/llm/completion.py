"""What every model backend exchanges: chat messages in, a completion with token counts out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

#: One chat message, ``{"role": "system" | "user" | "assistant", "content": "..."}``.
Message = dict[str, str]

_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


class LLMError(Exception):
    """A request a backend could not answer, after its own retries; the caller records it."""


class UnreadableText(LLMError):
    """A text the backend cannot read (another language, no words): its fields stay empty, with this reason."""


@dataclass(frozen=True)
class Completion:
    """A model's answer.

    When a schema was asked, :func:`~hysem_assets.llm.validation.checked` sets ``parsed_json``
    to the answer's value if it satisfies the schema, and ``invalid`` to why not otherwise.
    """

    text: str
    parsed_json: Any | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    #: Why generation stopped, as the server says it ("stop", "length"...), when it says.
    finish_reason: str | None = None
    #: Why the answer does not satisfy the schema asked for (each problem with its field); None when it does.
    invalid: str | None = None


@dataclass
class TokenUsage:
    """What one run cost: tokens of answers actually generated, and answers replayed from cache."""

    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, completion: Completion) -> None:
        if completion.cached:
            self.cache_hits += 1
            return
        self.requests += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens

    def as_metadata(self) -> dict[str, int]:
        return {
            "llm_requests": self.requests,
            "llm_cache_hits": self.cache_hits,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


def parse_json_text(text: str) -> Any | None:
    """The JSON value in a model's answer, tolerating a Markdown code fence; None if it is not JSON.

    Servers without constrained decoding often wrap JSON in ```json fences even when told
    not to; accepting that saves a retry without accepting anything that is not JSON.
    """
    fenced = _FENCE.match(text)
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except (json.JSONDecodeError, ValueError):
        return None
