"""The synthesis route: effect questions parsed, findings rows matched, a table grouped by direction with a
verdict counted from it, reviews apart, pooled estimates with forest plots, and what it says without findings."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.findings.schema import COLUMNS, DECREASED, INCREASED, NO_DIFFERENCE
from hysem_assets.qa.answer import QAEngine, answer_question
from hysem_assets.qa.effect_questions import effect_question
from hysem_assets.qa.finding_matches import THROUGH_CANONICAL, matching_findings
from hysem_assets.qa.sources import library_records
from hysem_assets.qa.synthesis import FOUND, REVIEWS, answer_synthesis, synthesize
from hysem_assets_tests.qa.corpus import TEXTS


def finding(
    cluster_id: str,
    finding_id: str,
    sides: tuple[str, str, str],
    terms: tuple[str, str, str],
    direction: str,
    evidence: str,
    *,
    source: str = "fulltext",
    measure: str | None = None,
    estimate: tuple[float, float, float] | None = None,
    p_value: float | None = None,
    kind: str = "primary",
    preferred: bool = True,
    confidence: float = 0.9,
) -> dict:
    """One findings row in the schema's columns."""
    low_high = estimate or (None, None, None)
    return {
        "cluster_id": cluster_id, "finding_id": finding_id,
        **dict(zip(("intervention", "comparator", "outcome"), sides, strict=True)),
        **dict(zip(("intervention_term", "comparator_term", "outcome_term"), terms, strict=True)),
        "direction": direction, "confidence": confidence, "evidence": evidence, "source": source,
        "section": "Results" if source == "fulltext" else "Abstract", "start": 0, "end": len(evidence),
        "preferred": preferred, "measure": measure, "estimate": low_high[0], "ci_low": low_high[1],
        "ci_high": low_high[2], "p_value": p_value, "study_kind": kind,
    }  # fmt: skip


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)


OZONE = ("ozone", "low ozone")
#: c-1 and c-2 report a hazard ratio for ozone on heart failure (c-1 only through its canonical term), c-3 no
#: difference (its comparator is ozone), c-4 is a review; c-5 is about NO2, c-6 about stroke; c-2's abstract row
#: and a second sentence of its comparison are not shown.
FINDINGS = [
    finding("c-1", "f1", ("ozone", "low ozone", "cardiac events"), (*OZONE, "heart failure"), INCREASED,
            TEXTS["c-1"][1], source="abstract", measure="hazard ratio", estimate=(1.2, 1.05, 1.4)),
    finding("c-2", "f2", ("short-term ozone peaks", "lower ozone", "heart failure hospitalisations"),
            (*OZONE, "heart failure"), INCREASED, TEXTS["c-2"][0], measure="hazard ratio", estimate=(1.3, 1.1, 1.5)),
    finding("c-2", "f2b", ("ozone", "lower ozone", "heart failure"), (*OZONE, "heart failure"), INCREASED,
            TEXTS["c-2"][1], confidence=0.6),
    finding("c-2", "f2a", ("ozone", "lower ozone", "heart failure"), (*OZONE, "heart failure"), INCREASED,
            TEXTS["c-2"][0], source="abstract", preferred=False),
    finding("c-3", "f3", ("clean air", "high ozone", "heart failure events"), ("clean air", "ozone", "heart failure"),
            NO_DIFFERENCE, TEXTS["c-3"][0], p_value=0.41),
    finding("c-4", "f4", ("ozone", "low ozone", "heart failure"), (*OZONE, "heart failure"), INCREASED,
            TEXTS["c-4"][1], kind=REVIEWS),
    finding("c-5", "f5", ("nitrogen dioxide", "low NO2", "heart failure"), ("NO2", "low NO2", "heart failure"),
            INCREASED, TEXTS["c-5"][0]),
    finding("c-6", "f6", ("ozone exposure", "low ozone", "stroke incidence"), (*OZONE, "stroke"), NO_DIFFERENCE,
            TEXTS["c-6"][0]),
]  # fmt: skip


