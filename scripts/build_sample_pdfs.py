#!/usr/bin/env python
"""Render the sample's full-text files (``hysem_assets/sample/files/``) from articles.yaml.

Every open-access work whose Unpaywall links need a file gets one (see ``mirror_files`` in
build_sample.py): a small two-column article PDF with the work's title, authors and
abstract, invented body text under numbered section headings, a table with a header row, a
numbered equation and references, and line numbers in the left margin of odd pages the way
review copies carry them, so the parsing stage meets the layouts it must handle. Planted
faults get the article cut short, or an HTML landing page instead of a PDF.

reportlab's invariant mode fixes creation dates and document ids, and every number in
the text is drawn from a generator seeded by the DOI, so re-running the script reproduces
the committed files byte for byte. reportlab is only needed here (the ``sample`` extra).

Usage: python scripts/build_sample_pdfs.py [--out DIR] [--source articles.yaml]
"""

from __future__ import annotations

import argparse
import html
import io
import random
import re
from pathlib import Path
from typing import Any

import yaml
from build_sample import SAMPLE_DIR, Sample, ascii_fold, mirror_files, plain, sections
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    FrameBreak,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

PAGE_WIDTH, PAGE_HEIGHT = A4
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM, GUTTER = 54.0, 62.0, 56.0, 18.0
COLUMN_WIDTH = (PAGE_WIDTH - 2 * MARGIN_X - GUTTER) / 2
TEXT_WIDTH = PAGE_WIDTH - 2 * MARGIN_X
LEADING = 11.0
#: Share of the article a planted ``truncated`` file keeps: enough to look right, never the end.
TRUNCATED_SHARE = 0.6

STYLES = {
    "title": ParagraphStyle("title", fontName="Times-Bold", fontSize=16, leading=19, spaceAfter=8),
    "authors": ParagraphStyle("authors", fontName="Times-Roman", fontSize=10, leading=13, spaceAfter=3),
    "affiliation": ParagraphStyle("affiliation", fontName="Times-Italic", fontSize=7.5, leading=9.5),
    "meta": ParagraphStyle("meta", fontName="Helvetica", fontSize=7, leading=9, spaceBefore=6, spaceAfter=6),
    "abstract": ParagraphStyle(
        "abstract", fontName="Times-Roman", fontSize=8.5, leading=10.5, alignment=TA_JUSTIFY, spaceAfter=2
    ),
    "heading": ParagraphStyle(
        "heading", fontName="Helvetica-Bold", fontSize=10, leading=13, spaceBefore=8, spaceAfter=3
    ),
    "subheading": ParagraphStyle(
        "subheading", fontName="Helvetica-Oblique", fontSize=9, leading=12, spaceBefore=4, spaceAfter=2
    ),
    "body": ParagraphStyle(
        "body", fontName="Times-Roman", fontSize=9, leading=LEADING, alignment=TA_JUSTIFY, firstLineIndent=10
    ),
    "equation": ParagraphStyle("equation", fontName="Times-Italic", fontSize=9, leading=12, alignment=TA_CENTER),
    "number": ParagraphStyle("number", fontName="Times-Roman", fontSize=9, leading=12, alignment=TA_RIGHT),
    "caption": ParagraphStyle("caption", fontName="Helvetica", fontSize=7.5, leading=9.5, spaceBefore=6, spaceAfter=3),
    "cell": ParagraphStyle("cell", fontName="Times-Roman", fontSize=7.5, leading=9),
    "reference": ParagraphStyle(
        "reference", fontName="Times-Roman", fontSize=7.5, leading=9.5, leftIndent=12, firstLineIndent=-12, spaceAfter=2
    ),
}


def pdf_text(text: str) -> str:
    """Text the standard PDF fonts can show (WinAnsi): other letters lose their diacritics."""
    return "".join(char if _encodable(char) else ascii_fold(char) for char in text)


def _encodable(char: str) -> bool:
    try:
        char.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def markup(text: str) -> str:
    """YAML text (which may hold <i>, <sub>, <sup>) as reportlab paragraph markup."""
    escaped = html.escape(pdf_text(text), quote=False)
    return re.sub(r"&lt;(/?)(i|b|sub|sup)&gt;", r"<\1\2>", escaped)


# ----------------------------------------------------------------------------- article content


