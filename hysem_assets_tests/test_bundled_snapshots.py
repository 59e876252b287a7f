"""The bundled snapshots: which works each query selects, and the second snapshot's own contract.

The sample's query must keep selecting every sample record (the demo and many tests count on
it), the second snapshot's recommended query must select exactly its works by evaluation
alone, and neither query may reach into the other snapshot.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

from hysem_assets.mirror.search import compile_query
from hysem_assets.mirror.server import MirrorServer, Snapshot, bundled_snapshot_dirs, default_snapshot_dir
from hysem_assets.settings.queries import load_queries
from hysem_assets.sources import openalex, pubmed, scopus
from hysem_assets.sources.base import Endpoint
from hysem_assets_tests.paths import PROJECT_ROOT

SAMPLE = default_snapshot_dir()
PACKAGE = SAMPLE.parent
STATINS = PACKAGE / "snapshots" / "statins_dementia"
SOURCES = ("pubmed", "openalex", "scopus")
SAMPLE_SLUG = "air-pollution-cardio-ml"
RECOMMENDED = yaml.safe_load((STATINS / "harvest.yaml").read_text(encoding="utf-8"))
DESIGNS = {
    "randomised controlled trial",
    "non-randomised trial",
    "cohort study",
    "case-control study",
    "cross-sectional study",
    "case series or case report",
    "systematic review or meta-analysis",
    "Mendelian randomisation study",
    "qualitative study",
    "narrative review or editorial",
    "other",
}


def load(folder: Path, relative: str):
    return json.loads((folder / relative).read_text(encoding="utf-8"))


def truth_ids(folder: Path, source: str) -> set[str]:
    truth = load(folder, "truth.json")
    return {r["source_id"] for work in truth["works"] for r in work["records"] if r["source"] == source}


@pytest.fixture(scope="module")
def mirror() -> Iterator[MirrorServer]:
    with MirrorServer() as server:
        yield server


def get(url: str, headers: dict[str, str] | None = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
        return response.read()


def selected(mirror: MirrorServer, source: str, text: str, date_from=None, date_to=None) -> list[str]:
    """Ids a source returns for ``text``, requested with the production clients' own parameters."""
    spec = load_queries(PROJECT_ROOT / "config" / "queries.yaml")[SAMPLE_SLUG].model_copy(
        update={"query": {source: text}, "date_from": date_from, "date_to": date_to}
    )
    endpoint = Endpoint(source, mirror.base_urls[source], 100, 4, 200, api_key="k", mailto="test@example.org")
    if source == "pubmed":
        params = {**pubmed.search_params(spec, endpoint), "usehistory": "n", "retmax": "10000"}
        root = ET.fromstring(get(f"{endpoint.base_url}/esearch.fcgi?{urllib.parse.urlencode(params)}"))
        return [element.text or "" for element in root.iter("Id")]
    if source == "openalex":
        params = {**openalex.search_params(spec, endpoint), "per-page": "200"}
        page = json.loads(get(f"{endpoint.base_url}/works?{urllib.parse.urlencode(params)}"))
        return [work["id"].rsplit("/", 1)[-1] for work in page["results"]]
    params = {"query": scopus.search_query(spec), "count": "200"}
    url = f"{endpoint.base_url}/content/search/scopus?{urllib.parse.urlencode(params)}"
    entries = json.loads(get(url, scopus.request_headers(endpoint)))["search-results"]["entry"]
    return [entry["eid"] for entry in entries if "eid" in entry]


# ----------------------------------------------------------------------------- what the queries select


def test_the_default_mirror_serves_the_sample_and_every_further_snapshot() -> None:
    assert bundled_snapshot_dirs() == [SAMPLE, STATINS]


@pytest.mark.parametrize("source", SOURCES)
def test_the_sample_query_still_selects_the_whole_sample_and_nothing_else(mirror: MirrorServer, source: str) -> None:
    spec = load_queries(PROJECT_ROOT / "config" / "queries.yaml")[SAMPLE_SLUG]
    ids = selected(mirror, source, spec.text_for(source), spec.date_from, spec.date_to)
    assert len(ids) == len(set(ids)) and set(ids) == truth_ids(SAMPLE, source)