@pytest.mark.parametrize(
    "question, intervention, comparator, outcome, direction",
    [
        ("Do statins reduce the risk of dementia?", "statins", None, "dementia", DECREASED),
        ("What is the effect of statins on dementia risk?", "statins", None, "dementia", None),
        ("Does exercise work better than medication for depression?", "exercise", "medication", "depression", None),
        ("In adults with type 2 diabetes, does metformin compared with sulfonylureas reduce cardiovascular "
         "mortality?", "metformin", "sulfonylureas", "cardiovascular mortality", DECREASED),
        ("Are oral antibiotics as effective in treating infection as intravenous antibiotics?", "oral antibiotics",
         "intravenous antibiotics", "infection", None),
        ("In older adults, how does vitamin D affect falls when compared to placebo?", "vitamin D", "placebo",
         "falls", None),
        ("Is aspirin more effective than placebo in reducing stroke?", "aspirin", "placebo", "stroke", DECREASED),
        ("Is obesity a risk factor for knee osteoarthritis?", "obesity", None, "knee osteoarthritis", INCREASED),
        ("Does long-term exposure to PM2.5 increase mortality?", "PM2.5", None, "mortality", INCREASED),
        ("Do statins slow cognitive decline in older adults?", "statins", None, "cognitive decline", DECREASED),
        ("Atorvastatin versus placebo for the prevention of stroke", "Atorvastatin", "placebo", "stroke", DECREASED),
        ("Which is more effective for knee pain: acupuncture or physiotherapy?", "acupuncture", "physiotherapy",
         "knee pain", None),
    ],
)  # fmt: skip
def test_an_effect_question_names_its_intervention_comparator_outcome_and_direction(
    question, intervention, comparator, outcome, direction
):
    asked = effect_question(question)
    assert (asked.intervention, asked.comparator, asked.outcome, asked.direction) == (
        intervention, comparator, outcome, direction)  # fmt: skip


@pytest.mark.parametrize(
    "question",
    [
        "Has the use of deep learning increased in recent years?",
        "How does blood pressure above 140 mmHg change with exposure?",
        "What mechanism explains the effect of statins on inflammation?",
        "Which studies compared statins versus placebo?",
        "Summarize the literature on statins and dementia.",
    ],
)
def test_other_questions_are_no_effect_questions(question):
    assert effect_question(question) is None


def ask(engine: QAEngine, question: str) -> tuple[dict, dict]:
    answer = asyncio.run(answer_question(question, engine)).answer
    return answer, json.loads(answer["json"])


@pytest.fixture
def engine(partition, embedder) -> QAEngine:
    return replace(partition.engine(embedder), findings=table(FINDINGS))


def test_a_term_meets_a_row_in_the_studys_words_or_only_through_its_canonical_term():
    rows = matching_findings(table(FINDINGS), effect_question("Does ozone increase the risk of heart failure?"), {})
    matched = rows.set_index("finding_id")
    assert set(matched.index) == {"f1", "f2", "f2b", "f3", "f4", "f6"}  # not the abstract row f2a, not NO2's f5
    assert matched.loc["f1", "outcome_match"] == THROUGH_CANONICAL and matched.loc["f2", "outcome_match"] == "text"
    assert matched.loc["f3", "reversed"] and not matched.loc["f2", "reversed"]
    assert pd.isna(matched.loc["f6", "outcome_match"])  # stroke: named, never tabulated


def statin_findings() -> tuple[pd.DataFrame, dict]:
    """A placebo-controlled trial written placebo first, a cohort written non-users first, a cohort written users
    first, and a meta-analysis."""
    rows = [
        finding("s-1", "g1", ("placebo", "atorvastatin", "dementia"), ("placebo", "statin", "dementia"), INCREASED,
                "Dementia was more frequent with placebo than with atorvastatin."),
        finding("s-2", "g2", ("no statin use", "statin use", "incident dementia"), ("no statin", "statin", "dementia"),
                INCREASED, "Non-use of statins was associated with more incident dementia."),
        finding("s-3", "g3", ("statin use", "no statin use", "dementia"), ("statin", "no statin", "dementia"),
                NO_DIFFERENCE, "Statin use was not associated with dementia."),
        finding("s-3", "g4", ("statin use", "no statin use", "cognitive decline"),
                ("statin", "no statin", "cognitive decline"), DECREASED, "Statin users declined more slowly."),
        finding("s-4", "g5", ("statins", "no statins", "dementia"), ("statin", "no statin", "dementia"), DECREASED,
                "Pooled, statins lowered the risk of dementia.", kind=REVIEWS),
    ]  # fmt: skip
    library = library_records(
        pd.DataFrame({"cluster_id": [f"s-{n}" for n in range(1, 5)], "doi": None, "zotero_key": None,
                      "in_text_citation": [f"(Trial {n})" for n in range(1, 5)], "full_citation": "A study."})
    )  # fmt: skip
    return table(rows), library