def author_block(work: dict[str, Any]) -> list[Flowable]:
    """Author names with affiliation numbers, then the numbered affiliations."""
    institutions: list[str] = []
    names = []
    for author in work["authors"]:
        if author.collective:
            names.append(pdf_text(author.collective))
            continue
        raw = author.institution["raw"]
        if raw not in institutions:
            institutions.append(raw)
        names.append(f"{pdf_text(author.given)} {pdf_text(author.family)}<super>{institutions.index(raw) + 1}</super>")
    flowables: list[Flowable] = [Paragraph(", ".join(names), STYLES["authors"])]
    flowables += [
        Paragraph(f"<super>{n}</super> {markup(raw)}", STYLES["affiliation"]) for n, raw in enumerate(institutions, 1)
    ]
    return flowables


def citation_line(work: dict[str, Any]) -> str:
    journal = work["journal"]["title"]
    volume = f" {work['volume']}" if work.get("volume") else ""
    issue = f"({work['issue']})" if work.get("issue") else ""
    pages = f": {work['pages']}" if work.get("pages") else ""
    return pdf_text(f"{journal}{volume}{issue}{pages} ({work['published'][0]})")


def abstract_box(work: dict[str, Any]) -> Table:
    paragraphs = [Paragraph("<b>Abstract</b>", STYLES["abstract"])]
    for label, text in sections(work.get("abstract")):
        prefix = f"<b>{label.title()}:</b> " if label else ""
        paragraphs.append(Paragraph(prefix + markup(" ".join(str(text).split())), STYLES["abstract"]))
    keywords = "; ".join(pdf_text(keyword) for keyword in work.get("keywords", []))
    paragraphs.append(Paragraph(f"<b>Keywords:</b> {keywords}", STYLES["abstract"]))
    box = Table([[paragraphs]], colWidths=[TEXT_WIDTH])
    box.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, -1), colors.Color(0.94, 0.94, 0.94)),
                ("BOX", (0, 0), (-1, -1), 0.5, colors.grey),
                ("LEFTPADDING", (0, 0), (-1, -1), 8),
                ("RIGHTPADDING", (0, 0), (-1, -1), 8),
            ]
        )
    )
    return box


def head_block(work: dict[str, Any]) -> list[Flowable]:
    """Everything above the two columns on page one."""
    licence = (work.get("oa") or {}).get("license")
    terms = f"Open access under {licence.upper().replace('-', ' ')}" if licence else "Free to read"
    meta = f"{citation_line(work)} · doi:{work['doi']} · {terms}"
    return [
        Paragraph(markup(work["title"]), STYLES["title"]),
        *author_block(work),
        Paragraph(meta, STYLES["meta"]),
        abstract_box(work),
    ]


def topics(work: dict[str, Any]) -> list[str]:
    keywords = [pdf_text(keyword) for keyword in work.get("keywords", [])]
    return (keywords + ["air pollution", "cardiovascular disease", "machine learning"])[:3]


def conclusion(work: dict[str, Any]) -> str:
    labelled = dict(sections(work.get("abstract")))
    return labelled.get("CONCLUSIONS") or labelled.get(None) or ""


def written_body(work: dict[str, Any]) -> list[Flowable]:
    """Sections written out in the YAML (``fulltext:`` headings, paragraphs, an optional table), numbered."""
    flowables: list[Flowable] = []
    for number, section in enumerate(work["fulltext"], 1):
        flowables.append(Paragraph(f"{number} {markup(section['heading'])}", STYLES["heading"]))
        for text in section.get("paragraphs", []):
            flowables.append(Paragraph(markup(" ".join(str(text).split())), STYLES["body"]))
        if section.get("table"):
            flowables += written_table(section["table"])
    return flowables


def written_table(table: dict[str, Any]) -> list[Flowable]:
    """A table given as caption, header and rows, set like ``results_table``."""
    rows = [table["header"], *table["rows"]]
    cells = [
        [Paragraph(f"<b>{markup(str(value))}</b>" if i == 0 else markup(str(value)), STYLES["cell"]) for value in row]
        for i, row in enumerate(rows)
    ]
    widths = table.get("widths") or [1 / len(table["header"])] * len(table["header"])
    grid = Table(cells, colWidths=[COLUMN_WIDTH * share for share in widths], repeatRows=1)
    grid.setStyle(
        TableStyle(
            [
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
            ]
        )
    )
    caption = Paragraph(markup(table["caption"]), STYLES["caption"])
    return [caption, grid, Spacer(0, 6)]


