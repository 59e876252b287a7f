"""Choosing an extractive answer's claims, and the sentence that sums them up.

Relevance is a sentence's embedding similarity to the question, with some weight for its
source passage's (a sentence of the passage that answers the question is more likely to
answer it than an equally worded one elsewhere) and for the question's words it contains,
each weighted by how rare it is among the context's sentences (so the word that sets the
question apart from its neighbours counts most, which a small embedding model blurs). Claims are chosen by maximal marginal relevance: each pick
is the most relevant sentence that neither repeats one already chosen (same normalised
text, one inside the other, or nearly the same embedding) nor adds little beyond them, with
a small preference for sources not yet cited; the chosen claims are shown most relevant
first. The gist counts the sources behind the kept claims and says which report a finding
and which report none; when nothing answers the question, the closest findings are shown
as such, never as an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hysem_assets.core.sentences import MIN_CLAIM_WORDS, normalized, reads_as_instruction
from hysem_assets.qa.citations import audit_citations
from hysem_assets.qa.drafts import Claim, Draft, Round, cite, render_claims
from hysem_assets.qa.sources import Library, SourceMetadata

#: Weights of the source passage's similarity and of the question's rare words in a sentence's relevance.
SOURCE_WEIGHT = 0.25
WORDS_WEIGHT = 0.25
#: Claims at least this similar (cosine of their embeddings) say the same thing.
DUPLICATE_SIMILARITY = 0.9
#: How much similarity to an already chosen claim lowers a candidate (maximal marginal relevance).
REDUNDANCY_WEIGHT = 0.25
#: How much each claim already taken from the same source lowers a candidate.
SAME_SOURCE_PENALTY = 0.05
#: Candidates this far below the most relevant one answer a different question.
RELEVANCE_MARGIN = 0.25
NO_DIRECT_EVIDENCE = "No direct evidence in the indexed literature answers this question; the closest findings are:"

#: Wordings of a null result: no effect, association or difference, or a failure to find one.
_NULL_RESULT = re.compile(
    r"\b(?:no|not|nor|neither|without|lack(?:ed|s)?\s+(?:of\s+)?(?:any\s+)?|absence\s+of)\s+(?:\w+[\s-]+){0,3}?"
    r"(?:significant\w*|statistically|associat\w*|effects?|differ\w*|evidence|improv\w*|benefit\w*|relat\w*"
    r"|correlat\w*|chang\w*|impact\w*|link\w*|predict\w*|increas\w*|reduc\w*|decreas\w*|affect\w*|influenc\w*)"
    r"|\bfail(?:ed|s)?\s+to\b|\b(?:non-?significant|insignificant|inconclusive)\b"
    r"|\bnull\s+(?:effect|association|finding|result)s?\b",
    re.IGNORECASE,
)


_TOKEN = re.compile(r"[^\W_]+")
#: Words that carry no subject: a question's frame, not what it asks about.
_FUNCTION_WORDS = frozenset(
    """a about above after again against all also am among an and any are as at be been before being between both
    but by can could did do does doing done during each either for from had has have having how if in into is it
    its may might more most much no nor not of on or other our over own per same should so some such than that the
    their them then there these they this those through to too under until up upon very was we were what when where
    whether which while who whom whose why will with within without would you""".split()
)


def _stems(text: str) -> set[str]:
    """A text's words, cut to five letters so that inflections meet ("reduced", "reduction")."""
    return {w[:5] for w in _TOKEN.findall(text.casefold()) if w not in _FUNCTION_WORDS and len(w) > 1}


def word_coverage(question: str, sentences: Sequence[str], pool: Sequence[str] | None = None) -> np.ndarray:
    """Share of the question's words each sentence contains, each word weighted by its rarity
    (inverse sentence frequency) among ``pool`` (default: the sentences themselves); words no
    sentence of the pool has are left out."""
    stems = [_stems(s) for s in sentences]
    among = stems if pool is None else [_stems(s) for s in pool]
    weights = {w: np.log((len(among) + 1) / (0.5 + sum(w in s for s in among))) for w in _stems(question)}
    weights = {w: weight for w, weight in weights.items() if any(w in s for s in among)}
    total = sum(weights.values())
    if not total:
        return np.zeros(len(sentences), dtype=np.float32)
    return np.array([sum(weight for w, weight in weights.items() if w in s) / total for s in stems], dtype=np.float32)


def relevance(
    question: np.ndarray, sentences: np.ndarray, source_similarity: np.ndarray, coverage: np.ndarray
) -> np.ndarray:
    """Each sentence's relevance to the question, from unit vectors of the question and the
    sentences, each sentence's passage's similarity to the question, and :func:`word_coverage`."""
    if not len(sentences):
        return np.zeros(0, dtype=np.float32)
    own = 1 - SOURCE_WEIGHT - WORDS_WEIGHT
    return own * (sentences @ question) + SOURCE_WEIGHT * source_similarity + WORDS_WEIGHT * coverage


def near_duplicates(first: str, second: str, similarity: float) -> bool:
    """Two claims that say the same: equal once normalised, one inside the other, or nearly the same embedding."""
    a, b = normalized(first), normalized(second)
    shorter, longer = sorted((a, b), key=len)
    contained = len(shorter.split()) >= MIN_CLAIM_WORDS and f" {shorter} " in f" {longer} "
    return a == b or contained or similarity >= DUPLICATE_SIMILARITY