def test_a_study_written_the_other_way_round_counts_with_its_direction_turned(tmp_path):
    findings, library = statin_findings()
    found = answer_synthesis(
        effect_question("Do statins reduce the risk of dementia?"), findings, {}, library, {}, tmp_path
    )
    lines = {line.finding_id: line for line in found.lines}
    assert lines["g1"].reversed and lines["g1"].direction == DECREASED
    assert lines["g1"].spans["intervention"] == "atorvastatin"
    assert lines["g2"].reversed and lines["g2"].direction == DECREASED  # "no statin use" is not statins
    assert not lines["g3"].reversed and lines["g3"].direction == NO_DIFFERENCE
    assert found.counts() == {DECREASED: 2, NO_DIFFERENCE: 1, REVIEWS: 1}
    assert found.other_outcomes == ["cognitive decline"]


VERDICT_COUNT = re.compile(r"(?P<count>\d+|none|no study)(?: stud(?:y|ies))?(?: found)? (?P<found>{})")


def verdict_counts(verdict: str) -> dict[str, int]:
    """The number of studies the verdict gives each direction, read back from its words."""
    counts = {}
    for direction, said in FOUND.items():
        match = re.search(VERDICT_COUNT.pattern.format(re.escape(said)), verdict)
        counts[direction] = 0 if match["count"] in ("none", "no study") else int(match["count"])
    return counts


def test_the_verdicts_counts_are_the_studies_of_the_tables_groups(engine):
    answer, details = ask(engine, "Does ozone increase the risk of heart failure?")
    found = details["synthesis"]
    assert (answer["route"], answer["route_chain"], answer["router"]) == ("synthesis", "synthesis", "rules")
    tabled = {group["group"]: {line["cluster_id"] for line in group["lines"]} for group in found["groups"]}
    assert verdict_counts(found["verdict"]) == {d: len(tabled.get(d, ())) for d in FOUND}
    assert verdict_counts(found["verdict"]) == {INCREASED: 2, DECREASED: 0, NO_DIFFERENCE: 1}
    assert found["verdict"].startswith(
        "Of 3 studies reporting ozone on heart failure (of 6 included studies), 2 studies found a significant"
    )  # the partition's six works are all included
    for group in found["groups"]:  # each table says how many studies it holds, as the verdict counts them
        assert f"**{group['label']}** ({len(tabled[group['group']])} stud" in answer["markdown"]
    assert found["verdict"] in answer["markdown"] and answer["unresolved_citations"] == 0


def test_reviews_are_shown_apart_and_never_counted(engine):
    _, details = ask(engine, "Does ozone increase the risk of heart failure?")
    found = details["synthesis"]
    reviews = [group for group in found["groups"] if group["group"] == REVIEWS]
    assert [line["cluster_id"] for group in reviews for line in group["lines"]] == ["c-4"]
    counted = {line["cluster_id"] for g in found["groups"] if g["group"] != REVIEWS for line in g["lines"]}
    assert "c-4" not in counted and "1 meta-analysis or review is shown apart and not counted" in found["verdict"]


def test_one_line_per_study_per_comparison_marked_when_only_the_canonical_term_matches(engine):
    answer, details = ask(engine, "Does ozone increase the risk of heart failure?")
    lines = [line for group in details["synthesis"]["groups"] for line in group["lines"]]
    assert [line["finding_id"] for line in lines if line["cluster_id"] == "c-2"] == ["f2"]  # the one with an estimate
    assert next(line for line in lines if line["cluster_id"] == "c-2")["also"] == ["f2b"]
    marked = next(line for line in lines if line["cluster_id"] == "c-1")
    assert marked["through_canonical_term"] == ["outcome"]
    assert "cardiac events [canonical term: heart failure]" in answer["markdown"]
    assert TEXTS["c-1"][1] in answer["markdown"]  # the evidence sentence, verbatim
    assert "hazard ratio 1.2 (95% CI 1.05 to 1.4)" in answer["markdown"]


