"""The synthesis route's answer: what the included studies found about an intervention's effect on an outcome.

The table is one line per study per comparison (intervention versus comparator on an outcome,
as the canonical terms name them, seen from the question's side): a study reporting the same
comparison in several sentences shows its most telling finding (one with an estimate, then the
most confident), the others kept by id in the JSON; a study reporting several matching
comparisons (two outcomes, two comparators) has a line for each. Lines are grouped by direction;
meta-analyses and reviews (``study_kind == "review"``) are a group of their own, shown and never
counted. :func:`synthesize` computes the groups and the verdict together, so the verdict's counts
are the table's: each group counts a study once, a study whose comparisons went different ways
counts in each of their groups, and the verdict says how many did.

Where at least two primary studies of the table state an estimate of one measure for one
comparison, they are pooled by random effects (:func:`hysem_assets.findings.pooling.syntheses`)
and a forest plot is drawn; measures that cannot be pooled together are shown side by side with
the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.findings import forest, pooling
from hysem_assets.findings.schema import ABSTRACT, DECREASED, DIRECTIONS, INCREASED, NO_DIFFERENCE
from hysem_assets.qa.charts import forest_chart
from hysem_assets.qa.comparisons import format_number
from hysem_assets.qa.drafts import Claim, Draft, cite
from hysem_assets.qa.effect_questions import EffectQuestion
from hysem_assets.qa.finding_matches import IN_TEXT, matching_findings
from hysem_assets.qa.sources import ChunkRow, Library, SourceMetadata, clean, evidence_citation
from hysem_assets.qa.terms import QuestionMatcher

#: The group of meta-analyses and reviews, beside the direction groups of primary studies.
REVIEWS = "review"
LABELS = {
    DECREASED: "Significantly decreased",
    NO_DIFFERENCE: "No significant difference",
    INCREASED: "Significantly increased",
    REVIEWS: "Meta-analyses and reviews (not counted)",
}
#: What a study found, as the verdict says it.
FOUND = {DECREASED: "a significant decrease", NO_DIFFERENCE: "no significant difference",
         INCREASED: "a significant increase"}  # fmt: skip
_TURNED = {INCREASED: DECREASED, DECREASED: INCREASED}
ROLES = ("intervention", "comparator", "outcome")


def findings_missing(query: str) -> str:
    """Why a partition whose findings were never computed (a state older than the findings asset) has no table,
    and the command that computes them."""
    return (
        f"Findings have not been computed for {query!r}, so what its studies found cannot be tabulated; "
        f"`hysem materialize --query {query} --select findings` computes them."
    )


def describe_estimate(measure: Any, estimate: Any, low: Any, high: Any, p_value: Any = None) -> str | None:
    """ "hazard ratio 0.8 (95% CI 0.7 to 0.91)", with the p value when no interval is stated; None without one."""
    if (estimate := clean(estimate)) is None:
        return None
    text = f"{clean(measure) or 'estimate'} {format_number(estimate)}"
    low, high, p_value = clean(low), clean(high), clean(p_value)
    if low is not None and high is not None:
        return f"{text} (95% CI {format_number(low)} to {format_number(high)})"
    return f"{text} (p = {format_number(p_value)})" if p_value is not None else text


def _text(value: Any) -> str:
    return "" if (found := clean(value)) is None else str(found)


@dataclass(frozen=True)
class Line:
    """One study's finding for one comparison, seen from the question's side."""

    cluster_id: str
    finding_id: str
    #: The direction of the question's intervention against its comparator (a reversed row's turned round).
    direction: str
    study_kind: str
    #: role -> the span as the study writes it
    spans: dict[str, str]
    #: role -> its canonical term
    terms: dict[str, str]
    evidence: str
    source: str
    section: str | None
    estimate: str | None
    citation: SourceMetadata
    #: role -> how the question's term met it (text, canonical term); roles the question did not name are absent
    matched: dict[str, str]
    reversed: bool
    confidence: float | None
    #: Other findings of the same study and comparison, not shown (one line per study per comparison).
    also: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        return REVIEWS if self.study_kind == REVIEWS else self.direction

    @property
    def through_canonical(self) -> list[str]:
        """The roles the question's terms met only through a canonical term."""
        return [role for role, how in self.matched.items() if how != IN_TEXT]

    def comparison(self) -> str:
        """ "atorvastatin versus placebo on incident dementia", a role met only through its canonical term marked."""
        shown = {
            role: self.spans[role]
            + (f" [canonical term: {self.terms[role]}]" if role in self.through_canonical else "")
            for role in ROLES
        }
        return f"{shown['intervention']} versus {shown['comparator']} on {shown['outcome']}"

    def as_json(self) -> dict[str, Any]:
        return {
            "cluster_id": self.cluster_id,
            "finding_id": self.finding_id,
            "citation": self.citation.as_dict(),
            "direction": self.direction,
            "study_kind": self.study_kind,
            "comparison": self.spans,
            "terms": self.terms,
            "evidence": self.evidence,
            "source": self.source,
            "section": self.section,
            "estimate": self.estimate,
            "confidence": self.confidence,
            "matched": self.matched,
            "through_canonical_term": self.through_canonical,
            "reversed": self.reversed,
            "also": list(self.also),
        }


