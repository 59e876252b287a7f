from __future__ import annotations

import pandas as pd

from hysem_assets.review.diagram import draw_flow
from hysem_assets.review.evidence import evidence_table
from hysem_assets.review.flow import FlowInputs, prisma_counts, reconcile, screening_out_of_step
from hysem_assets.screening.outcome import NOTICE_REASONS, included_ids

from . import tables


def flow() -> pd.DataFrame:
    inputs = FlowInputs(tables.raw(), tables.corpus(), tables.screening(), tables.pdfs(), tables.parsed(), SEARCHED)
    return prisma_counts(inputs)


#: What the query searched: a source it did not search has no box, one that found nothing has 0.
SEARCHED = ("pubmed", "openalex", "scopus")


def test_every_box_counts_its_records():
    counts = dict(zip(flow()["box"], flow()["count"]))
    assert counts == {
        "identified": 9, "identified:pubmed": 4, "identified:openalex": 3, "identified:scopus": 2,
        "identified_other": 0,
        "duplicates_removed": 3, "automation_excluded": 0, "screened": 6, "screened:ranking": 6,
        "excluded": 1, "excluded:retracted": 1,
        "sought": 5, "not_retrieved": 2, "not_retrieved:http_error": 1, "not_retrieved:no_oa_location": 1,
        "assessed": 3, "not_parsed": 1, "not_parsed:no text layer": 1, "fulltext_excluded": 0,
        "included": 5, "included:full text": 2, "included:abstract only": 3, "included_reports": 2,
    }  # fmt: skip
    assert reconcile(flow()) == []
    assert included_ids(tables.screening()) == ["w1", "w2", "w3", "w4", "w5"]


def test_imported_exports_count_among_databases_and_chased_records_as_other_methods():
    """An export imported as Embase is a database of its own; records found by citation searching are
    identified via other methods, and the flow adds both before duplicates are removed."""
    raw = tables.raw()
    raw["imported"] = pd.DataFrame({"source": ["embase", "embase", "cinahl"], "source_id": ["e1", "e2", "c1"]})
    raw["citations"] = pd.DataFrame({"source": ["citations"] * 2, "source_id": ["W1", "W2"]})
    records = {**tables.RECORDS, "w1": [*tables.RECORDS["w1"], "embase:e1", "embase:e2", "cinahl:c1"]}
    records["w2"] = [*records["w2"], "citations:W1", "citations:W2"]
    corpus = tables.corpus().assign(record_ids=[records[w] for w in tables.WORKS])
    table = prisma_counts(FlowInputs(raw, corpus, tables.screening(), tables.pdfs(), tables.parsed(), SEARCHED))
    counts = dict(zip(table["box"], table["count"]))
    assert counts["identified"] == 9 + 3 and counts["identified:embase"] == 2 and counts["identified:cinahl"] == 1
    assert counts["identified_other"] == counts["identified_other:citations"] == 2
    assert counts["duplicates_removed"] == 3 + 5
    labels = dict(zip(table["box"], table["label"]))
    assert labels["identified_other:citations"] == "Citation searching" and labels["identified:embase"] == "embase"
    assert reconcile(table) == []
    assert "Records identified via other methods (n = 2)" in draw_flow(table).svg


def test_a_report_excluded_at_full_text_leaves_the_included_studies_with_its_reason():
    """w1's full text is assessed and excluded: PRISMA's "reports excluded, with reasons" counts it, and the
    studies included are the screening table's included set, which no longer holds it."""
    screening = tables.screening(fulltext={"w1": ("excluded", "wrong comparator")})
    inputs = FlowInputs(tables.raw(), tables.corpus(), screening, tables.pdfs(), tables.parsed())
    counts = dict(zip(prisma_counts(inputs)["box"], prisma_counts(inputs)["count"]))
    assert counts["fulltext_excluded"] == counts["fulltext_excluded:wrong comparator"] == 1
    assert counts["included"] == len(included_ids(screening)) == 4 and counts["included_reports"] == 1
    assert reconcile(prisma_counts(inputs)) == []
    assert "Reports excluded (n = 1)" in draw_flow(prisma_counts(inputs)).svg


def test_a_tampered_table_does_not_reconcile():
    tampered = flow()
    tampered.loc[tampered["box"] == "screened", "count"] = 7
    problems = reconcile(tampered)
    assert (
        "identified (9) + identified_other (0) - duplicates_removed (3) - automation_excluded (0) = 6, but screened is 7"
        in problems
    )
    assert any(p.startswith("screened (7) - excluded (1) = 6, but sought is 5") for p in problems)
    reasons = flow()
    reasons.loc[reasons["box"] == "not_retrieved:http_error", "count"] = 3
    assert reconcile(reasons) == ["the reasons of not_retrieved add up to 4, but not_retrieved is 2"]
    assert reconcile(flow()[flow()["box"] != "included"]) == ["boxes missing: included"]