def test_two_studies_of_one_measure_are_pooled_and_drawn_as_a_forest_plot(engine):
    answer, details = ask(engine, "Does ozone increase the risk of heart failure?")
    (pooled,) = details["synthesis"]["pooled"]
    assert (pooled["measure"], pooled["k"]) == ("hazard ratio", 2)
    assert {study["cluster_id"] for study in pooled["studies"]} == {"c-1", "c-2"}
    assert pooled["ci_low"] < pooled["estimate"] < pooled["ci_high"]
    (plot,) = details["synthesis"]["forest_plots"]
    assert Path(plot["svg"]).read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))
    assert Path(plot["png"]).read_bytes().startswith(b"\x89PNG")
    assert answer["chart"] == plot["svg"] and f"Forest plot: {plot['svg']}" in answer["markdown"]


def test_measures_that_cannot_be_pooled_are_shown_side_by_side_with_the_reason(partition, embedder):
    rows = [{**row, "measure": "odds ratio"} if row["finding_id"] == "f1" else row for row in FINDINGS]
    answer, details = ask(
        replace(partition.engine(embedder), findings=table(rows)), "Does ozone increase the risk of heart failure?"
    )
    assert details["synthesis"]["pooled"] == [] and answer["chart"] is None
    assert (
        "ozone versus low ozone on heart failure, not pooled (different measures: hazard ratio, odds ratio): "
        "(Doe et al., 2017): hazard ratio 1.3 (95% CI 1.1 to 1.5); (Doe et al., 2016): odds ratio 1.2 (95% CI 1.05 to 1.4)."
    ) in answer["markdown"]


def test_an_outcome_no_finding_is_on_is_said_and_passages_answer_with_no_table(engine):
    answer, details = ask(engine, "Does ozone increase the risk of dementia?")
    assert answer["route_chain"] == "synthesis->local" and details["routing"]["attempts"][0]["outcome"] == "refused"
    assert details["synthesis"]["groups"] == []
    assert (
        "No finding of the included studies is on dementia for ozone. The findings about ozone are on: heart failure; "
        "stroke."
    ) in answer["markdown"]


def test_without_findings_the_answer_names_the_command_that_computes_them(partition, embedder):
    answer, details = ask(partition.engine(embedder), "Does ozone increase the risk of heart failure?")
    assert answer["route_chain"] == "synthesis->local" and details["routing"]["attempts"][0]["outcome"] == "refused"
    assert "Findings have not been computed for 'ozone-heart'" in answer["markdown"]
    assert "`hysem materialize --query ozone-heart --select findings`" in answer["markdown"]


def test_a_study_whose_comparisons_went_different_ways_counts_in_each_group(tmp_path):
    findings, library = statin_findings()
    vascular = finding("s-3", "g6", ("statin use", "no statin use", "vascular dementia"),
                       ("statin", "no statin", "vascular dementia"), DECREASED, "Statin users had less vascular dementia.")  # fmt: skip
    rows = pd.concat([findings, table([vascular])], ignore_index=True)
    found = answer_synthesis(effect_question("Do statins reduce dementia?"), rows, {}, library, {}, tmp_path)
    again = synthesize(found.question, found.lines)
    assert again.verdict == found.verdict and again.counts() == found.counts()
    assert verdict_counts(found.verdict) == {DECREASED: 3, NO_DIFFERENCE: 1, INCREASED: 0}
    assert found.verdict.startswith(
        "Of 3 studies reporting statins on dementia, 3 studies found a significant decrease"
    )
    assert "1 study reported comparisons that went different ways" in found.verdict


def test_a_drug_class_meets_its_members_by_their_name_stem_marked_as_not_the_studys_words():
    from hysem_assets.qa.finding_matches import THROUGH_CANONICAL, AskedTerm

    statins = AskedTerm("statins", {})
    assert statins.how("atorvastatin 40 mg daily", "atorvastatin") == THROUGH_CANONICAL
    assert statins.how("nystatin", "nystatin") is None  # an antifungal: its name does not end in -vastatin
    assert statins.how("pravastatin", "pravastatin") == THROUGH_CANONICAL
