"""The embedded default generator and auditor: no weights beyond the bundled MiniLM.

The extractive generator drafts for recall: its claims are whole context sentences that
state something (no labels, headings, keyword or metadata lines, see ``sentences``), chosen
by relevance to the question down to a low floor, without repeats and spread across
sources (``claims``), each citing the chunk it came from. The rule-based auditor judges for
precision: a claim passes if its words are found in the chunks it cites (support), it is
relevant enough to answer the question and says something new (logic), and every citation
is a metadata object of the context, copied exactly (protocol); a sentence that instructs a
model, or a metadata line, is rejected too. Lower-ranked sentences that the floor let in
but that do not answer the question are what it rejects, and the revision drops exactly
those, so the loop yields real preference pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from hysem_assets.core.sentences import claim_text, metadata_reason, reads_as_instruction
from hysem_assets.core.text import split_sentences
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.llm.completion import TokenUsage
from hysem_assets.qa.claims import (
    RELEVANCE_MARGIN,
    Candidate,
    relevance,
    repeated_claims,
    select_claims,
    word_coverage,
)
from hysem_assets.qa.drafts import Claim, Draft, Finding, Verdict
from hysem_assets.qa.sources import ABSTRACT_EVIDENCE, ContextChunk

__all__ = ["ExtractiveGenerator", "RuleAuditor", "containment", "reads_as_instruction"]

_WORD = re.compile(r"\w+")


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 2]


def containment(claim: str, source: str) -> float:
    """Share of the claim's words that occur in the source: 1.0 for a sentence quoted from it."""
    words = content_words(claim)
    if not words:
        return 0.0
    present = set(content_words(source))
    return sum(w in present for w in words) / len(words)


def passage(chunk: ContextChunk) -> str:
    """A chunk as it was indexed: its section (a work's title, for an abstract) gives it its subject."""
    return f"{chunk.section}\n{chunk.text}" if chunk.section else chunk.text


class SentenceVectors:
    """An encoder that remembers what it embedded for the question at hand, so the auditor does not
    embed again the question and the claims the generator just embedded (embedding is most of an
    extractive answer's time). The generator forgets it all when a new question starts."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self._vectors: dict[str, np.ndarray] = {}

    def forget(self) -> None:
        self._vectors.clear()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self.encoder.encode(missing), strict=True))
        if not texts:
            return np.zeros((0, self.encoder.dimension), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])


def passage_similarity(asked: np.ndarray, context: Sequence[ContextChunk], encoder: Encoder) -> np.ndarray:
    """Each chunk's similarity to the question: dense search's score when it scored the chunk, else embedded now."""
    known = [c.similarity for c in context]
    todo = [n for n, value in enumerate(known) if value is None]
    if todo:
        vectors = encoder.encode([passage(context[n]) for n in todo])
        for n, vector in zip(todo, vectors, strict=True):
            known[n] = float(vector @ asked)
    return np.asarray(known, dtype=np.float32)


def candidate_sentences(chunk: ContextChunk) -> list[str]:
    """The chunk's sentences that can be claims; a work known only by its title offers the title."""
    whole_title = chunk.evidence == ABSTRACT_EVIDENCE and chunk.section == "Title"
    found = (claim_text(s, whole_title=whole_title) for s in split_sentences(chunk.text))
    return [s for s in found if s is not None]


class ExtractiveGenerator:
    def __init__(
        self, embedder: Encoder, *, claims: int = 5, min_similarity: float = 0.25, margin: float = RELEVANCE_MARGIN
    ) -> None:
        self.embedder = embedder
        self.claims = claims
        self.min_similarity = min_similarity
        self.margin = margin
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
        if isinstance(self.embedder, SentenceVectors):
            self.embedder.forget()  # a new question
        found = [(sentence, n) for n, chunk in enumerate(context) for sentence in candidate_sentences(chunk)]
        if not found:
            return Draft(())
        vectors = self.embedder.encode([question, *(s for s, _ in found)])
        asked, sentences = vectors[0], vectors[1:]
        passages = passage_similarity(asked, context, self.embedder)
        coverage = word_coverage(question, [s for s, _ in found])
        scores = relevance(asked, sentences, passages[[n for _, n in found]], coverage)
        candidates = [
            Candidate(sentence, context[n].metadata.PDF_DocIndex, float(score))
            for (sentence, n), score in zip(found, scores, strict=True)
        ]
        chosen = select_claims(candidates, sentences, limit=self.claims, floor=self.min_similarity, margin=self.margin)
        return Draft(tuple(Claim(found[i][0], (context[found[i][1]].metadata.as_dict(),)) for i in chosen))


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
        cited_chunks = [
            [by_object.get(tuple(sorted(citation.items()))) for citation in claim.citations] for claim in draft.claims
        ]
        vectors = self.embedder.encode([question, *(c.text for c in draft.claims)])
        asked, claims = vectors[0], vectors[1:]
        passages = dict(zip((c.chunk_id for c in context), passage_similarity(asked, context, self.embedder)))
        repeats = repeated_claims([c.text for c in draft.claims], claims)
        pool = [s for c in context for s in candidate_sentences(c)]
        coverage = word_coverage(question, [c.text for c in draft.claims], pool or None)
        findings = []
        for n, (claim, cited) in enumerate(zip(draft.claims, cited_chunks, strict=True)):
            citations_ok = bool(cited) and all(c is not None for c in cited)
            found = [c for c in cited if c is not None]
            support = containment(claim.text, " ".join(c.text for c in found))
            source = max((passages[c.chunk_id] for c in found), default=float(claims[n] @ asked))
            score = float(relevance(asked, claims[n][None], np.float32([source]), coverage[n : n + 1])[0])
            notes = []
            if not citations_ok:
                notes.append("cites no source, or a source that is not a context metadata object copied exactly")
            if support < self.min_support:
                notes.append(f"weak support: {support:.0%} of its words are in the cited text")
            answers = score >= self.min_relevance
            if not answers:
                notes.append(f"does not answer the question (relevance {score:.2f} < {self.min_relevance})")
            if reads_as_instruction(claim.text):
                answers = False
                notes.append("reads as an instruction to a model, not a finding (a prompt injection in the source)")
            if reason := metadata_reason(claim.text):
                answers = False
                notes.append(reason)
            if n in repeats:
                answers = False
                notes.append(f"repeats claim {repeats[n]}")
            findings.append(Finding(n, support >= self.min_support, answers, citations_ok, "; ".join(notes)))
        failed = [f for f in findings if not f.passed]
        feedback = "; ".join(f"claim {f.claim}: {f.note}" for f in failed) or "all claims supported and cited"
        return Verdict(not failed, tuple(findings), feedback, self.model)
