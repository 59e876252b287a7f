"""A work's findings: comparisons from its abstract, judged in abstract and full text, the full text's preferred."""

import pandas as pd

from hysem_assets.extraction.findings import (
    WorkText,
    comparisons,
    findings_table,
    stated_estimate,
    study_kind,
    work_findings,
)
from hysem_assets.findings import classifier
from hysem_assets.findings.candidates import sentences
from hysem_assets.findings.schema import ABSTRACT, COLUMNS, DECREASED, FULLTEXT, NO_DIFFERENCE
from hysem_assets.pico import tagger as pico_tagger

TITLE = "Ginger for nausea in early pregnancy: a randomised placebo-controlled trial"
ABSTRACT_TEXT = (
    "We randomly assigned 120 pregnant women with nausea to ginger capsules or placebo for four days. "
    "The primary outcome was the nausea score; the secondary outcome was the number of vomiting episodes. "
    "The nausea score was significantly lower with ginger than with placebo (p < 0.001). "
    "The number of vomiting episodes did not differ significantly between the groups."
)
FULL_TEXT = """# Ginger for nausea in early pregnancy

## Methods

Women were randomly assigned to ginger capsules or placebo.

## Results

The nausea score was significantly lower with ginger than with placebo (mean difference -1.9, 95% CI -2.8 to -1.0).
Vomiting episodes did not differ significantly between ginger and placebo (rate ratio 0.91, 95% CI 0.70 to 1.18).
"""


def row(cluster_id: str, source: str, outcome: str = "nausea score", **values) -> dict:
    return {
        "cluster_id": cluster_id,
        "intervention": "Ginger",
        "comparator": "placebo",
        "outcome": outcome,
        "direction": DECREASED,
        "confidence": 0.9,
        "evidence": "text",
        "source": source,
        "study_kind": "primary",
        **values,
    }


def test_the_full_texts_finding_is_preferred_and_both_are_kept():
    table = findings_table(
        [row("w1", ABSTRACT), row("w1", FULLTEXT), row("w2", ABSTRACT), row("w1", ABSTRACT, "vomiting")],
        {"ginger": "zingiber officinale"},
    )
    assert list(table.columns) == list(COLUMNS)
    assert table["preferred"].tolist() == [False, True, True, True]
    assert table["intervention_term"].tolist() == ["zingiber officinale"] * 4
    assert table["outcome_term"].tolist() == ["nausea score"] * 3 + ["vomiting"]
    assert table["finding_id"].is_unique


def test_an_empty_table_has_the_schemas_columns_and_types():
    table = findings_table([], {})
    assert table.empty and dict(table.dtypes.astype(str)) == {k: v for k, v in COLUMNS.items()}


def test_a_meta_analysis_is_a_review_by_title_or_stated_type():
    assert study_kind("Statins and dementia: a systematic review and meta-analysis", ()) == "review"
    assert study_kind("Statins and dementia", ("Journal Article", "Meta-Analysis")) == "review"
    assert study_kind("Statins and dementia in a cohort of 5,000 adults", ("Journal Article",)) == "primary"


def test_the_estimate_comes_from_the_evidence_sentence_or_the_next():
    article = sentences(FULL_TEXT)
    evidence = next(s for s in article if s.text.startswith("Vomiting"))
    assert stated_estimate(article, evidence) == {
        "measure": "rate ratio",
        "estimate": 0.91,
        "ci_low": 0.7,
        "ci_high": 1.18,
        "p_value": None,
    }
    first = next(s for s in article if s.text.startswith("Women"))
    assert stated_estimate(article, first) == {}  # neither it nor the next states one


def test_comparisons_pair_each_intervention_with_the_comparator_on_each_outcome():
    asked = comparisons(pico_tagger.load(), f"{TITLE}\n\n{ABSTRACT_TEXT}")
    assert asked
    assert {c.comparator for c in asked} == {"placebo"}
    assert any("ginger" in c.intervention.lower() for c in asked)
    assert any("nausea" in c.outcome.lower() for c in asked)


def test_a_work_without_a_comparison_has_no_finding():
    work = WorkText("w1", "Editorial: why we review", "We reflect on a decade of reviews.", "")
    assert work_findings(work, pico_tagger.load(), classifier.load()) == []


def test_a_trial_reports_its_findings_from_abstract_and_full_text():
    work = WorkText("w1", TITLE, ABSTRACT_TEXT, FULL_TEXT)
    rows = pd.DataFrame(work_findings(work, pico_tagger.load(), classifier.load()))
    nausea = rows[rows["outcome"].str.casefold() == "nausea score"]
    assert set(nausea["source"]) == {ABSTRACT, FULLTEXT}
    assert set(nausea["direction"]) == {DECREASED}
    vomiting = rows[rows["outcome"].str.contains("vomiting episodes", case=False)]
    assert set(vomiting["direction"]) == {NO_DIFFERENCE}
    full = rows[(rows["source"] == FULLTEXT) & rows["outcome"].str.contains("vomiting", case=False)].iloc[0]
    assert full["measure"] == "rate ratio" and full["section"] == "Results"
    assert FULL_TEXT[full["start"] : full["end"]].startswith("Vomiting")


def test_cached_rows_take_the_works_cluster_id_of_this_run_and_keep_their_ids(tmp_path):
    from hysem_assets.extraction.findings import cached_findings, work_rows
    from hysem_assets.stores.work_cache import WorkCache

    cache, tagger, model = WorkCache("findings", tmp_path), pico_tagger.load(), classifier.load()
    before = [WorkText("c-1", TITLE, ABSTRACT_TEXT, FULL_TEXT, work="10.1/ginger")]
    first = findings_table(work_rows(before, cached_findings(cache, "q", before, ["10.1/ginger"], tagger, model)), {})
    after = [WorkText("c-2", TITLE, ABSTRACT_TEXT, FULL_TEXT, work="10.1/ginger")]  # records joined the work
    run = cached_findings(cache, "q", after, ["10.1/ginger"], tagger, model)
    assert run.reused == [True]
    second = findings_table(work_rows(after, run), {})
    assert not first.empty and set(second["cluster_id"]) == {"c-2"}
    assert second["finding_id"].tolist() == first["finding_id"].tolist()  # the same findings, by the work's DOI