def body(work: dict[str, Any], rng: random.Random) -> list[Flowable]:
    """Invented sections around the work's own topics, with a table and a numbered equation.

    A work whose YAML writes its full text out (``fulltext:``) gets that text instead.
    """
    if work.get("fulltext"):
        return written_body(work)
    first, second, third = topics(work)
    n = rng.randrange(1800, 48000)
    lags = rng.choice((3, 5, 7, 14))
    text = STYLES["body"]

    def para(source: str) -> Paragraph:
        return Paragraph(source, text)

    flowables: list[Flowable] = [
        Paragraph("1 Introduction", STYLES["heading"]),
        para(
            "Ambient and household air pollution remain among the largest environmental contributors to "
            "cardiovascular disease, yet the evidence is uneven across places, pollutants and outcomes. Studies "
            f"of {first} have multiplied, but they differ in exposure assessment, in the outcomes they count and "
            "in how they model time, which makes their estimates hard to compare or pool."
        ),
        para(
            f"Flexible learners can capture non-linear exposure-response shapes and interactions, such as those "
            f"between {second} and {third}, that regression models with fixed terms may miss. Their price is "
            "interpretability: a prediction is easier to produce than to explain, and a good fit says little "
            "about causation. This article pairs a flexible model with a conventional one and asks where, and "
            "why, the two disagree."
        ),
        Paragraph("2 Methods", STYLES["heading"]),
        Paragraph("2.1 Data", STYLES["subheading"]),
        para(
            f"The analysis used {n:,} records linked to daily exposure estimates at the residential address. "
            "Records with missing exposure on the index day were excluded, and the remaining gaps in covariates "
            "were filled by chained equations with twenty imputations."
        ),
        Paragraph("2.2 Statistical model", STYLES["subheading"]),
        para(
            f"The reference model relates the expected daily count to exposure over the previous {lags} days "
            "with a quasi-Poisson link:"
        ),
        equation(
            "log E[<i>Y<sub>t</sub></i>] = <i>a</i> + <i>b</i><sub>0</sub><i>x<sub>t</sub></i> + ... + "
            "<i>b<sub>L</sub>x<sub>t-L</sub></i> + <i>s</i>(<i>t</i>) + <i>cT<sub>t</sub></i>",
            1,
        ),
        para(
            "where <i>x<sub>t-l</sub></i> is the exposure <i>l</i> days earlier, <i>s</i>(<i>t</i>) a smooth "
            "function of calendar time with six degrees of freedom per year and <i>T<sub>t</sub></i> the mean "
            "temperature. The cumulative relative risk for an increase of 10 units sustained over the lag window "
            "follows from the lag coefficients as"
        ),
        equation("RR = exp(10 (<i>b</i><sub>0</sub> + <i>b</i><sub>1</sub> + ... + <i>b<sub>L</sub></i>))", 2),
        Paragraph("2.3 Flexible model", STYLES["subheading"]),
        para(
            "The flexible model was trained on the same inputs, and its accumulated local effects were compared "
            "with equation (2). Hyper-parameters were tuned by five-fold cross-validation blocked by calendar "
            "month to respect the time structure, and the final model was refitted on all data with the chosen "
            "settings. Calibration was checked by comparing observed and predicted counts in deciles of risk."
        ),
        Paragraph("3 Results", STYLES["heading"]),
        Paragraph("3.1 Main estimates", STYLES["subheading"]),
        para(
            f"Table 1 summarises the estimates for the whole population and by subgroup. Associations were "
            f"strongest on the day of exposure and faded within {lags} days; the flexible model found a steeper "
            "slope at low concentrations than the linear term allows."
        ),
        *results_table(rng),
        Paragraph("3.2 Sensitivity analyses", STYLES["subheading"]),
        para(
            "Sensitivity analyses that changed the degrees of freedom for time, dropped the temperature term or "
            "restricted the data to complete cases moved the main estimate by less than its standard error. "
            "Adding the previous week's mean exposure as a separate term did not change the shape of the lag "
            "structure, and excluding the three most polluted weeks of each year attenuated the estimates only "
            "slightly."
        ),
        para(
            f"The flexible model ranked {second} second among all inputs by permutation importance, after "
            f"{first}, and its partial dependence on {third} was monotone over the central 90% of the data. "
            "Explained deviance on held-out months was similar for both models, so the gain from flexibility lies "
            "in the shape of the association rather than in predictive accuracy."
        ),
        Paragraph("4 Discussion", STYLES["heading"]),
        para(
            f"Both models agree on the direction and approximate size of the association with {first}, which "
            "argues against an artefact of either specification. Where they disagree, at the tails of the "
            "exposure distribution, data are thin and the flexible model extrapolates; such regions deserve "
            "caution rather than interpretation."
        ),
        para(
            "Exposure was assigned at the residence, so time spent elsewhere adds error that likely biases "
            "estimates towards the null. Outcome records come from routine systems whose coding changed during "
            "the study period, which the smooth function of time only partly absorbs."
        ),
        para(
            "Comparable studies reported associations of similar size [1, 2], and reviews of machine-learning "
            "applications in the field have called for exactly this kind of side-by-side comparison with "
            "established models [3]. Our results suggest that the two approaches are complements: the reference "
            "model gives an interpretable summary, while the flexible one flags where that summary is too "
            "simple [4-6]."
        ),
        Paragraph("5 Conclusions", STYLES["heading"]),
        para(markup(" ".join(conclusion(work).split())) or "The findings support policies that lower exposure."),
    ]
    return flowables


