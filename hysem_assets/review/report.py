"""The review report: flow diagram, topic map, evidence table, syntheses with their forest plots,
saved reports and answers with their references, in one self-contained HTML (or Markdown) file.

Self-contained means a reviewer can mail the file: the diagram is inline SVG, pictures
are data URIs, and the page loads no script, style or font from anywhere.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt

from hysem_assets.dedup.normalize import is_missing
from hysem_assets.review.syntheses import Synthesis, not_pooled_table, pooled_row, read_syntheses
from hysem_assets.review.updates import what_changed_markdown
from hysem_assets.stores.tables import read_table

_XML_PROLOGUE = re.compile(r"^\s*<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", re.DOTALL)
#: A data cell as pandas writes it: escaped text, so it holds no "<".
_CELL = re.compile(r"<td>([^<]*)</td>")
#: What the syntheses section says when there is nothing to pool.
NO_SYNTHESES = "No included study reports a comparison with an estimate and its interval."
#: Cells longer than this many characters fold to a preview of at most ``_PREVIEW`` characters.
_FOLD_AT, _PREVIEW = 100, 80


@dataclass(frozen=True)
class Answer:
    """One answer's Markdown, the full references of the sources it cites, and its chart (a ranking's or a trend's)."""

    markdown: str
    references: list[str]
    chart_png: bytes | None = None


@dataclass(frozen=True)
class ReviewReport:
    """What the report shows for one query."""

    slug: str
    title: str
    flow: pd.DataFrame
    flow_svg: str
    flow_png: bytes
    evidence: pd.DataFrame
    topic_png: bytes | None = None
    topic_table: pd.DataFrame | None = None
    saved_reports: dict[str, pd.DataFrame] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)
    #: The ``updates`` table: what each search of the query changed (None before the first).
    updates: pd.DataFrame | None = None
    #: Pooled comparisons with their forest plots, and those not pooled (see :mod:`hysem_assets.review.syntheses`).
    syntheses: list[Synthesis] = field(default_factory=list)
    #: Per screening stage two reviewers shared, their agreement in words (Cohen's kappa).
    agreement: dict[str, str] = field(default_factory=dict)


def answers_from_table(answers: pd.DataFrame) -> list[Answer]:
    """Answers of the ``answers`` asset, each with the distinct full citations of its claims."""
    result = []
    charts = answers["chart"] if "chart" in answers.columns else [None] * len(answers)
    for markdown, payload, chart in zip(answers["markdown"], answers["json"], charts, strict=True):
        claims = json.loads(payload).get("claims", []) if not is_missing(payload) else []
        cited = (citation.get("FullCitation") for claim in claims for citation in claim.get("citations", []))
        png = None if is_missing(chart) else Path(chart).with_suffix(".png")
        result.append(
            Answer(
                str(markdown),
                list(dict.fromkeys(c for c in cited if c)),
                png.read_bytes() if png is not None and png.is_file() else None,
            )
        )
    return result


def _flow_table(flow: pd.DataFrame) -> pd.DataFrame:
    return flow[["stage", "label", "count"]].rename(columns=str.capitalize)


def _topics(topic_table: pd.DataFrame) -> pd.DataFrame:
    columns = [c for c in ("topic", "label", "coherence", "prevalence", "top_words") if c in topic_table.columns]
    return topic_table[columns]


def _pooled(syntheses: list[Synthesis]) -> list[Synthesis]:
    return [synthesis for synthesis in syntheses if synthesis.pooled]


def _preview(text: str) -> str:
    """The start of a long text, cut at a word boundary, so a folded cell reads as a phrase."""
    cut = text.rfind(" ", 0, _PREVIEW + 1)
    return text[: cut if cut > 0 else _PREVIEW].rstrip(" ,;:.|") + "…"


def _fold(cell: re.Match[str]) -> str:
    """A long cell as its preview, which opens on the full (still escaped) text."""
    text = html.unescape(cell[1])
    if len(text) <= _FOLD_AT:
        return cell[0]
    return f"<td><details><summary><span>{html.escape(_preview(text))}</span></summary>{cell[1]}</details></td>"


def _fold_long_cells(table: str) -> str:
    """The long cells of a table pandas wrote, folded to a preview the reader opens, so rows stay a few lines high."""
    return _CELL.sub(_fold, table)


def render_html(report: ReviewReport) -> str:
    """The report as one HTML page (autoescaped; Markdown, tables included, rendered without raw HTML)."""
    environment = Environment(loader=PackageLoader("hysem_assets.review", "templates"), autoescape=select_autoescape())
    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")

    def table(frame: pd.DataFrame) -> str:
        return frame.to_html(index=False, escape=True, na_rep="", border=0)

    not_pooled = not_pooled_table(report.syntheses)
    return environment.get_template("report.html.j2").render(
        title=f"Review report: {report.title}",
        slug=report.slug,
        generated=dt.date.today().isoformat(),
        included=len(report.evidence),
        flow_svg=_XML_PROLOGUE.sub("", report.flow_svg),
        flow_table=table(_flow_table(report.flow)),
        agreement=report.agreement,
        topic_png=base64.b64encode(report.topic_png).decode() if report.topic_png else None,
        topic_table=table(_topics(report.topic_table)) if report.topic_table is not None else None,
        evidence_table=_fold_long_cells(table(report.evidence)),
        pooled=[
            {
                "comparison": synthesis.comparison,
                "table": table(pd.DataFrame([pooled_row(synthesis)])),
                "svg": _XML_PROLOGUE.sub("", synthesis.svg or ""),
            }
            for synthesis in _pooled(report.syntheses)
        ],
        not_pooled=table(not_pooled) if len(not_pooled) else None,
        no_syntheses=None if report.syntheses else NO_SYNTHESES,
        saved_reports=[(name, table(frame)) for name, frame in report.saved_reports.items()],
        what_changed=markdown.render(what_changed_markdown(report.updates)) if report.updates is not None else None,
        answers=[
            {
                "html": markdown.render(a.markdown),
                "references": a.references,
                "chart": base64.b64encode(a.chart_png).decode() if a.chart_png else None,
            }
            for a in report.answers
        ],
    )