def test_tables_out_of_step_do_not_reconcile():
    lost = tables.corpus().iloc[1:]  # w1 (three records) lost between the raw tables and the corpus
    stale = prisma_counts(FlowInputs(tables.raw(), lost, tables.screening(), tables.pdfs(), tables.parsed()))
    assert (
        reconcile(stale)[0]
        == "identified (9) + identified_other (0) - duplicates_removed (1) - automation_excluded (0) = 8, but screened is 5"
    )
    unparsed = prisma_counts(
        FlowInputs(tables.raw(), tables.corpus(), tables.screening(), tables.pdfs(), tables.parsed().iloc[1:])
    )
    assert dict(zip(unparsed["box"], unparsed["count"]))["not_parsed:not parsed"] == 1 and reconcile(unparsed) == []


def test_screening_decisions_fill_the_screening_boxes():
    """w3 excluded by a reviewer, w4 and w6 included (w6 is retracted), w5 held back by its rank:
    only w1, w2, w4 and w6 reach pdfs."""
    decisions = {"w3": ("excluded", "wrong outcome"), "w4": ("included", None), "w6": ("included", None)}
    screening = tables.screening(decisions, ranked_out={"w5"})
    pdfs = tables.pdfs()[tables.pdfs()["cluster_id"].isin(screening.loc[screening["proceeds"], "cluster_id"])]
    flow = prisma_counts(FlowInputs(tables.raw(), tables.corpus(), screening, pdfs, tables.parsed()))
    counts = dict(zip(flow["box"], flow["count"]))
    assert {box: count for box, count in counts.items() if box.split(":")[0] in ("automation_excluded", "screened", "excluded", "sought")} == {
        "automation_excluded": 1, "automation_excluded:ranked out": 1,
        "screened": 5, "screened:reviewer": 3, "screened:ranking": 2,
        "excluded": 2, "excluded:wrong outcome": 1, "excluded:retracted": 1,
        "sought": 3,
    }  # fmt: skip
    assert reconcile(flow) == [] and counts["included"] == 3 and counts["included_reports"] == 2
    assert included_ids(screening) == ["w1", "w2", "w4"]
    assert screening_out_of_step(screening, pdfs) is None
    stale = screening_out_of_step(screening, tables.pdfs())  # pdfs made before w3 was excluded and w5 ranked out
    assert stale.startswith("pdfs is older than screening: it holds 2 work(s)")
    labels = dict(zip(flow["box"], flow["label"]))
    assert labels["automation_excluded"] == "Marked ineligible by automation tools"
    assert labels["excluded:wrong outcome"] == "wrong outcome"
    assert "Marked ineligible by automation tools (n = 1)" in draw_flow(flow).svg


def test_the_diagram_renders_every_box_as_text():
    diagram = draw_flow(flow(), title="PRISMA 2020 flow: test")
    assert diagram.png.startswith(b"\x89PNG") and len(diagram.png) > 10_000
    for text in (
        "Records identified from databases (n = 9)",
        "PubMed (n = 4)",
        "Records screened (n = 6)",
        "no open-access copy (n = 1)",
        "Studies included in review (n = 5)",
        "abstract only (n = 3)",
        "Reports of included studies (n = 2)",
    ):
        assert text in diagram.svg, text


def test_a_query_that_matched_nothing_has_a_flow_of_zeros_and_no_studies():
    corpus, pdfs, parsed = tables.corpus().iloc[:0], tables.pdfs().iloc[:0], tables.parsed().iloc[:0]
    raw = {source: frame.iloc[:0] for source, frame in tables.raw().items()}
    empty = prisma_counts(FlowInputs(raw, corpus, tables.screening().iloc[:0], pdfs, parsed))
    assert reconcile(empty) == [] and (empty["count"] == 0).all()
    assert {"identified", "screened", "sought", "included"} <= set(empty["box"])
    assert empty.dtypes.to_dict() == flow().dtypes.to_dict()
    assert "Studies included in review (n = 0)" in draw_flow(empty, title="nothing").svg
    library, extracted, topics = tables.library(), tables.extracted(), tables.topics()
    none = evidence_table(included_ids(tables.screening().iloc[:0]), corpus, library[:0], extracted[:0], topics[:0])
    filled = evidence_table(["w1", "w2"], tables.corpus(), library, extracted, topics)
    assert len(none) == 0 and none.dtypes.to_dict() == filled.dtypes.to_dict()


def test_an_erratum_is_no_study_its_paper_is_counted_once():
    corpus = tables.corpus()
    corpus.loc[corpus["cluster_id"] == "w2", "title"] = "Erratum: Study w1"  # w2 corrects w1
    screening = tables.screening(works=corpus)
    inputs = FlowInputs(tables.raw(), corpus, screening, tables.pdfs(), tables.parsed())
    counts = dict(zip(prisma_counts(inputs)["box"], prisma_counts(inputs)["count"]))
    erratum = NOTICE_REASONS["erratum"]
    assert counts["excluded"] == 2 and counts[f"excluded:{erratum}"] == 1 and counts["excluded:retracted"] == 1
    assert included_ids(screening) == ["w1", "w3", "w4", "w5"]
    assert counts["included"] == 4 and reconcile(prisma_counts(inputs)) == []