@pytest.mark.parametrize("source", SOURCES)
def test_the_recommended_query_selects_exactly_the_second_snapshot(mirror: MirrorServer, source: str) -> None:
    ids = selected(mirror, source, RECOMMENDED[source])
    assert len(ids) == len(set(ids)) and set(ids) == truth_ids(STATINS, source)


@pytest.mark.parametrize("source", SOURCES)
def test_evaluation_alone_keeps_the_two_subjects_apart(source: str) -> None:
    """Without the harvest files: the recommended query finds all of its snapshot, the sample query none of it."""
    snapshot = Snapshot.load([SAMPLE, STATINS])
    snapshot.harvests = {name: [] for name in snapshot.harvests}
    keys = {"pubmed": lambda k: k, "openalex": lambda k: snapshot.openalex[k]["id"].rsplit("/", 1)[-1]}
    key = keys.get(source, lambda k: snapshot.scopus[k]["eid"])
    recommended = {key(k) for k in snapshot.search(source, compile_query(RECOMMENDED[source], source).node)}
    assert recommended == truth_ids(STATINS, source)
    sample_query = load_queries(PROJECT_ROOT / "config" / "queries.yaml")[SAMPLE_SLUG].text_for(source)
    found = {key(k) for k in snapshot.search(source, compile_query(sample_query, source).node)}
    assert found and found <= truth_ids(SAMPLE, source)  # what evaluation finds is sample work only


def test_the_harvest_query_is_recognised_whatever_its_spacing_and_date_limits() -> None:
    snapshot = Snapshot.load(SAMPLE)
    respaced = " ".join(RECOMMENDED["scopus"].split())  # another snapshot's query: no harvest here
    assert snapshot.search("scopus", compile_query(respaced, "scopus").node) == set()
    harvested = yaml.safe_load((SAMPLE / "harvest.yaml").read_text(encoding="utf-8"))["scopus"]
    dated = f"{' '.join(harvested.split())} AND PUBYEAR > 2014 AND PUBYEAR < 2026"
    assert len(snapshot.search("scopus", compile_query(dated, "scopus").node)) == len(snapshot.scopus)
    reordered = "machine learning air pollution cardiovascular"  # same words, another query: evaluated
    assert len(snapshot.search("openalex", compile_query(reordered, "openalex").node)) < len(snapshot.openalex)