@dataclass(frozen=True)
class Candidate:
    """A sentence that could be a claim: its text, the document it comes from, and its relevance."""

    text: str
    document: str
    relevance: float


def select_claims(
    candidates: Sequence[Candidate],
    vectors: np.ndarray,
    *,
    limit: int,
    floor: float,
    margin: float = RELEVANCE_MARGIN,
) -> list[int]:
    """Indices of up to ``limit`` candidates at or above ``floor`` and within ``margin`` of the best, chosen by maximal marginal relevance without near-duplicates (see the module doc),
    most relevant first."""
    if not candidates:
        return []
    floor = max(floor, max(c.relevance for c in candidates) - margin)
    pool = [
        i for i in np.argsort([-c.relevance for c in candidates], kind="stable") if candidates[i].relevance >= floor
    ]
    chosen: list[int] = []
    while pool and len(chosen) < limit:
        best, best_score = None, -np.inf
        for i in list(pool):
            similar = [float(vectors[i] @ vectors[j]) for j in chosen]
            if any(near_duplicates(candidates[i].text, candidates[j].text, s) for j, s in zip(chosen, similar)):
                pool.remove(i)
                continue
            repeats = sum(candidates[j].document == candidates[i].document for j in chosen)
            score = (
                candidates[i].relevance - REDUNDANCY_WEIGHT * max(similar, default=0.0) - SAME_SOURCE_PENALTY * repeats
            )
            if score > best_score:
                best, best_score = i, score
        if best is not None:
            chosen.append(best)
            pool.remove(best)
    return sorted(chosen, key=lambda i: -candidates[i].relevance)


def repeated_claims(texts: Sequence[str], vectors: np.ndarray) -> dict[int, int]:
    """``{n: m}`` for each claim n that says what an earlier claim m already said."""
    repeats: dict[int, int] = {}
    for n in range(len(texts)):
        for m in range(n):
            if m not in repeats and near_duplicates(texts[n], texts[m], float(vectors[n] @ vectors[m])):
                repeats[n] = m
                break
    return repeats


def reports_null_result(text: str) -> bool:
    """True for a claim that reports no effect, association or difference (or a failure to find one)."""
    return bool(_NULL_RESULT.search(text))


def _bare(shown: str) -> str:
    """An in-text citation without its own parentheses, to list several inside one pair."""
    cited, marker, rest = shown.partition(" [")
    if cited.startswith("(") and cited.endswith(")"):
        cited = cited[1:-1]
    return f"{cited}{marker}{rest}"


def gist(draft: Draft) -> str | None:
    """One sentence over the claims: how many sources they cite, which report a finding and which
    report a null result. A source reports a null result when all its claims do."""
    by_source: dict[str, list[Claim]] = {}
    shown: dict[str, str] = {}
    for claim in draft.claims:
        for citation in claim.citations:
            document = str(citation.get("PDF_DocIndex"))
            by_source.setdefault(document, []).append(claim)
            shown.setdefault(document, _bare(cite(citation)))
    if not by_source:
        return None
    null = [d for d, claims in by_source.items() if all(reports_null_result(c.text) for c in claims)]
    found = [d for d in by_source if d not in null]

    def cites(documents: list[str]) -> str:
        return "; ".join(dict.fromkeys(shown[d] for d in documents))

    total = len(by_source)
    if total == 1:
        what = "reports no effect, association or difference" if null else "reports a finding"
        return f"One source bears on this question ({cites(found or null)}); it {what}."
    if not null:
        return f"{total} sources report findings on this question ({cites(found)}); none reports a null result."
    if not found:
        return f"{total} sources bear on this question, and all report no effect, association or difference ({cites(null)})."
    return (
        f"Of {total} sources, {len(found)} report a finding ({cites(found)}) and {len(null)} "
        f"report no effect, association or difference ({cites(null)}): the evidence is mixed."
    )


def closest_findings(
    rounds: Sequence[Round], sources: Sequence[SourceMetadata], library: Library, *, limit: int = 3
) -> Draft:
    """When no claim answers the question: the first draft's claims that its cited text supports and
    that cite correctly, only too far from the question to answer it, with their citations checked."""
    if not rounds:
        return Draft(())
    first = rounds[0]
    findings = {f.claim: f for f in first.verdict.findings}
    supported = [
        claim
        for n, claim in enumerate(first.draft.claims)
        if (f := findings.get(n)) is not None
        and f.supported
        and f.citations_ok
        and not reads_as_instruction(claim.text)
    ]
    return audit_citations(Draft(tuple(supported[:limit])), sources, library).kept


def render_answer(draft: Draft, closest: Draft | None = None, summary: str | None = None) -> str | None:
    """Markdown of an answer's body: the summary sentence (:func:`gist`, for answers drawn from
    text), then the claims; or, with no claim, the closest findings under a plain "no direct
    evidence"; None when there is neither."""
    if draft.claims:
        return f"{summary}\n\n{render_claims(draft)}" if summary else render_claims(draft)
    if closest is not None and closest.claims:
        return f"{NO_DIRECT_EVIDENCE}\n\n{render_claims(closest)}"
    return None