def render_markdown(report: ReviewReport) -> str:
    """The report as Markdown, pictures inlined as data URIs."""
    png = base64.b64encode(report.flow_png).decode()
    parts = [
        f"# Review report: {report.title}",
        f"Query `{report.slug}` · {dt.date.today().isoformat()} · {len(report.evidence)} studies included",
        "## PRISMA 2020 flow",
        f"![PRISMA 2020 flow diagram](data:image/png;base64,{png})",
        _flow_table(report.flow).to_markdown(index=False),
        *(f"Reviewer agreement, {stage}: {said}." for stage, said in report.agreement.items()),
        "## Topics",
    ]
    if report.topic_png:
        parts.append(f"![Intertopic distance map](data:image/png;base64,{base64.b64encode(report.topic_png).decode()})")
    if report.topic_table is not None:
        parts.append(_topics(report.topic_table).to_markdown(index=False))
    parts += ["## Evidence table", report.evidence.to_markdown(index=False), "## Syntheses"]
    for synthesis in _pooled(report.syntheses):
        png = base64.b64encode(synthesis.png or b"").decode()
        parts += [
            f"### {synthesis.comparison}",
            pd.DataFrame([pooled_row(synthesis)]).to_markdown(index=False),
            f"![Forest plot: {synthesis.comparison}](data:image/png;base64,{png})",
        ]
    not_pooled = not_pooled_table(report.syntheses)
    if len(not_pooled):
        parts += ["### Not pooled", not_pooled.to_markdown(index=False)]
    if not report.syntheses:
        parts.append(NO_SYNTHESES)
    parts.append("## Saved reports")
    for name, frame in report.saved_reports.items():
        parts += [f"### {name}", frame.to_markdown(index=False) if len(frame) else "_no rows_"]
    if report.updates is not None:
        parts += ["## What changed", what_changed_markdown(report.updates)]
    parts.append("## Answers")
    for answer in report.answers:
        parts.append(answer.markdown)
        if answer.references:
            parts.append("References:\n\n" + "\n".join(f"{n}. {ref}" for n, ref in enumerate(answer.references, 1)))
    return "\n\n".join(parts) + "\n"


def reviewer_agreement(slug: str) -> dict[str, str]:
    """Per screening stage where two reviewers decided the same records, their agreement in words, read from the
    query's decision log (the one the ``screening`` table is resolved from)."""
    from hysem_assets.screening.agreement import stage_agreement
    from hysem_assets.screening.decisions import STAGE_NAMES, DecisionLog, decisions_path, replay

    log = DecisionLog(decisions_path(slug)).read()
    return {name: found.said for stage, name in STAGE_NAMES.items() if (found := stage_agreement(replay(log, stage)))}


class NotMaterialized(LookupError):
    """A deliverable the report needs has not been materialized for the query."""


def stored_report(slug: str, title: str, frame: Callable[[str], pd.DataFrame | None]) -> ReviewReport:
    """The report of a query from its materialized assets, read by ``frame`` (asset key ->
    table, None when not materialized); the flow and the evidence table are required,
    topics, saved reports and answers are shown when present."""
    from hysem_assets.knowledge.reports import load_reports
    from hysem_assets.settings.catalog import review_for
    from hysem_assets.settings.environment import hysem_home, review_dir

    flow, evidence = frame("prisma_flow"), frame("evidence_table")
    folder = review_dir(slug)
    if flow is None or evidence is None or not (folder / "prisma_flow.svg").is_file():
        raise NotMaterialized(
            f"The review deliverables of {slug!r} are not materialized. "
            f"Run `hysem materialize --query {slug} --select group:review` first."
        )
    topics = hysem_home() / "topics" / slug
    own = set(review_for(slug).protocol.reports)
    reports = {report.name: frame(f"reports/{report.name}") for report in load_reports() if report.name in own}
    answers = frame("answers")
    return ReviewReport(
        agreement=reviewer_agreement(slug),
        updates=frame("updates"),
        slug=slug,
        title=title,
        flow=flow,
        flow_svg=(folder / "prisma_flow.svg").read_text(encoding="utf-8"),
        flow_png=(folder / "prisma_flow.png").read_bytes(),
        evidence=evidence,
        syntheses=read_syntheses(folder),
        topic_png=(topics / "topics.png").read_bytes() if (topics / "topics.png").is_file() else None,
        topic_table=read_table(topics / "topic_table.parquet") if (topics / "topic_table.parquet").is_file() else None,
        saved_reports={name: table for name, table in reports.items() if table is not None},
        answers=answers_from_table(answers) if answers is not None else [],
    )