def equation(source: str, number: int) -> Table:
    """A displayed equation with its number flush right, as journals set them."""
    row = [[Paragraph(source, STYLES["equation"]), Paragraph(f"({number})", STYLES["number"])]]
    table = Table(row, colWidths=[COLUMN_WIDTH - 24, 24])
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), 0),
            ]
        )
    )
    return table


def results_table(rng: random.Random) -> list[Flowable]:
    header = ["Group", "n", "RR per 10 units", "95% CI"]
    rows = [header]
    for group in ("All", "Women", "Men", "Aged 65 years and over", "Under 65 years"):
        estimate = 1 + rng.uniform(0.005, 0.09)
        spread = rng.uniform(0.01, 0.04)
        rows.append(
            [
                group,
                f"{rng.randrange(400, 20000):,}",
                f"{estimate:.3f}",
                f"{estimate - spread:.3f}-{estimate + spread:.3f}",
            ]
        )
    cells = [
        [Paragraph(f"<b>{value}</b>" if i == 0 else value, STYLES["cell"]) for value in row]
        for i, row in enumerate(rows)
    ]
    table = Table(cells, colWidths=[COLUMN_WIDTH * share for share in (0.38, 0.16, 0.24, 0.22)], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
            ]
        )
    )
    caption = Paragraph(
        "<b>Table 1.</b> Relative risk (RR) per 10-unit increase in exposure, by group.", STYLES["caption"]
    )
    return [caption, table, Spacer(0, 6)]


def references(work: dict[str, Any], sample: Sample, rng: random.Random) -> list[Flowable]:
    """Numbered references to other works of the sample, so citations can be resolved later."""
    others = [other for other in sample.works if other.get("doi") and other["id"] != work["id"]]
    cited = sorted(rng.sample(others, 6), key=lambda other: other["id"])
    flowables: list[Flowable] = [Paragraph("References", STYLES["heading"])]
    for number, other in enumerate(cited, 1):
        authors = [a.collective or f"{a.family} {''.join(p[0] for p in a.given.split())}" for a in other["authors"]]
        names = ", ".join(authors[:3]) + (", et al." if len(authors) > 3 else "")
        entry = (
            f"[{number}] {pdf_text(names).rstrip('.')}. {markup(plain(other['title']))}. {citation_line(other)}. "
            f"doi:{other['doi']}"
        )
        flowables.append(Paragraph(entry, STYLES["reference"]))
    return flowables


# ----------------------------------------------------------------------------- page layout


def head_height(flowables: list[Flowable]) -> float:
    """Height the title block needs on page one, so the columns start right below it."""
    total = 0.0
    for flowable in flowables:
        _, height = flowable.wrap(TEXT_WIDTH, PAGE_HEIGHT)
        total += height + flowable.getSpaceBefore() + flowable.getSpaceAfter()
    return total + 12