@dataclass(frozen=True)
class Group:
    """The lines of one direction (or the reviews), and the studies they count."""

    key: str
    lines: tuple[Line, ...]

    @property
    def label(self) -> str:
        return LABELS[self.key]

    @property
    def studies(self) -> list[str]:
        return list(dict.fromkeys(line.cluster_id for line in self.lines))

    def as_json(self) -> dict[str, Any]:
        return {"group": self.key, "label": self.label, "studies": len(self.studies),
                "lines": [line.as_json() for line in self.lines]}  # fmt: skip


def _studies(count: int) -> str:
    return f"{count} stud{'y' if count == 1 else 'ies'}"


def _order(question: EffectQuestion) -> list[str]:
    """The direction groups, the one the question asks about first, then the reviews."""
    return sorted(DIRECTIONS, key=lambda d: d != question.direction) + [REVIEWS]


def _verdict(question: EffectQuestion, groups: Sequence[Group], over: str = "") -> str:
    """The studies of each direction group (the asked direction first), then what else the table holds;
    ``over`` names the works they were drawn from ("34 included studies"), when known."""
    counted = {group.key: len(group.studies) for group in groups}
    (first, *rest) = [(counted.get(d, 0), FOUND[d]) for d in _order(question) if d != REVIEWS]
    parts = [f"{_studies(first[0]) if first[0] else 'no study'} found {first[1]}"]
    parts += [f"{count or 'none'} {said}" for count, said in rest]
    primary = [group for group in groups if group.key != REVIEWS]
    studies = {c for group in primary for c in group.studies}
    among = f" (of {over})" if over else ""
    text = f"Of {_studies(len(studies))} reporting {question.describe()}{among}, {', '.join(parts)}."
    if split := sum(sum(c in group.studies for group in primary) > 1 for c in studies):
        text += f" {_studies(split)} reported comparisons that went different ways and count in each of their groups."
    if reviews := counted.get(REVIEWS):
        shown = "1 meta-analysis or review is" if reviews == 1 else f"{reviews} meta-analyses or reviews are"
        text += f" {shown} shown apart and not counted."
    if marked := sum(bool(line.through_canonical) for group in groups for line in group.lines):
        said = "line matches" if marked == 1 else "lines match"
        text += f" {marked} {said} the question only through a canonical term (marked)."
    return text


