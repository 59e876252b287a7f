"""Which findings rows an effect question is about, read the way the rest of hysem reads terms.

A question's term matches a row's role (intervention, comparator, outcome) when the row's
span, as the study writes it, contains the term as :class:`~hysem_assets.core.matcher.TermMatcher`
reads spellings (any case, hyphens or spaces, plurals: "statins" meets "statin therapy",
"dementia" meets "incident dementia"). Failing that, it matches through the canonical term
beside the span (``*_term``: the partition's ``canonical_terms``), or through the canonical terms
the partition's vocabulary gives the question's words (dictionary synonyms, canonical terms of
raw spellings, and a protocol's broader terms with the terms they cover, as the other routes'
filters read them); such a row is marked, because the study's own words do not say it.

Class words ("statins" for atorvastatin) come from broader terms and, for drugs, from the
stems of their nonproprietary names (:mod:`~hysem_assets.terms.drug_classes`: "statins" meets
a span naming a drug that ends in "-vastatin"); such a row is marked too. Two general
readings were measured on Evidence Inference 2.0's prompts and rejected: any shared word
ending pairs "agonist" with "antagonist", "function" with "dysfunction" and "statin" with
"nystatin"; and MiniLM's similarity of a class to its members (15 drug classes, 42 members,
18 other drugs) reaches a recall of 0.44 only at 4.4% false matches (cosine 0.4).

A term inside a negated phrase ("no statin use", "without statins", read as the question's own
negations are: :func:`~hysem_assets.qa.terms.split_negated`) does not meet a term asked plainly.
A row whose comparator is the question's intervention (placebo versus atorvastatin, or no statin
use versus statin use, asked about statins) is the same comparison seen from the other side: it
matches with its direction reversed.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from hysem_assets.core.matcher import TermMatcher, is_abbreviation, term_keys
from hysem_assets.qa.effect_questions import EffectQuestion
from hysem_assets.qa.terms import QuestionMatcher, all_terms, recognise_terms, split_negated
from hysem_assets.terms.drug_classes import class_stems, names_member

#: How a question's term met a row: in the study's own words, or only through a canonical term.
IN_TEXT = "text"
THROUGH_CANONICAL = "canonical term"


def spellings(phrase: str) -> dict[str, str]:
    """``phrase`` as a spelling of itself, and with its last word read as a plural's singular ("statins" ->
    "statin"): the matcher finds a spelling's plurals in text, never its singular."""
    *first, last = phrase.split()
    found = {phrase: phrase}
    if not is_abbreviation(last):
        for key in term_keys(last)[1:]:
            found.setdefault(" ".join([*first, key]), phrase)
    return found


class AskedTerm:
    """One term of a question: its own spellings, and the canonical terms the vocabulary gives it."""

    def __init__(self, phrase: str, matchers: Mapping[str, QuestionMatcher]) -> None:
        self.own = TermMatcher(spellings(phrase))
        named = all_terms(recognise_terms(phrase, matchers))
        self.canonical = TermMatcher({s: c for term in [phrase, *named] for s, c in spellings(term).items()})
        #: A term asked plainly is not met by a negated one ("statins" by "no statin use").
        self.plain = not split_negated(phrase)[1]
        #: The INN stems of the drug class the term names, if it names one.
        self.members = class_stems(phrase)
        self._seen: dict[tuple[str, str], str | None] = {}

    def _affirmed(self, text: object) -> str:
        if not isinstance(text, str):
            return ""
        return split_negated(text)[0] if self.plain else text

    def how(self, span: object, term: object) -> str | None:
        """How the term meets a row's ``span`` and canonical ``term`` (:data:`IN_TEXT`, :data:`THROUGH_CANONICAL`),
        None when it does not."""
        key = (self._affirmed(span), self._affirmed(term))
        if key not in self._seen:
            span_text, term_text = key
            if self.own.find(span_text):
                self._seen[key] = IN_TEXT
            elif (
                self.canonical.find(term_text)
                or self.canonical.find(span_text)
                or (self.members and names_member(span_text, self.members))
            ):
                self._seen[key] = THROUGH_CANONICAL
            else:
                self._seen[key] = None
        return self._seen[key]


def _oriented(
    row: Mapping[str, object], intervention: AskedTerm, comparator: AskedTerm | None
) -> tuple[str, str | None, bool] | None:
    """How the row meets the question's intervention and comparator, and whether only reversed (its comparator
    being the question's intervention); None when it does not either way."""
    for reversed_, (own, other) in ((False, ("intervention", "comparator")), (True, ("comparator", "intervention"))):
        found = intervention.how(row[own], row[f"{own}_term"])
        against = comparator.how(row[other], row[f"{other}_term"]) if comparator else None
        if found is not None and (comparator is None or against is not None):
            return found, against, reversed_
    return None


def matching_findings(
    findings: pd.DataFrame, question: EffectQuestion, matchers: Mapping[str, QuestionMatcher]
) -> pd.DataFrame:
    """The preferred rows about the question's intervention (and comparator, when it names one), with how each
    role met the question (``intervention_match``, ``comparator_match``, ``outcome_match``: :data:`IN_TEXT`,
    :data:`THROUGH_CANONICAL` or None) and whether the row is the comparison seen from the other side
    (``reversed``). ``outcome_match`` None marks a row about another outcome, which the answer names but never
    tabulates."""
    preferred = findings[findings["preferred"].astype("boolean").fillna(True).astype(bool)]
    intervention = AskedTerm(question.intervention, matchers)
    comparator = AskedTerm(question.comparator, matchers) if question.comparator else None
    oriented = [_oriented(row, intervention, comparator) for row in preferred.to_dict("records")]
    kept = [o for o in oriented if o is not None]
    about = preferred[pd.Series([o is not None for o in oriented], index=preferred.index, dtype=bool)].assign(
        intervention_match=[o[0] for o in kept], comparator_match=[o[1] for o in kept], reversed=[o[2] for o in kept]
    )
    outcome = AskedTerm(question.outcome, matchers)
    return about.assign(
        outcome_match=[outcome.how(s, t) for s, t in zip(about["outcome"], about["outcome_term"], strict=True)]
    )
