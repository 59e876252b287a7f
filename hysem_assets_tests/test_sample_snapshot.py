"""The bundled sample snapshot is complete, consistent with its ground truth and reproducible."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.settings.queries import load_queries

SAMPLE = default_snapshot_dir()
ROOT = Path(__file__).resolve().parents[1]
GENERATED_FOLDERS = ("pubmed", "openalex", "scopus", "europepmc", "crossref", "unpaywall")


def load(relative: str):
    return json.loads((SAMPLE / relative).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def truth() -> dict:
    return load("truth.json")


@pytest.fixture(scope="module")
def pubmed() -> ET.Element:
    return ET.parse(SAMPLE / "pubmed" / "efetch.xml").getroot()


def pmid_of(element: ET.Element) -> str:
    return element.findtext("MedlineCitation/PMID") or element.findtext("BookDocument/PMID")


def rendered_ids(pubmed: ET.Element) -> dict[str, list[str]]:
    return {
        "pubmed": [pmid_of(element) for element in pubmed],
        "openalex": [work["id"].rsplit("/", 1)[-1] for work in load("openalex/works.json")],
        "scopus": [entry["eid"] for entry in load("scopus/entries.json")],
    }


def test_sample_is_large_and_overlapping_enough(truth: dict) -> None:
    works = truth["works"]
    assert truth["query"] == "air-pollution-cardio-ml"
    assert len(works) == truth["unique_works"] >= 45
    multi = [work for work in works if len({record["source"] for record in work["records"]}) > 1]
    assert len(multi) == truth["multi_source_works"] >= 12
    counts = truth["expected_counts"]
    assert 25 <= counts["pubmed"] <= 35 and 30 <= counts["openalex"] <= 40 and 18 <= counts["scopus"] <= 26


def test_truth_and_rendered_records_match_one_to_one(truth: dict, pubmed: ET.Element) -> None:
    rendered = rendered_ids(pubmed)
    in_truth = [(record["source"], record["source_id"]) for work in truth["works"] for record in work["records"]]
    assert len(in_truth) == len(set(in_truth)), "a source record belongs to two works"
    for source, ids in rendered.items():
        assert len(ids) == len(set(ids)) == truth["expected_counts"][source]
        assert set(ids) == {source_id for src, source_id in in_truth if src == source}


def test_pubmed_file_has_the_efetch_shape(pubmed: ET.Element) -> None:
    text = (SAMPLE / "pubmed" / "efetch.xml").read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC')
    kinds = Counter(element.tag for element in pubmed)
    assert set(kinds) == {"PubmedArticle", "PubmedBookArticle"} and kinds["PubmedBookArticle"] >= 1
    assert all(len(pmid_of(element)) == 8 for element in pubmed)
    labelled = [e for e in pubmed.iter("Abstract") if e.find("AbstractText[@Label]") is not None]
    assert labelled and all(t.get("NlmCategory") for a in labelled for t in a.findall("AbstractText"))
    assert pubmed.find(".//CollectiveName") is not None
    assert pubmed.find(".//ArticleTitle/sub") is not None and pubmed.find(".//AbstractText/sup") is not None
    types = {t.text for t in pubmed.iter("PublicationType")}
    assert "Published Erratum" in types
    titles = ["".join(element.find(".//ArticleTitle").itertext()) for element in pubmed]
    assert "Ozone." in titles and all(title.endswith(".") for title in titles)


def test_dedup_traps_are_present(truth: dict) -> None:
    works = {work["id"]: work for work in truth["works"]}
    relations = {(work["id"], rel["type"]): rel["work"] for work in works.values() for rel in work["relations"]}
    erratum = next(w for w in works.values() if w["kind"] == "erratum")
    assert relations[(erratum["id"], "erratum-for")] in works
    preprint = next(w for w in works.values() if w["kind"] == "preprint")
    journal_version = works[relations[(preprint["id"], "published-as")]]
    assert journal_version["doi"] != preprint["doi"]
    conference = next(w for w in works.values() if (w["id"], "extended-by") in relations)
    assert conference["kind"] == "conference-paper"
    assert works[relations[(conference["id"], "extended-by")]]["kind"] == "journal-article"
    by_title = Counter(work["title"].lower() for work in works.values())
    repeated = [title for title, count in by_title.items() if count > 1]
    assert repeated and len({w["year"] for w in works.values() if w["title"].lower() == repeated[0]}) == 2
    assert len([w for w in works.values() if len(w["title"].split()) <= 2]) >= 2


def test_sources_disagree_the_way_real_ones_do(pubmed: ET.Element) -> None:
    openalex = load("openalex/works.json")
    scopus = load("scopus/entries.json")
    assert all("abstract" not in work for work in openalex)
    assert any(work["abstract_inverted_index"] for work in openalex)
    assert all(work["doi"] is None or work["doi"].startswith("https://doi.org/") for work in openalex)
    assert any(work["doi"] is None for work in openalex)
    assert any(work["type"] == "preprint" for work in openalex)
    assert any(entry.get("prism:doi", "") != entry.get("prism:doi", "").lower() for entry in scopus)
    assert any("prism:doi" not in entry for entry in scopus)
    assert any("dc:description" not in entry and entry["subtype"] == "ar" for entry in scopus)
    assert {"ar", "re", "cp", "er"} <= {entry["subtype"] for entry in scopus}
    authnames = {author["authname"] for entry in scopus for author in entry["author"]}
    assert "Müller J." in authnames and "Gomez-Herrera M.J." in authnames
    raw_names = {a["raw_author_name"] for work in openalex if work["language"] == "zh" for a in work["authorships"]}
    assert "王芳" in raw_names


def test_every_doi_has_crossref_and_unpaywall_records(truth: dict) -> None:
    dois = {work["doi"] for work in truth["works"] if work["doi"]}
    messages = load("crossref/works.json")
    assert {message["DOI"] for message in messages} == dois
    assert all(isinstance(m["title"], list) and "date-parts" in m["issued"] for m in messages)
    unpaywall = {load(f"unpaywall/{path.name}")["doi"] for path in (SAMPLE / "unpaywall").glob("*.json")}
    assert unpaywall == dois


def test_retraction_is_rendered_the_way_each_source_shows_it(truth: dict, pubmed: ET.Element) -> None:
    works = {work["id"]: work for work in truth["works"]}
    relations = {(work["id"], rel["type"]): rel["work"] for work in works.values() for rel in work["relations"]}
    notice = next(work for work in works.values() if work["kind"] == "retraction")
    target = works[relations[(notice["id"], "retraction-for")]]
    assert relations[(target["id"], "has-retraction")] == notice["id"]
    assert target["kind"] == "journal-article" and notice["doi"] != target["doi"]
    assert notice["title"].lower().startswith("retraction") and target["title"] in notice["title"]
    assert notice["year"] >= target["year"]
    assert truth["retracted_dois"] == [target["doi"]]
    ids = {work["id"]: {r["source"]: r["source_id"] for r in work["records"]} for work in (notice, target)}
    assert {"pubmed", "openalex"} <= set(ids[target["id"]]) and "pubmed" in ids[notice["id"]]

    crossref = {message["DOI"]: message for message in load("crossref/works.json")}
    update_to = crossref[notice["doi"]]["update-to"]
    assert crossref[notice["doi"]]["type"] == "journal-article"
    assert [(u["DOI"], u["type"], u["label"]) for u in update_to] == [(target["doi"], "retraction", "Retraction")]
    updated_by = crossref[target["doi"]]["updated-by"]
    assert [(u["DOI"], u["type"], u["label"]) for u in updated_by] == [(notice["doi"], "retraction", "Retraction")]
    assert update_to[0]["updated"] == updated_by[0]["updated"] and "date-parts" in update_to[0]["updated"]
    retraction_links = [m for m in crossref.values() for u in m.get("updated-by", []) if u["type"] == "retraction"]
    assert [m["DOI"] for m in retraction_links] == truth["retracted_dois"]

    articles = {pmid_of(element): element for element in pubmed}
    notice_xml = articles[ids[notice["id"]]["pubmed"]]
    target_xml = articles[ids[target["id"]]["pubmed"]]

    def types(element: ET.Element) -> dict[str, str]:
        return {t.text: t.get("UI") for t in element.iter("PublicationType")}

    def links(element: ET.Element) -> list[tuple[str, str]]:
        return [(c.get("RefType"), c.findtext("PMID")) for c in element.iter("CommentsCorrections")]

    assert types(notice_xml) == {"Retraction of Publication": "D016441"}
    assert types(target_xml) == {"Journal Article": "D016428", "Retracted Publication": "D016440"}
    assert links(notice_xml) == [("RetractionOf", ids[target["id"]]["pubmed"])]
    assert links(target_xml) == [("RetractionIn", ids[notice["id"]]["pubmed"])]
    assert notice_xml.find(".//Abstract") is None
    target_title = "".join(target_xml.find(".//ArticleTitle").itertext())
    assert target_title == target["title"] + "." and not target_title.lower().startswith("retract")
    flagged = [pmid_of(e) for e in pubmed if "Retracted Publication" in {t.text for t in e.iter("PublicationType")}]
    assert flagged == [ids[target["id"]]["pubmed"]]

    openalex = {work["id"].rsplit("/", 1)[-1]: work for work in load("openalex/works.json")}
    assert all(isinstance(work["is_retracted"], bool) for work in openalex.values())
    assert [wid for wid, work in openalex.items() if work["is_retracted"]] == [ids[target["id"]]["openalex"]]
    if "openalex" in ids[notice["id"]]:
        rendered = openalex[ids[notice["id"]]["openalex"]]
        assert rendered["type"] == "retraction" and rendered["is_retracted"] is False
        assert rendered["referenced_works"] == [f"https://openalex.org/{ids[target['id']]['openalex']}"]


def test_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_sample.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    produced = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    committed = {Path("truth.json")} | {
        path.relative_to(SAMPLE)
        for folder in GENERATED_FOLDERS
        for path in (SAMPLE / folder).rglob("*")
        if path.is_file()
    }
    assert produced == committed
    for relative in produced:
        assert (tmp_path / relative).read_bytes() == (SAMPLE / relative).read_bytes(), relative


def test_harvest_file_names_the_sample_query(truth: dict) -> None:
    """The mirror answers this query with the whole sample; it must stay the declared sample query."""
    harvest = yaml.safe_load((SAMPLE / "harvest.yaml").read_text(encoding="utf-8"))
    spec = load_queries(ROOT / "config" / "queries.yaml")[truth["query"]]
    declared = {source: " ".join(spec.text_for(source).split()) for source in spec.sources}
    assert {source: " ".join(text.split()) for source, text in harvest.items()} == declared


def test_sample_stays_small() -> None:
    total = sum(path.stat().st_size for path in SAMPLE.rglob("*") if path.is_file())
    assert total < 1_500_000


# ----------------------------------------------------------------------------- full text


def test_pdf_expectations_cover_every_doi_with_the_known_statuses(truth: dict) -> None:
    statuses = truth["pdf_status"]
    assert set(statuses) == {work["doi"] for work in truth["works"] if work["doi"]}
    assert set(statuses.values()) == {
        "saved",
        "no_oa_location",
        "not_pdf",
        "too_large",
        "http_error",
        "timeout",
        "invalid_pdf",
    }


def test_every_unpaywall_link_stays_on_the_mirror() -> None:
    for path in (SAMPLE / "unpaywall").glob("*.json"):
        found = load(f"unpaywall/{path.name}")
        for location in [found["best_oa_location"], *found["oa_locations"]]:
            if location:
                links = [location["url"], location["url_for_pdf"]]
                assert all(link is None or link.startswith("{MIRROR}/files/") for link in links), path.name


def test_sample_pdfs_are_small_articles_with_the_layouts_a_parser_meets(truth: dict) -> None:
    pdfs = sorted((SAMPLE / "files").glob("*.pdf"))
    saved = [doi for doi, status in truth["pdf_status"].items() if status == "saved"]
    assert len(pdfs) >= 8 and len(saved) >= 8
    assert sum(path.stat().st_size for path in (SAMPLE / "files").iterdir()) < 1_500_000
    for path in pdfs:
        assert path.stat().st_size < 60_000, path.name
        data = path.read_bytes()
        if b"%%EOF" not in data[-1024:]:
            continue  # the planted truncated file
        pages = [page.extract_text() for page in PdfReader(path).pages]
        text = "\n".join(pages)
        for heading in ("1 Introduction", "2 Methods", "3 Results", "4 Discussion", "References", "Table 1."):
            assert heading in text, (path.name, heading)
        assert "(1)" in text and "(2)" in text and "[1] " in text
        assert len(pages) >= 2
        assert "\n10\n11\n12\n" in pages[0] and "\n10\n11\n12\n" not in pages[1]  # line-numbered margin


def test_pdf_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    pytest.importorskip("reportlab", reason="the sample extra (reportlab) builds the sample PDFs")
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_sample_pdfs.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    produced = {path.name: path.read_bytes() for path in (tmp_path / "files").iterdir()}
    committed = {path.name: path.read_bytes() for path in (SAMPLE / "files").iterdir()}
    assert produced.keys() == committed.keys()
    assert [name for name in produced if produced[name] != committed[name]] == []