@dataclass(frozen=True)
class Synthesis:
    """The grouped table with the verdict counted from it; the pooled results drawn from its primary lines; what
    was left out."""

    question: EffectQuestion
    groups: tuple[Group, ...]
    verdict: str
    #: Outcomes the findings about the question's intervention do report, when none reports the asked one.
    other_outcomes: list[str] = field(default_factory=list)
    pooled: list[pooling.Pooled] = field(default_factory=list)
    not_pooled: list[pooling.NotPooled] = field(default_factory=list)
    #: one {"svg", "png"} per pooled result, in its order
    forest_plots: list[dict[str, str]] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    #: Works with findings but no library record: they cannot be cited, so they are not shown.
    uncited: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[Line]:
        return [line for group in self.groups for line in group.lines]

    @property
    def empty(self) -> bool:
        return not self.groups

    def counts(self) -> dict[str, int]:
        """Studies per group, as the verdict states them."""
        return {group.key: len(group.studies) for group in self.groups}

    def nothing(self) -> str:
        """Why the table is empty (passages answer instead), with the outcomes the findings do report."""
        asked = self.question
        text = f"No finding of the included studies is on {asked.outcome} for {asked.intervention}"
        text += f" versus {asked.comparator}." if asked.comparator else "."
        if self.other_outcomes:
            text += f" The findings about {asked.intervention} are on: {'; '.join(self.other_outcomes)}."
        return text

    def _citations(self, clusters: Sequence[str]) -> tuple[dict[str, Any], ...]:
        """One citation per study of ``clusters``: its first line's."""
        by_cluster: dict[str, SourceMetadata] = {}
        for line in self.lines:
            by_cluster.setdefault(line.cluster_id, line.citation)
        return tuple(by_cluster[c].as_dict() for c in dict.fromkeys(clusters) if c in by_cluster)

    def draft(self) -> Draft:
        """The verdict (citing the counted studies), one claim per line, then the pooled and side-by-side results."""
        counted = [line.cluster_id for line in self.lines if line.group != REVIEWS] or [
            line.cluster_id for line in self.lines
        ]
        claims = [Claim(self.verdict, self._citations(counted))]
        for group in self.groups:
            claims += [Claim(f"{group.label}: {_line_text(line)}", (line.citation.as_dict(),)) for line in group.lines]
        claims += [
            Claim(pooled_text(result), self._citations([s.cluster_id for s in result.studies]))
            for result in self.pooled
        ]
        claims += [
            Claim(side_by_side_text(comparison, studies, reason), self._citations([s.cluster_id for s in studies]))
            for comparison, (studies, reason) in side_by_side(self.not_pooled).items()
        ]
        return Draft(tuple(claims))

    @property
    def sources(self) -> list[SourceMetadata]:
        return list(dict.fromkeys(line.citation for line in self.lines))

    def markdown(self) -> str:
        """The verdict, a table per group, the pooled results with their forest plots, the side-by-side ones."""
        parts = [self.verdict]
        for group in self.groups:
            rows = [
                f"| {_cell(cite(line.citation.as_dict()))} | {_cell(line.comparison())} | {_cell(line.evidence)} "
                f"| {_cell(line.estimate or '')} | {line.source} |"
                for line in group.lines
            ]
            parts.append(
                f"**{group.label}** ({_studies(len(group.studies))})\n\n"
                "| Study | Comparison | Evidence | Estimate | Source |\n|---|---|---|---|---|\n" + "\n".join(rows)
            )
        if self.pooled:
            parts.append(
                "**Pooled (random effects)**\n\n"
                + "\n".join(
                    f"- {pooled_text(result)} Forest plot: {plot['svg']}"
                    for result, plot in zip(self.pooled, self.forest_plots, strict=True)
                )
            )
        if shown := side_by_side(self.not_pooled):
            parts.append(
                "**Not pooled**\n\n"
                + "\n".join(f"- {side_by_side_text(c, studies, reason)}" for c, (studies, reason) in shown.items())
            )
        return "\n\n".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {
            "question": self.question.as_json(),
            "verdict": self.verdict,
            "counts": self.counts(),
            "groups": [group.as_json() for group in self.groups],
            "pooled": [result.as_json() for result in self.pooled],
            "not_pooled": [result.as_json() for result in self.not_pooled],
            "forest_plots": self.forest_plots,
            "chart": self.forest_plots[0] if self.forest_plots else None,
            "other_outcomes": self.other_outcomes,
            "retracted": self.retracted,
            "uncited": self.uncited,
        }


