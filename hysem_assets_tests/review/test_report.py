"""The review report as a reader gets it: one self-contained file, opened in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from hysem_assets.qa.charts import ranking_chart
from hysem_assets.review.diagram import draw_flow
from hysem_assets.review.evidence import evidence_table
from hysem_assets.review.flow import FlowInputs, prisma_counts
from hysem_assets.review.report import (
    NO_SYNTHESES,
    ReviewReport,
    answers_from_table,
    render_html,
    render_markdown,
    reviewer_agreement,
)
from hysem_assets.review.syntheses import synthesize
from hysem_assets.review.updates import history_frame, review_state, update_row
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path
from hysem_assets.screening.outcome import included_ids
from hysem_assets_tests.ui.server import ARTIFACTS

from . import tables
from .pages import Page

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def review() -> ReviewReport:
    flow = prisma_counts(FlowInputs(tables.raw(), tables.corpus(), tables.screening(), tables.pdfs(), tables.parsed()))
    diagram = draw_flow(flow, title="PRISMA 2020 flow: test")
    included = included_ids(tables.screening())
    evidence = evidence_table(included, tables.corpus(), tables.library(), tables.extracted(), tables.topics())
    claim = {"text": "Cohorts agree.", "citations": [{"FullCitation": "Doe, J. (w1). Study w1."}]}
    answers = pd.DataFrame(
        {
            "markdown": ["**What do cohorts find?**\n\n- Cohorts agree. (Doe, w1)\n\n<script>alert(1)</script>"],
            "json": [json.dumps({"claims": [claim, claim]})],
        }
    )
    return ReviewReport(
        slug="q",
        title="Test review",
        flow=flow,
        flow_svg=diagram.svg,
        flow_png=diagram.png,
        evidence=evidence,
        topic_table=pd.DataFrame({"topic": [1], "label": ["risk, cohort"], "top_words": ["risk, cohort, stroke"]}),
        saved_reports={"designs": pd.DataFrame({"design": ["cohort"], "articles": [1]})},
        answers=answers_from_table(answers),
    )


def test_html_is_self_contained_and_escapes_sources():
    html = render_html(review())
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html), "the page loads something from elsewhere"
    assert "<?xml" not in html and html.count("<svg") == 1
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert html.count("Doe, J. (w1). Study w1.") == 2  # the evidence table and one reference (cited twice)
    for section in ("PRISMA 2020 flow", "Topics", "Evidence table", "Saved reports", "designs", "Answers"):
        assert section in html


def test_a_ranking_answer_shows_its_chart_in_the_page(tmp_path: Path):
    chart = ranking_chart("Which designs are most common?", [("cohort", 3), ("trial", 1)], 4, tmp_path)
    answers = pd.DataFrame(
        {
            "markdown": ["**Which designs are most common?**", "**What do cohorts find?**"],
            "json": [json.dumps({"claims": []})] * 2,
            "chart": [chart["svg"], None],
        }
    )
    shown = answers_from_table(answers)
    assert shown[0].chart_png == Path(chart["png"]).read_bytes() and shown[1].chart_png is None
    html = render_html(replace(review(), answers=shown))
    assert html.count('<img alt="Chart of the ranking" src="data:image/png;base64,') == 1


def test_every_table_of_the_page_is_a_table_and_long_evidence_folds():
    base = review()
    state = review_state(
        tables.corpus(), base.evidence["cluster_id"], pd.DataFrame(columns=["question", "markdown", "json"])
    )
    updates = history_frame([update_row(None, state, number=1, search="every record", searched_through="2026-01-05")])
    long = " ".join(["A cohort of 4,402 adults <b>followed</b> for a decade"] * 4)
    evidence = base.evidence.assign(outcomes=[long, *["stroke"] * (len(base.evidence) - 1)])
    answer = answers_from_table(
        pd.DataFrame({"markdown": ["| design | studies |\n|---|---|\n| cohort | 2 |"], "json": [json.dumps({})]})
    )
    html = render_html(replace(base, updates=updates, evidence=evidence, answers=answer))
    page = Page(html)
    # flow, topics, evidence, one saved report, the updates and the update's flow, the answer's
    assert page.elements["table"] == 7 and not page.pipe_rows()
    assert page.elements["details"] == 1 and "<b>" not in html
    escaped = long.replace("<", "&lt;").replace(">", "&gt;")
    preview = "A cohort of 4,402 adults &lt;b&gt;followed&lt;/b&gt; for a decade A cohort of 4,402 adults…"
    assert f"<td><details><summary><span>{preview}</span></summary>{escaped}</details></td>" in html


def test_the_syntheses_show_each_pooled_result_with_its_forest_plot_and_the_rest_with_their_reason():
    syntheses = synthesize(tables.findings(), ["w1", "w2"], tables.library())
    html = render_html(replace(review(), syntheses=syntheses))
    page = Page(html)
    assert html.count("<svg") == 2 and '<figure class="forest"><svg' in html and "<?xml" not in html
    assert f"<h3>{tables.POOLED_STROKE}</h3>" in html and "DerSimonian-Laird" in html and "<th>I²</th>" in html
    assert "<h3>Not pooled</h3>" in html and "<td>one study</td>" in html and NO_SYNTHESES not in html
    assert page.elements["table"] == 6 and not page.pipe_rows()  # flow, topics, evidence, pooled, not pooled, report
    assert NO_SYNTHESES in render_html(review())

    markdown = render_markdown(replace(review(), syntheses=syntheses))
    assert f"### {tables.POOLED_STROKE}" in markdown
    assert f"![Forest plot: {tables.POOLED_STROKE}](data:image/png;base64," in markdown
    assert re.search(r"\|\s*aspirin vs placebo: major bleeding\s*\|\s*Doe, w1\s*\|\s*one study\s*\|", markdown)


def test_markdown_inlines_the_diagram_and_tables():
    markdown = render_markdown(review())
    assert "![PRISMA 2020 flow diagram](data:image/png;base64," in markdown
    assert re.search(r"\|\s*Studies included in review\s*\|\s*5\s*\|", markdown)
    assert re.search(r"\|\s*w1\s*\|\s*Doe, J. \(w1\). Study w1.\s*\|", markdown)
    assert "References:\n\n1. Doe, J. (w1). Study w1." in markdown


@pytest.mark.skipif(
    not os.environ.get("CI") and not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"
)
def test_the_report_opens_in_chromium(tmp_path: Path):
    import playwright.sync_api as playwright_api

    path = tmp_path / "report.html"
    path.write_text(render_html(review()), encoding="utf-8")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.goto(path.as_uri())
            diagram = page.locator("figure svg")
            diagram.wait_for()
            assert diagram.bounding_box()["height"] > 300
            page.get_by_text("Studies included in review (n = 5)").first.wait_for()
            assert page.locator("#evidence + div table tbody tr").count() == len(review().evidence) == 5
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / "review-report.png", full_page=True)
        finally:
            browser.close()


def test_the_report_states_the_two_reviewers_agreement_per_stage():
    """Ann and Bo decided four records at title and abstract (one disagreement): the report gives the kappa
    scikit-learn computes on their decisions; no full-text line, as nobody decided at full text."""
    ann = {"w1": "included", "w2": "excluded", "w3": "included", "w4": "excluded"}
    bo = {"w1": "included", "w2": "excluded", "w3": "excluded", "w4": "excluded"}
    DecisionLog(decisions_path("q")).append(
        Decision(work, action, "other" if action == "excluded" else None, reviewer=who)
        for who, decided in (("Ann", ann), ("Bo", bo))
        for work, action in decided.items()
    )
    agreement = reviewer_agreement("q")
    kappa = round(cohen_kappa_score([ann[w] for w in ann], [bo[w] for w in ann]), 4)
    assert list(agreement) == ["title and abstract"]
    assert (
        f"Cohen's kappa {kappa} between Ann and Bo over the 4 records both decided" in agreement["title and abstract"]
    )
    markdown = render_markdown(replace(review(), agreement=agreement))
    assert f"Reviewer agreement, title and abstract: Cohen's kappa {kappa}" in markdown
    assert f"Cohen's kappa {kappa}" in render_html(replace(review(), agreement=agreement))
