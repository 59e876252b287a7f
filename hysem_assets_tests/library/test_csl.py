"""CSL-JSON items and offline citation rendering, checked against Crossref's own renderings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hysem_assets.library.csl import normalize_csl_item, render_citations, resolve_style, to_csl_item
from hysem_assets_tests.library.corpus import sample_corpus

ORACLE = "csl/oracle_crossref_cn/science.169.3946.635"


@pytest.fixture(scope="module")
def items() -> list[dict]:
    return [to_csl_item(row) for row in sample_corpus().to_dict("records")]


@pytest.fixture
def crossref_item(realdata: Path) -> dict:
    return json.loads((realdata / f"{ORACLE}.csl.json").read_text(encoding="utf-8")) | {"id": "frank1970"}


def oracle(realdata: Path, style: str) -> str:
    return (realdata / f"{ORACLE}.{style}.txt").read_text(encoding="utf-8")


def test_to_csl_item_for_a_pubmed_journal_article(items):
    assert items[0] == {
        "id": "c-480b6032ca8d",
        "type": "article-journal",
        "title": "Multi-pollutant exposure and subclinical atherosclerosis: elastic net and LASSO regularised "
        "regression in a Swiss cohort",
        "author": [
            {"family": "Romano", "given": "Chiara"},
            {"family": "Brunner", "given": "Lukas"},
            {"family": "Keller", "given": "Anna"},
        ],
        "issued": {"date-parts": [[2025]]},
        "container-title": "Journal of environmental cardiology",
        "volume": "18",
        "issue": "1",
        "page": "22-35",
        "DOI": "10.5555/jec.2025.0103",
        "PMID": "39874511",
        "abstract": "BACKGROUND: Carotid intima-media thickness.\n\nMETHODS: 4,402 adults; 95% CI & more.",
        "language": "en",
    }


def test_to_csl_item_maps_types_collectives_and_containers(items):
    collective, chapter, preprint, conference = items[1], items[2], items[3], items[4]
    assert collective["author"][0] == {"literal": "European Environmental Cardiology Working Group"}
    assert chapter["type"] == "chapter"
    assert chapter["container-title"] == "Air Pollution and the Heart: A Clinical Compendium"
    assert "DOI" not in chapter and "URL" not in chapter
    assert (preprint["type"], preprint["publisher"]) == ("article", "HealthRxiv")
    assert "container-title" not in preprint and "URL" not in preprint  # the DOI already links it
    assert conference["type"] == "paper-conference"
    assert items[5]["page"] == "455-463"


def test_apa_citations_of_the_sample_corpus(items):
    citations = render_citations(items)
    assert list(citations) == [item["id"] for item in items]
    assert all(citation.error is None for citation in citations.values())
    article, chapter = citations["c-480b6032ca8d"], citations["c-66027d8cf906"]
    assert article.in_text == "(Romano et al., 2025)"
    assert article.bibliography == (
        "Romano, C., Brunner, L., & Keller, A. (2025). Multi-pollutant exposure and subclinical atherosclerosis: "
        "elastic net and LASSO regularised regression in a Swiss cohort. Journal of Environmental Cardiology, "
        "18(1), 22–35. https://doi.org/10.5555/jec.2025.0103"
    )
    assert chapter.bibliography == (
        "Sørensen, H., & Nwosu, A. (2022). Machine learning methods for air pollution and cardiovascular outcomes. "
        "In Air Pollution and the Heart: A Clinical Compendium."
    )
    assert citations["c-d17a15471213"].in_text == "(European Environmental Cardiology Working Group et al., 2021)"


def test_html_keeps_markup_and_plain_text_has_none(items):
    citation = render_citations(items)["c-1625a8ad05f5"]
    assert "<i>International Journal of Exposure Science &amp; Computation</i>" in citation.bibliography_html
    assert "International Journal of Exposure Science & Computation, 28(5), 455–463." in citation.bibliography
    assert not re.search(r"<[^>]+>|&amp;", citation.bibliography)


def test_apa_matches_the_crossref_rendering(realdata, crossref_item):
    """APA of Crossref's CSL-JSON equals the string Crossref's citeproc rendered for it.

    Exact match. Two things are normalised, both on the way in or out and not in the text:
    the oracle file ends with a newline (file formatting, stripped), and Crossref's CSL-JSON
    says ``"type": "journal-article"`` (Crossref's vocabulary), which ``normalize_csl_item``
    maps to CSL's ``article-journal``. The subtitle Crossref stores separately is left out by
    both renderings, as SOURCES.md notes for the oracle.
    """
    citation = render_citations([crossref_item], style="apa")["frank1970"]
    assert citation.bibliography == oracle(realdata, "apa").rstrip("\n")
    assert citation.in_text == "(Frank, 1970)"


def test_ieee_matches_the_crossref_rendering(realdata, crossref_item):
    """IEEE of Crossref's CSL-JSON equals Crossref's rendering, the trailing newline aside.

    This needs the en-US ``punctuation-in-quote`` option (``“Title,”``), which citeproc-py
    0.11 reads but does not apply; :mod:`hysem_assets.library.csl` applies it. Both renderings
    write no space after ``[1]`` (the style aligns the number as a second field).
    """
    citation = render_citations([crossref_item], style="ieee")["frank1970"]
    assert citation.bibliography == oracle(realdata, "ieee").rstrip("\n")
    assert citation.in_text == "[1]"


def test_crossref_quirks_are_normalised(crossref_item):
    item = normalize_csl_item(crossref_item | {"issued": {"date-parts": [[None]]}, "title": ["A title", "Other"]})
    assert item["type"] == "article-journal"
    assert item["title"] == "A title"
    assert "issued" not in item and "original-title" not in item and "reference" not in item
    citation = render_citations([item])["frank1970"]
    assert citation.error is None
    assert citation.bibliography.startswith("Frank, H. S. (n.d.). A title. Science")


@pytest.mark.parametrize(
    "style_file",
    [
        "apa",
        "ieee",
        "nature",
        "chicago-author-date",
        "american-medical-association",
        "bmj",
        "elsevier-harvard",
        "harvard-cite-them-right",
        "modern-language-association",
    ],
)
def test_official_styles_by_path_render_every_item(realdata, items, style_file):
    path = realdata / "csl" / "styles" / f"{style_file}.csl"
    citations = render_citations(items, style=str(path))
    assert [c.error for c in citations.values()] == [None] * len(items)
    romano = citations["c-480b6032ca8d"]
    assert "Romano" in romano.bibliography and "2025" in romano.bibliography
    assert romano.in_text


@pytest.mark.parametrize("style", ["ieee", "vancouver", "ama", "nature"])
def test_numeric_styles_number_in_text_as_in_the_bibliography(items, style):
    citations = render_citations(items, style=style)
    numbers = [re.search(r"\d+", c.in_text).group() for c in citations.values()]
    assert numbers == [str(n) for n in range(1, len(items) + 1)]
    for number, citation in zip(numbers, citations.values(), strict=True):
        assert re.match(rf"\[?{number}\]?\.?", citation.bibliography), citation.bibliography


@pytest.mark.parametrize("style", ["harvard", "chicago", "mla", "vancouver", "ama", "APA"])
def test_style_aliases_and_names_resolve_to_bundled_files(style):
    path = resolve_style(style)
    assert path.suffix == ".csl" and path.is_file()


def test_unknown_styles_are_refused_with_a_hint():
    with pytest.raises(ValueError, match=r"unknown citation style 'no-such-style'.*apa, ieee"):
        render_citations([], style="no-such-style")
    with pytest.raises(ValueError, match="CSL style file not found"):
        resolve_style("/nowhere/style.csl")


def test_a_bad_item_fails_alone_and_keeps_its_reason(items):
    bad_year = items[0] | {"id": "bad-year", "issued": {"date-parts": [["spring"]]}}
    bad_name = items[1] | {"id": "bad-name", "author": [{"family": 1970}]}
    citations = render_citations([items[2], bad_year, bad_name, items[3]])
    assert list(citations) == ["c-66027d8cf906", "bad-year", "bad-name", "c-7c88eabe28d0"]
    assert citations["bad-year"].error.startswith("TypeError")
    assert citations["bad-name"].error.startswith("TypeError")
    assert citations["bad-year"].bibliography == "" and citations["bad-year"].in_text == ""
    assert citations["c-7c88eabe28d0"].error is None
    assert citations["c-7c88eabe28d0"].bibliography.startswith("Lima, R. S., Carvalho, B., & Almeida, J. P. (2021).")


def test_ids_that_differ_only_by_case_are_reported(items):
    citations = render_citations([items[0], items[1] | {"id": items[0]["id"].upper()}])
    assert citations[items[0]["id"]].error is None
    assert "ignores case" in citations[items[0]["id"].upper()].error


def test_rendering_is_deterministic(items):
    assert render_citations(items, style="chicago-author-date") == render_citations(items, style="chicago-author-date")