def _cell(text: str) -> str:
    """Text in a Markdown table cell: one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _line_text(line: Line) -> str:
    estimate = f" ({line.estimate})" if line.estimate else ""
    return f'{line.comparison()}: "{line.evidence}"{estimate} [{line.source}]'


def _comparison_words(comparison: tuple[str, str, str]) -> str:
    return f"{comparison[0]} versus {comparison[1]} on {comparison[2]}"


def _rounded(value: float) -> str:
    """A computed number to three significant digits: the precision of the estimates it comes from."""
    return format_number(float(f"{value:.3g}"))


def pooled_text(result: pooling.Pooled) -> str:
    """ "ozone versus low ozone on heart failure: pooled hazard ratio 1.25 (95% CI 1.12 to 1.38), 2 studies, ..."."""
    text = (
        f"{_comparison_words(result.comparison)}: pooled {result.measure} {_rounded(result.estimate)} "
        f"(95% CI {_rounded(result.ci_low)} to {_rounded(result.ci_high)}), {_studies(len(result.studies))}, "
        f"random effects ({result.method}); I² {result.i2:.0%}, τ² {_rounded(result.tau2)}"
    )
    if result.prediction_low is not None and result.prediction_high is not None:
        text += f"; 95% prediction interval {_rounded(result.prediction_low)} to {_rounded(result.prediction_high)}"
    return text + "."


def side_by_side(
    results: Sequence[pooling.NotPooled],
) -> dict[tuple[str, str, str], tuple[list[pooling.StudyEffect], str]]:
    """The comparisons whose studies could not be pooled together (different measures, no standard error), with
    their studies and the reason; a comparison of one study is no such thing: its line says all."""
    shown: dict[tuple[str, str, str], tuple[list[pooling.StudyEffect], str]] = {}
    for result in results:
        studies, _ = shown.setdefault(result.comparison, ([], result.reason))
        studies += result.studies
    return {comparison: found for comparison, found in shown.items() if len(found[0]) > 1}


def side_by_side_text(comparison: tuple[str, str, str], studies: Sequence[pooling.StudyEffect], reason: str) -> str:
    shown = "; ".join(
        f"{study.label}: {describe_estimate(study.measure, study.estimate, study.ci_low, study.ci_high)}"
        for study in studies
    )
    return f"{_comparison_words(comparison)}, not pooled ({reason}): {shown}."


def synthesize(question: EffectQuestion, lines: Sequence[Line], over: str = "") -> Synthesis:
    """The table's groups and the verdict, both from ``lines``: the one place either is computed; ``over`` names
    the works the lines were drawn from."""
    groups = tuple(
        Group(key, members)
        for key in _order(question)
        if (members := tuple(line for line in lines if line.group == key))
    )
    return Synthesis(question, groups, _verdict(question, groups, over))


def study_lines(
    rows: pd.DataFrame, library: Library, chunks: Mapping[str, Sequence[ChunkRow]]
) -> tuple[list[Line], pd.DataFrame]:
    """One line per study per comparison of ``rows`` (:func:`~hysem_assets.qa.finding_matches.matching_findings`
    rows about the question's outcome) whose work can be cited, and the findings rows the lines show."""
    ranked = rows.assign(
        _estimated=rows["estimate"].notna(), _confidence=rows["confidence"].astype("Float64").fillna(-1.0)
    ).sort_values(["_estimated", "_confidence", "finding_id"], ascending=[False, False, True], kind="stable")
    chosen: dict[tuple[str, ...], tuple[dict[str, Any], list[str]]] = {}
    for row in ranked.drop(columns=["_estimated", "_confidence"]).to_dict("records"):
        sides = ("comparator", "intervention") if row["reversed"] else ("intervention", "comparator")
        key = (str(row["cluster_id"]), *(_text(row[f"{side}_term"]) for side in sides), _text(row["outcome_term"]))
        if key in chosen:
            chosen[key][1].append(str(row["finding_id"]))
        else:
            chosen[key] = (row, [])
    lines, shown = [], []
    for row, also in chosen.values():
        cluster = str(row["cluster_id"])
        citation = evidence_citation(cluster, _text(row["evidence"]), library, chunks.get(cluster, ()))
        if citation is None:
            continue
        own, other = ("comparator", "intervention") if row["reversed"] else ("intervention", "comparator")
        sides = {"intervention": own, "comparator": other, "outcome": "outcome"}
        direction = str(row["direction"])
        lines.append(
            Line(
                cluster_id=cluster,
                finding_id=str(row["finding_id"]),
                direction=_TURNED.get(direction, direction) if row["reversed"] else direction,
                study_kind=_text(row["study_kind"]) or "primary",
                spans={
                    role: _text(row[side]) or _text(row[f"{side}_term"]) or "not stated" for role, side in sides.items()
                },
                terms={role: _text(row[f"{side}_term"]) for role, side in sides.items()},
                evidence=_text(row["evidence"]),
                source="abstract" if row["source"] == ABSTRACT else "full text",
                section=clean(row["section"]),
                estimate=describe_estimate(
                    row["measure"], row["estimate"], row["ci_low"], row["ci_high"], row["p_value"]
                ),
                citation=citation,
                matched={role: str(row[f"{role}_match"]) for role in ROLES if clean(row[f"{role}_match"]) is not None},
                reversed=bool(row["reversed"]),
                confidence=clean(row["confidence"]),
                also=tuple(also),
            )  # fmt: skip
        )
        shown.append(row)
    return lines, pd.DataFrame(shown, columns=rows.columns)


def pooled_results(
    lines: Sequence[Line], shown: pd.DataFrame, folder: Path
) -> tuple[list[pooling.Pooled], list[pooling.NotPooled], list[dict[str, str]]]:
    """Random-effects syntheses of the primary ``lines`` (their findings rows ``shown``), a forest plot written
    under ``folder`` for each pooled one, and the comparisons that could not be pooled."""
    primary = {line.finding_id for line in lines if line.group != REVIEWS}
    labels = {line.cluster_id: cite(line.citation.as_dict()) for line in lines}
    found = pooling.syntheses(shown[shown["finding_id"].astype(str).isin(primary)], labels)
    pooled = [result for result in found if isinstance(result, pooling.Pooled)]
    plots = [forest_chart(*forest.forest_plot(result), folder) for result in pooled]
    return pooled, [result for result in found if isinstance(result, pooling.NotPooled)], plots


def answer_synthesis(
    question: EffectQuestion,
    findings: pd.DataFrame,
    matchers: Mapping[str, QuestionMatcher],
    library: Library,
    chunks: Mapping[str, Sequence[ChunkRow]],
    charts: Path,
    *,
    include_retracted: bool = False,
    over: str = "",
) -> Synthesis:
    """The synthesis of ``findings`` (the partition's table, or the works counted ``over``, named so: "34
    included studies") for ``question``: retracted works left out unless ``include_retracted``; forest plots
    written under ``charts``."""
    rows = matching_findings(findings, question, matchers)
    reported = rows[rows["outcome_match"].notna()]
    retracted = sorted({c for c in reported["cluster_id"].astype(str) if c in library and library[c].retracted})
    if retracted and not include_retracted:
        reported = reported[~reported["cluster_id"].astype(str).isin(retracted)]
    lines, shown = study_lines(reported, library, chunks)
    synthesis = synthesize(question, lines, over)
    pooled, not_pooled, plots = pooled_results(lines, shown, charts) if lines else ([], [], [])
    others = rows[rows["outcome_match"].isna()]
    return replace(
        synthesis,
        other_outcomes=sorted(
            {_text(t) or _text(o) for t, o in zip(others["outcome_term"], others["outcome"], strict=True)} - {""}
        ),  # fmt: skip
        pooled=pooled,
        not_pooled=not_pooled,
        forest_plots=plots,
        retracted=retracted,
        uncited=sorted(set(reported["cluster_id"].astype(str)) - {line.cluster_id for line in lines}),
    )
