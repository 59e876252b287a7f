"""Draft, audit, revise: until the auditor approves or the rounds run out."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from hysem_assets.qa.agents import Auditor, Generator
from hysem_assets.qa.drafts import Draft, Round
from hysem_assets.qa.sources import ContextChunk


@dataclass(frozen=True)
class LoopResult:
    rounds: list[Round]
    generation_seconds: float
    audit_seconds: float

    @property
    def final(self) -> Round:
        return self.rounds[-1]

    @property
    def approved(self) -> bool:
        return self.final.verdict.approved

    @property
    def rejected(self) -> list[Round]:
        return [r for r in self.rounds[:-1] if not r.verdict.approved]


async def revise_until_approved(
    question: str, context: Sequence[ContextChunk], generator: Generator, auditor: Auditor, *, max_rounds: int
) -> LoopResult:
    rounds: list[Round] = []
    generating = auditing = 0.0
    previous: Draft | None = None
    for number in range(1, max_rounds + 1):
        started = time.perf_counter()
        verdict = rounds[-1].verdict if rounds else None
        draft = await generator.draft(question, context, previous=previous, verdict=verdict)
        generating += time.perf_counter() - started
        started = time.perf_counter()
        verdict = await auditor.audit(question, context, draft)
        auditing += time.perf_counter() - started
        rounds.append(Round(number, draft, verdict))
        if verdict.approved:
            break
        previous = draft
    return LoopResult(rounds, generating, auditing)
