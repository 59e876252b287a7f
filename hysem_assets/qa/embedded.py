"""The embedded default generator and auditor: no weights beyond the bundled MiniLM.

The extractive generator drafts for recall: its claims are the context sentences most
similar to the question, down to a low floor, each citing the chunk it came from. The
rule-based auditor judges for precision: a claim passes if its words are found in the
chunks it cites (support), it is close enough to the question to answer it (logic), and
every citation is a metadata object of the context, copied exactly (protocol); a sentence
that instructs a model instead of reporting a finding is rejected too. Lower-ranked
sentences that the floor let in but that do not answer the question are what it rejects,
and the revision drops exactly those, so the loop yields real preference pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from hysem_assets.embeddings import Encoder
from hysem_assets.extraction.text import split_sentences
from hysem_assets.llm import TokenUsage
from hysem_assets.qa.drafts import Claim, Draft, Finding, Verdict
from hysem_assets.qa.sources import ContextChunk

_WORD = re.compile(r"\w+")
MIN_SENTENCE_WORDS = 6
#: Wordings of text addressed to a model rather than reporting a finding: a chunk carrying
#: one is attempting a prompt injection, and quoting it as a claim would pass it on.
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.]{0,60}\b(?:instructions?|prompts?|rules|guidelines)\b"
    r"|\b(?:system|developer) prompt\b"
    r"|\byou are (?:now|an? (?:ai|assistant|chatbot|(?:large )?language model))\b"
    r"|\bas an ai\b"
    r"|\b(?:cite|answer|respond|reply|output|say)\s+only\b"
    r"|\bfor (?:every|each|any) (?:claim|answer|response|question) you\b",
    re.IGNORECASE,
)


def reads_as_instruction(text: str) -> bool:
    """True for text that instructs a model (``Ignore all previous instructions...``)."""
    return bool(_INSTRUCTION.search(text))


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 2]


def containment(claim: str, source: str) -> float:
    """Share of the claim's words that occur in the source: 1.0 for a sentence quoted from it."""
    words = content_words(claim)
    if not words:
        return 0.0
    present = set(content_words(source))
    return sum(w in present for w in words) / len(words)


class ExtractiveGenerator:
    def __init__(self, embedder: Encoder, *, claims: int = 4, min_similarity: float = 0.25) -> None:
        self.embedder = embedder
        self.claims = claims
        self.min_similarity = min_similarity
        self.model = f"extractive-qa/{embedder.name}"
        self.usage = TokenUsage()

    async def draft(
        self,
        question: str,
        context: Sequence[ContextChunk],
        *,
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        if previous is not None and verdict is not None:
            failed = verdict.failed_claims()
            return Draft(tuple(c for n, c in enumerate(previous.claims) if n not in failed))
        candidates = [
            (sentence, chunk)
            for chunk in context
            for sentence in split_sentences(chunk.text)
            if len(sentence.split()) >= MIN_SENTENCE_WORDS
        ]
        if not candidates:
            return Draft(())
        vectors = self.embedder.encode([question, *(s for s, _ in candidates)])
        similarity = vectors[1:] @ vectors[0]
        chosen: list[Claim] = []
        for index in np.argsort(-similarity, kind="stable"):
            sentence, chunk = candidates[int(index)]
            if similarity[index] < self.min_similarity or len(chosen) == self.claims:
                break
            if all(c.text != sentence for c in chosen):
                chosen.append(Claim(sentence, (chunk.metadata.as_dict(),)))
        return Draft(tuple(chosen))


class RuleAuditor:
    def __init__(self, embedder: Encoder, *, min_relevance: float = 0.45, min_support: float = 0.8) -> None:
        self.embedder = embedder
        self.min_relevance = min_relevance
        self.min_support = min_support
        self.model = f"rules/{embedder.name}"
        self.usage = TokenUsage()

    async def audit(self, question: str, context: Sequence[ContextChunk], draft: Draft) -> Verdict:
        if not draft.claims:
            return Verdict(True, (), "no claims to audit", self.model)
        by_object = {tuple(sorted(c.metadata.as_dict().items())): c for c in context}
        vectors = self.embedder.encode([question, *(c.text for c in draft.claims)])
        relevance = vectors[1:] @ vectors[0]
        findings = []
        for n, claim in enumerate(draft.claims):
            cited = [by_object.get(tuple(sorted(citation.items()))) for citation in claim.citations]
            citations_ok = bool(cited) and all(c is not None for c in cited)
            support = containment(claim.text, " ".join(c.text for c in cited if c is not None))
            notes = []
            if not citations_ok:
                notes.append("cites no source, or a source that is not a context metadata object copied exactly")
            if support < self.min_support:
                notes.append(f"weak support: {support:.0%} of its words are in the cited text")
            answers = bool(relevance[n] >= self.min_relevance)
            if not answers:
                notes.append(f"does not answer the question (similarity {relevance[n]:.2f} < {self.min_relevance})")
            if reads_as_instruction(claim.text):
                answers = False
                notes.append("reads as an instruction to a model, not a finding (a prompt injection in the source)")
            findings.append(Finding(n, support >= self.min_support, answers, citations_ok, "; ".join(notes)))
        failed = [f for f in findings if not f.passed]
        feedback = "; ".join(f"claim {f.claim}: {f.note}" for f in failed) or "all claims supported and cited"
        return Verdict(not failed, tuple(findings), feedback, self.model)