def columns(top: float) -> list[Frame]:
    height = top - MARGIN_BOTTOM
    return [
        Frame(
            MARGIN_X + i * (COLUMN_WIDTH + GUTTER),
            MARGIN_BOTTOM,
            COLUMN_WIDTH,
            height,
            id=f"column{i}",
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        for i in range(2)
    ]


def decorate(work: dict[str, Any]):
    """Running header and footer on every page; line numbers in the margin of odd pages."""
    header = citation_line(work)

    def draw(canvas: Canvas, document: BaseDocTemplate) -> None:
        page = canvas.getPageNumber()
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.setFillColor(colors.Color(0.3, 0.3, 0.3))
        canvas.drawString(MARGIN_X, PAGE_HEIGHT - 36, header)
        canvas.drawRightString(PAGE_WIDTH - MARGIN_X, PAGE_HEIGHT - 36, f"doi:{work['doi']}")
        canvas.line(MARGIN_X, PAGE_HEIGHT - 40, PAGE_WIDTH - MARGIN_X, PAGE_HEIGHT - 40)
        canvas.drawCentredString(PAGE_WIDTH / 2, 30, str(page))
        if page % 2 == 1:
            canvas.setFont("Helvetica", 5.5)
            lines = int((PAGE_HEIGHT - MARGIN_TOP - MARGIN_BOTTOM) // LEADING)
            for line in range(1, lines + 1):
                canvas.drawRightString(MARGIN_X - 10, PAGE_HEIGHT - MARGIN_TOP - line * LEADING + 2, str(line))
        canvas.restoreState()

    return draw


def article_pdf(work: dict[str, Any], sample: Sample) -> bytes:
    rng = random.Random(work["doi"])
    head = head_block(work)
    head_top = PAGE_HEIGHT - MARGIN_TOP
    height = head_height(head)
    first_frames = [
        Frame(
            MARGIN_X,
            head_top - height,
            TEXT_WIDTH,
            height,
            id="head",
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        ),
        *columns(head_top - height),
    ]
    buffer = io.BytesIO()
    draw = decorate(work)
    document = BaseDocTemplate(
        buffer,
        pagesize=A4,
        invariant=1,
        pageCompression=1,
        title=plain(pdf_text(work["title"])),
        author="; ".join(pdf_text(author.display) for author in work["authors"]),
        subject=f"doi:{work['doi']}",
        creator="hysem sample snapshot",
        pageTemplates=[
            PageTemplate("first", first_frames, onPage=draw, autoNextPageTemplate="later"),
            PageTemplate("later", columns(head_top), onPage=draw),
        ],
    )
    document.build([*head, FrameBreak(), *body(work, rng), *references(work, sample, rng)])
    return buffer.getvalue()


def landing_page(work: dict[str, Any]) -> bytes:
    """An article's HTML landing page: what many "PDF" links really serve."""
    title = html.escape(plain(work["title"]))
    authors = html.escape(", ".join(author.display for author in work["authors"]))
    abstract = "".join(
        f"<p>{html.escape(plain(' '.join(str(text).split())))}</p>" for _, text in sections(work.get("abstract"))
    )
    journal = html.escape(work["journal"]["title"])
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title} | {journal}</title>\n"
        f'<meta name="citation_title" content="{title}">\n<meta name="citation_doi" content="{work["doi"]}">\n'
        f'</head>\n<body>\n<header>{journal}</header>\n<main>\n<h1>{title}</h1>\n<p class="authors">{authors}</p>\n'
        f'<section class="abstract"><h2>Abstract</h2>{abstract}</section>\n</main>\n</body>\n</html>\n'
    )
    return page.encode("utf-8")


# ----------------------------------------------------------------------------- output


def render(sample: Sample) -> dict[str, bytes]:
    """Every file under files/, keyed by name."""
    files: dict[str, bytes] = {}
    for work in sample.works:
        if not work.get("doi"):
            continue
        for name, kind in mirror_files(work).items():
            if kind == "html":
                files[name] = landing_page(work)
                continue
            article = article_pdf(work, sample)
            files[name] = article[: int(len(article) * TRUNCATED_SHARE)] if kind == "truncated" else article
    return dict(sorted(files.items()))


def write(files: dict[str, bytes], folder: Path) -> None:
    """Replace the folder's PDFs and landing pages with ``files``."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in [*folder.glob("*.pdf"), *folder.glob("*.html")]:
        stale.unlink()
    for name, data in files.items():
        (folder / name).write_bytes(data)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SAMPLE_DIR / "articles.yaml", help="source-of-truth YAML")
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="snapshot directory whose files/ to (re)write")
    args = parser.parse_args(argv)
    sample = Sample(yaml.safe_load(args.source.read_text(encoding="utf-8")))
    files = render(sample)
    write(files, args.out / "files")
    size = sum(len(data) for data in files.values())
    print(f"wrote {len(files)} files ({size:,} bytes) to {args.out / 'files'}")


if __name__ == "__main__":
    main()