def test_a_malformed_harvest_file_names_itself(tmp_path: Path) -> None:
    (tmp_path / "harvest.yaml").write_text("embase: statins\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"harvest\.yaml: unknown source 'embase'"):
        Snapshot.load(tmp_path)


# ----------------------------------------------------------------------------- the second snapshot


@pytest.fixture(scope="module")
def truth() -> dict:
    return load(STATINS, "truth.json")


@pytest.fixture(scope="module")
def fields() -> dict:
    return load(STATINS, "fields_truth.json")


@pytest.fixture(scope="module")
def articles() -> dict:
    return {a["id"]: a for a in yaml.safe_load((STATINS / "articles.yaml").read_text(encoding="utf-8"))["articles"]}


def abstract_text(article: dict) -> str:
    abstract = article.get("abstract") or ""
    return abstract if isinstance(abstract, str) else " ".join(abstract.values())


def test_size_and_overlap_across_sources(truth: dict) -> None:
    works = truth["works"]
    assert truth["query"] == "statins-dementia" and 18 <= len(works) == truth["unique_works"] <= 24
    spread = Counter(len(work["records"]) for work in works)
    assert spread[3] >= 8 and spread[2] >= 8 and spread[1] >= 1
    counts = truth["expected_counts"]
    assert (counts["pubmed"], counts["openalex"], counts["scopus"]) == (19, 20, 14)
    rendered = {
        "pubmed": [e.findtext(".//PMID") for e in ET.parse(STATINS / "pubmed" / "efetch.xml").getroot()],
        "openalex": [w["id"].rsplit("/", 1)[-1] for w in load(STATINS, "openalex/works.json")],
        "scopus": [e["eid"] for e in load(STATINS, "scopus/entries.json")],
    }
    for source, ids in rendered.items():
        assert len(ids) == len(set(ids)) == counts[source] and set(ids) == truth_ids(STATINS, source)
    sample_dois = {work["doi"] for work in load(SAMPLE, "truth.json")["works"]}
    assert not sample_dois & {work["doi"] for work in works}


def test_records_have_the_real_formats_and_the_disagreements_dedup_must_handle(truth: dict) -> None:
    text = (STATINS / "pubmed" / "efetch.xml").read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC')
    pubmed_set = ET.fromstring(text)
    assert all(len(e.findtext(".//PMID") or "") == 8 for e in pubmed_set)
    abstracts = [e.find(".//Abstract") for e in pubmed_set]
    assert any(a is not None and a.find("AbstractText[@Label]") is not None for a in abstracts)  # structured
    assert any(a is not None and a.find("AbstractText[@Label]") is None for a in abstracts)  # plain
    assert any(a is None for a in abstracts)  # the editorial
    assert all(e.find(".//ArticleIdList/ArticleId[@IdType='doi']") is not None for e in pubmed_set)
    assert pubmed_set.find(".//MeshHeading/DescriptorName") is not None
    assert any(title.text.startswith("[") for title in pubmed_set.iter("ArticleTitle"))  # a translated title

    works = load(STATINS, "openalex/works.json")
    assert all("abstract" not in work for work in works) and all(work["abstract_inverted_index"] for work in works[:5])
    assert any(work["doi"] is None for work in works)
    assert {work["primary_topic"]["display_name"] for work in works} == {"Dementia and Cognitive Impairment Research"}
    entries = load(STATINS, "scopus/entries.json")
    assert any("prism:doi" not in entry for entry in entries)
    assert any(entry.get("prism:doi", "").isupper() for entry in entries)
    assert any("dc:description" not in entry for entry in entries) and any("dc:description" in e for e in entries)
    assert {"ar", "re", "cp"} <= {entry["subtype"] for entry in entries}

    dois = {work["doi"] for work in truth["works"] if work["doi"]}
    assert {message["DOI"] for message in load(STATINS, "crossref/works.json")} == dois
    unpaywall = [load(STATINS, f"unpaywall/{path.name}") for path in (STATINS / "unpaywall").glob("*.json")]
    assert {item["doi"] for item in unpaywall} == dois
    links = [loc[key] for item in unpaywall for loc in item["oa_locations"] for key in ("url", "url_for_pdf")]
    assert all(link is None or link.startswith("{MIRROR}/files/") for link in links)


def test_abstracts_vary_the_way_real_ones_report_numbers(articles: dict) -> None:
    text = " ".join(abstract_text(article) for article in articles.values())
    for phrase in (
        "n = 612",
        "3.4 million",
        "12 045 participants",
        "a total of 812 women",
        "median follow-up of 6.2 years",
        "over 10 years",
        "HR 0.83, 95% CI 0.76–0.91",
        "OR = 1.12 (0.95, 1.31)",
        "RR 0.79 [0.68 to 0.92]",
        "compared with non-users",
        "memory clinics",
        "primary care",
        "community-dwelling adults aged 65 years or older",
        "patients with hypercholesterolaemia",
    ):
        assert phrase.lower() in text.lower(), phrase


def test_the_field_truth_covers_every_work_with_valid_values(truth: dict, fields: dict) -> None:
    labelled = fields["works"]
    assert set(labelled) == {work["id"] for work in truth["works"]}
    assert set(fields["study_designs"]) == DESIGNS
    required = DESIGNS - {"other"}
    assert required <= {work["study_design"] for work in labelled.values()}
    for work_id, work in labelled.items():
        assert set(work) == {"doi", "title", *fields["fields"]}, work_id
        assert work["study_design"] in DESIGNS, work_id
        assert work["sample_size"] is None or (isinstance(work["sample_size"], int) and work["sample_size"] > 0)
        assert work["follow_up"] is None or isinstance(work["follow_up"], (int, float)), work_id
        assert isinstance(work["intervention_or_exposure"], list) and isinstance(work["outcomes"], list), work_id
        for key in ("population", "comparator", "setting"):
            assert work[key] is None or (isinstance(work[key], str) and work[key]), (work_id, key)
        for estimate in work["effect_estimates"]:
            assert set(estimate) == {"measure", "value", "ci_lower", "ci_upper"}, work_id
            assert estimate["measure"] in fields["measures"], work_id
            assert estimate["ci_lower"] <= estimate["value"] <= estimate["ci_upper"], work_id
    reviews = [w for w in labelled.values() if w["study_design"] == "narrative review or editorial"]
    assert reviews and all(w["sample_size"] is None and not w["effect_estimates"] for w in reviews)
    assert any(w["sample_size"] is None for w in labelled.values())


#: Counts the abstracts spell out in words, as real ones do at the start of a sentence.
SPELLED = {"five": 5, "forty-eight": 48}


def numbers(text: str) -> set[float]:
    found = {abs(float(match)) for match in re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))}
    return found | {value for word, value in SPELLED.items() if re.search(rf"\b{word}\b", text, re.IGNORECASE)}


def test_every_labelled_number_is_in_its_work_s_abstract(fields: dict, articles: dict) -> None:
    """A check on the hand labels: estimates and sample sizes are what the abstract says."""
    for work_id, work in fields["works"].items():
        text = abstract_text(articles[work_id])
        found = numbers(text)
        for estimate in work["effect_estimates"]:
            for key in ("value", "ci_lower", "ci_upper"):
                assert abs(estimate[key]) in found, (work_id, key, estimate)
        size = work["sample_size"]
        if size is not None:
            spelled = re.sub(r"(\d) (\d{3})\b", r"\1\2", text.replace(",", ""))
            million = f"{size / 1_000_000:g} million" in text
            sums = {a + b for a in numbers(spelled) for b in numbers(spelled)}
            assert million or size in numbers(spelled) or size in sums, (work_id, size)


def test_the_pdfs_are_articles_on_their_own_subject(truth: dict) -> None:
    saved = sorted(doi for doi, status in truth["pdf_status"].items() if status == "saved")
    pdfs = sorted((STATINS / "files").glob("*.pdf"))
    assert len(saved) == len(pdfs) == 3
    assert set(truth["pdf_status"].values()) == {"saved", "no_oa_location", "not_pdf"}
    titles = {work["doi"]: work["title"] for work in truth["works"]}
    for doi in saved:
        path = STATINS / "files" / f"{doi.replace('/', '_')}.pdf"
        assert path.stat().st_size < 60_000
        text = "\n".join(page.extract_text() for page in PdfReader(path).pages)
        assert " ".join(titles[doi].split()[:4]) in " ".join(text.split())
        for heading in ("Abstract", "1 Introduction", "2 Methods", "3 Results", "Table 1.", "References", "[1] "):
            assert heading in text, (doi, heading)
        assert "air pollution" not in text.lower()


def test_the_generators_reproduce_the_committed_files(tmp_path: Path) -> None:
    source = STATINS / "articles.yaml"
    scripts = PROJECT_ROOT / "scripts"
    commands = [[sys.executable, str(scripts / "build_sample.py"), "--source", str(source), "--out", str(tmp_path)]]
    try:
        import reportlab  # noqa: F401
    except ImportError:
        pass  # the sample extra (reportlab) builds the PDFs; the API files are still compared
    else:
        commands.append(
            [sys.executable, str(scripts / "build_sample_pdfs.py"), "--source", str(source), "--out", str(tmp_path)]
        )
    for command in commands:
        completed = subprocess.run(command, capture_output=True, text=True, check=False)
        assert completed.returncode == 0, completed.stderr
    produced = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    assert produced
    for relative in produced:
        assert (tmp_path / relative).read_bytes() == (STATINS / relative).read_bytes(), relative
    committed_api = {
        p.relative_to(STATINS) for d in SOURCES + ("crossref", "unpaywall") for p in (STATINS / d).glob("*")
    }
    assert committed_api <= produced


def test_package_data_ships_every_bundled_snapshot_file() -> None:
    settings = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = settings["tool"]["setuptools"]["package-data"]["hysem_assets"]
    shipped = {path for pattern in patterns for path in PACKAGE.glob(pattern) if path.is_file()}
    bundled = {path for folder in bundled_snapshot_dirs() for path in folder.rglob("*") if path.is_file()}
    assert bundled and not bundled - shipped, sorted(str(p.relative_to(PACKAGE)) for p in bundled - shipped)
