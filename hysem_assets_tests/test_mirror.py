"""The local mirror answers like the real APIs, over real HTTP on the loopback interface.

Full-snapshot paging uses the sample's harvest query (which selects every sample record);
the searches themselves are tested at the end and in hysem_assets_tests/mirror/.
"""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hysem_assets.mirror.server import (
    OVERSIZED_BYTES,
    SLOW_DRIP_INTERVAL_S,
    MirrorServer,
    Snapshot,
    bundled_snapshot_dirs,
    default_snapshot_dir,
)
from hysem_assets.sources.pubmed_xml import parse_esearch
from hysem_assets.sources.registry import mirrored

SAMPLE = default_snapshot_dir()
TRUTH = json.loads((SAMPLE / "truth.json").read_text(encoding="utf-8"))
EXPECTED = TRUTH["expected_counts"]
#: The query each source folder of the sample was harvested with: it selects the whole sample.
EVERYTHING = yaml.safe_load((SAMPLE / "harvest.yaml").read_text(encoding="utf-8"))
SECOND = next(path for path in bundled_snapshot_dirs() if path != SAMPLE)
SECOND_TRUTH = json.loads((SECOND / "truth.json").read_text(encoding="utf-8"))


def truth_ids(truth: dict, source: str) -> set[str]:
    return {r["source_id"] for work in truth["works"] for r in work["records"] if r["source"] == source}


def fetch(url: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(status, content type, body) of a GET, or of a form POST when ``data`` is given."""
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode("utf-8")


def get_json(url: str, headers: dict[str, str] | None = None) -> dict:
    status, _, body = fetch(url, headers=headers)
    assert status == 200, body
    return json.loads(body)


@pytest.fixture(scope="module")
def mirror() -> Iterator[MirrorServer]:
    with MirrorServer() as server:
        yield server


@pytest.fixture()
def sparse_snapshot(tmp_path: Path) -> Path:
    """A snapshot with only PubMed and a PDF: every other source is empty."""
    (tmp_path / "pubmed").mkdir()
    shutil.copy(SAMPLE / "pubmed" / "efetch.xml", tmp_path / "pubmed" / "efetch.xml")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "paper.pdf").write_bytes(b"%PDF-1.4\n%mirror test\n")
    return tmp_path


# ----------------------------------------------------------------------------- PubMed


def esearch(mirror: MirrorServer, **params: str) -> ET.Element:
    status, content_type, body = fetch(f"{mirror.base_urls['pubmed']}/esearch.fcgi?{urllib.parse.urlencode(params)}")
    assert status == 200 and content_type.startswith("text/xml"), body
    assert body.startswith('<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult')
    return ET.fromstring(body)


def efetch_pmids(body: str) -> list[str]:
    root = ET.fromstring(body)
    assert root.tag == "PubmedArticleSet"
    assert {child.tag for child in root} <= {"PubmedArticle", "PubmedBookArticle"}
    return [child.findtext("MedlineCitation/PMID") or child.findtext("BookDocument/PMID") for child in root]


def test_esearch_counts_every_record_and_pages_with_retstart(mirror: MirrorServer) -> None:
    everything = esearch(mirror, db="pubmed", term=EVERYTHING["pubmed"], retmax="100")
    all_ids = [element.text for element in everything.iter("Id")]
    assert everything.findtext("Count") == str(EXPECTED["pubmed"]) == str(len(all_ids))
    assert everything.findtext("QueryTranslation") == EVERYTHING["pubmed"]
    assert set(all_ids) == truth_ids(TRUTH, "pubmed")

    default_page = esearch(mirror, db="pubmed", term=EVERYTHING["pubmed"])
    assert default_page.findtext("RetMax") == "20" and len(default_page.findall("IdList/Id")) == 20

    pages = [
        esearch(mirror, db="pubmed", term=EVERYTHING["pubmed"], retstart=str(start), retmax="7")
        for start in range(0, EXPECTED["pubmed"], 7)
    ]
    paged = [element.text for page in pages for element in page.iter("Id")]
    assert paged == all_ids
    last_start = (EXPECTED["pubmed"] - 1) // 7 * 7
    assert pages[-1].findtext("RetStart") == str(last_start) and pages[-1].findtext("RetMax") == str(
        EXPECTED["pubmed"] - last_start
    )


def test_esearch_history_then_efetch_by_webenv_returns_every_record_once(mirror: MirrorServer) -> None:
    status, _, body = fetch(
        f"{mirror.base_urls['pubmed']}/esearch.fcgi",
        data={"db": "pubmed", "term": EVERYTHING["pubmed"], "usehistory": "y", "retmax": "0"},
    )
    assert status == 200
    search = ET.fromstring(body)
    webenv, query_key = search.findtext("WebEnv"), search.findtext("QueryKey")
    assert webenv.startswith("MCID_") and query_key == "1"
    assert search.find("IdList") is not None and not search.findall("IdList/Id")

    fetched: list[str] = []
    for start in range(0, EXPECTED["pubmed"], 12):
        params = {
            "db": "pubmed",
            "WebEnv": webenv,
            "query_key": query_key,
            "retstart": str(start),
            "retmax": "12",
            "retmode": "xml",
        }
        status, _, body = fetch(f"{mirror.base_urls['pubmed']}/efetch.fcgi?{urllib.parse.urlencode(params)}")
        assert status == 200
        assert body.startswith('<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet')
        fetched += efetch_pmids(body)
    expected = [r["source_id"] for work in TRUTH["works"] for r in work["records"] if r["source"] == "pubmed"]
    assert len(fetched) == len(set(fetched)) == EXPECTED["pubmed"]
    assert set(fetched) == set(expected)


def test_efetch_by_ids_keeps_the_requested_order_and_markup(mirror: MirrorServer) -> None:
    wanted = ["35405923", "35675501", "31002418"]  # journal article, book chapter, article with <sup>
    status, _, body = fetch(
        f"{mirror.base_urls['pubmed']}/efetch.fcgi",
        data={"db": "pubmed", "id": ",".join(wanted + ["99999999"]), "retmode": "xml"},
    )
    assert status == 200
    assert efetch_pmids(body) == wanted
    root = ET.fromstring(body)
    assert root[1].tag == "PubmedBookArticle"
    title = root[0].find("MedlineCitation/Article/ArticleTitle")
    assert title.find("sub").text == "2.5" and title.find("sub").tail.startswith(" thresholds")


def test_efetch_with_unknown_webenv_is_an_error_document(mirror: MirrorServer) -> None:
    status, _, body = fetch(f"{mirror.base_urls['pubmed']}/efetch.fcgi?db=pubmed&WebEnv=MCID_unknown&query_key=1")
    assert status == 400
    root = ET.fromstring(body)
    assert root.tag == "eFetchResult" and "Cannot retrieve history data" in root.findtext("ERROR")


def test_esearch_json_mode(mirror: MirrorServer) -> None:
    query = urllib.parse.urlencode({"term": EVERYTHING["pubmed"]})
    payload = get_json(
        f"{mirror.base_urls['pubmed']}/esearch.fcgi?db=pubmed&{query}&retmode=json&retmax=5&usehistory=y"
    )
    result = payload["esearchresult"]
    assert result["count"] == str(EXPECTED["pubmed"]) and len(result["idlist"]) == 5 and result["querykey"] == "1"
    assert "errorlist" not in result and "warninglist" not in result


# ----------------------------------------------------------------------------- OpenAlex


def test_openalex_cursor_paging_visits_every_work_exactly_once(mirror: MirrorServer) -> None:
    seen: list[str] = []
    cursor = "*"
    for _ in range(20):
        query = urllib.parse.urlencode({"search": EVERYTHING["openalex"], "per-page": 8, "cursor": cursor})
        page = get_json(f"{mirror.base_urls['openalex']}/works?{query}")
        assert page["meta"]["count"] == EXPECTED["openalex"] and page["meta"]["page"] is None
        assert page["group_by"] == []
        seen += [work["id"] for work in page["results"]]
        cursor = page["meta"]["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == EXPECTED["openalex"]
    assert {work_id.rsplit("/", 1)[-1] for work_id in seen} == truth_ids(TRUTH, "openalex")


def test_openalex_page_paging_limits_and_single_work(mirror: MirrorServer) -> None:
    base = mirror.base_urls["openalex"]
    search = urllib.parse.urlencode({"search": EVERYTHING["openalex"]})
    second = get_json(f"{base}/works?{search}&page=2&per-page=30&select=id,doi")
    assert second["meta"]["page"] == 2 and len(second["results"]) == EXPECTED["openalex"] - 30
    assert set(second["results"][0]) == {"id", "doi"}
    assert fetch(f"{base}/works?per-page=201")[0] == 400
    assert fetch(f"{base}/works?page=2&cursor=*")[0] == 400
    assert fetch(f"{base}/works?cursor=not-a-cursor")[0] == 400

    by_doi = get_json(f"{base}/works/https://doi.org/10.5555/JEC.2019.0312")
    assert by_doi["id"] == "https://openalex.org/W2935513720"
    assert get_json(f"{base}/works/W2935513720")["doi"] == "https://doi.org/10.5555/jec.2019.0312"
    assert fetch(f"{base}/works/W1")[0] == 404
    filtered = get_json(f"{base}/works?filter=doi:10.5555/jec.2019.0312|10.5555/ahi.2021.0307,is_oa:true")
    assert filtered["meta"]["count"] == 2


def test_openalex_pdf_placeholders_point_back_at_the_mirror(mirror: MirrorServer) -> None:
    work = get_json(f"{mirror.base_urls['openalex']}/works/W4296488851")
    assert work["best_oa_location"]["pdf_url"].startswith(f"{mirror.root_url}/files/")


# ----------------------------------------------------------------------------- Scopus


def test_scopus_pages_with_start_and_count(mirror: MirrorServer) -> None:
    headers = {"X-ELS-APIKey": "test-key", "Accept": "application/json"}
    eids: list[str] = []
    start = 0
    while True:
        query = urllib.parse.urlencode(
            {"query": f"{EVERYTHING['scopus']} AND PUBYEAR > 2014", "view": "COMPLETE", "count": 10, "start": start}
        )
        url = f"{mirror.base_urls['scopus']}/content/search/scopus?{query}"
        results = get_json(url, headers)["search-results"]
        assert results["opensearch:totalResults"] == str(EXPECTED["scopus"])
        assert results["opensearch:startIndex"] == str(start)
        eids += [entry["eid"] for entry in results["entry"]]
        refs = {link["@ref"]: link["@href"] for link in results["link"]}
        if "next" not in refs:
            break
        start = int(urllib.parse.parse_qs(urllib.parse.urlparse(refs["next"]).query)["start"][0])
    assert len(eids) == len(set(eids)) == EXPECTED["scopus"]
    assert set(eids) == truth_ids(TRUTH, "scopus")


def test_scopus_without_api_key_is_unauthorised(mirror: MirrorServer) -> None:
    status, content_type, body = fetch(f"{mirror.base_urls['scopus']}/content/search/scopus?query=x")
    assert status == 401 and content_type.startswith("application/json")
    assert json.loads(body)["service-error"]["status"]["statusCode"] == "AUTHENTICATION_ERROR"


def test_scopus_rejects_counts_above_the_service_level(mirror: MirrorServer) -> None:
    status, _, body = fetch(
        f"{mirror.base_urls['scopus']}/content/search/scopus?query=x&count=500", headers={"X-ELS-APIKey": "k"}
    )
    assert status == 400 and json.loads(body)["service-error"]["status"]["statusCode"] == "INVALID_INPUT"


def test_scopus_empty_result_set_has_the_real_shape(sparse_snapshot: Path) -> None:
    with MirrorServer(sparse_snapshot) as server:
        results = get_json(
            f"{server.base_urls['scopus']}/content/search/scopus?query=x", headers={"X-ELS-APIKey": "k"}
        )["search-results"]
    assert results["opensearch:totalResults"] == "0"
    assert results["entry"] == [{"@_fa": "true", "error": "Result set was empty"}]


# ----------------------------------------------------------------------------- Crossref, Unpaywall, files


def test_crossref_work_lookup_is_case_insensitive_and_404s_as_plain_text(mirror: MirrorServer) -> None:
    base = mirror.base_urls["crossref"]
    payload = get_json(f"{base}/works/10.5555/PCPH.2022.0611")
    assert payload["status"] == "ok" and payload["message-type"] == "work"
    assert payload["message"]["DOI"] == "10.5555/pcph.2022.0611"
    assert get_json(f"{base}/works/10.5555%2Fpcph.2022.0611")["message"]["DOI"] == "10.5555/pcph.2022.0611"
    assert fetch(f"{base}/works/10.5555/missing") == (404, "text/plain; charset=utf-8", "Resource not found.")


def test_unpaywall_object_and_404(mirror: MirrorServer) -> None:
    base = mirror.base_urls["unpaywall"]
    found = get_json(f"{base}/v2/10.9999/EER.2022.214?email=test@example.org")
    assert found["doi"] == "10.9999/eer.2022.214" and found["is_oa"] is True
    assert found["best_oa_location"]["url_for_pdf"] == f"{mirror.root_url}/files/10.9999_eer.2022.214.pdf"
    status, _, body = fetch(f"{base}/v2/10.5555/missing?email=test@example.org")
    assert status == 404
    assert json.loads(body) == {
        "HTTP_status_code": 404,
        "error": True,
        "message": "'10.5555/missing' is an invalid doi. See https://doi.org/10.5555/missing",
    }
    assert fetch(f"{base}/v2/10.9999/eer.2022.214")[0] == 422


def test_files_are_served_with_their_content_type(sparse_snapshot: Path) -> None:
    with MirrorServer(sparse_snapshot) as server:
        status, content_type, body = fetch(f"{server.root_url}/files/paper.pdf")
        assert (status, content_type) == (200, "application/pdf") and body.startswith("%PDF-")
        assert fetch(f"{server.root_url}/files/absent.pdf")[0] == 404
        assert fetch(f"{server.root_url}/files/..%2Fpubmed%2Fefetch.xml")[0] == 404


# ----------------------------------------------------------------------------- loading and lifecycle


def test_snapshot_accepts_api_pages_and_single_objects(tmp_path: Path) -> None:
    works = json.loads((SAMPLE / "openalex" / "works.json").read_text(encoding="utf-8"))
    entries = json.loads((SAMPLE / "scopus" / "entries.json").read_text(encoding="utf-8"))
    messages = json.loads((SAMPLE / "crossref" / "works.json").read_text(encoding="utf-8"))
    unpaywall = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((SAMPLE / "unpaywall").glob("*.json"))[:3]]
    files = {
        "openalex/page.json": {"meta": {"count": 2}, "results": works[:2], "group_by": []},
        "openalex/single.json": works[2],
        "scopus/page.json": {"search-results": {"opensearch:totalResults": "2", "entry": entries[:2]}},
        "crossref/one.json": {"status": "ok", "message-type": "work", "message": messages[0]},
        "crossref/list.json": {"status": "ok", "message-type": "work-list", "message": {"items": messages[1:3]}},
        "unpaywall/many.json": unpaywall,
    }
    for name, payload in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(json.dumps(payload), encoding="utf-8")
    snapshot = Snapshot.load(tmp_path)
    assert (len(snapshot.pubmed), len(snapshot.openalex), len(snapshot.scopus)) == (0, 3, 2)
    assert len(snapshot.crossref) == 3 and len(snapshot.unpaywall) == 3

    (tmp_path / "scopus" / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.json"):
        Snapshot.load(tmp_path)


def test_server_start_stop_without_context_manager(sparse_snapshot: Path) -> None:
    server = MirrorServer(sparse_snapshot).start()
    try:
        assert set(server.base_urls) == set(mirrored()), "the mirror answers for every mirrored source of the registry"
        assert server.base_urls["pubmed"] == f"{server.root_url}/pubmed/entrez/eutils"
        assert fetch(f"{server.base_urls['openalex']}/works")[0] == 200
    finally:
        server.stop()
    server.stop()
    with pytest.raises(RuntimeError):
        server.root_url


def test_command_line_serves_and_prints_the_base_urls() -> None:
    command = [sys.executable, "-m", "hysem_assets.mirror", "--port", "0"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE, text=True)
    try:
        lines = [process.stdout.readline().strip() for _ in range(7)]
        urls = dict(line.split() for line in lines[1:6])
        assert lines[0].startswith("Serving ") and set(urls) == {
            "pubmed",
            "openalex",
            "scopus",
            "crossref",
            "unpaywall",
        }
        assert fetch(f"{urls['crossref']}/works/10.5555/jec.2019.0312")[0] == 200
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)  # graceful shutdown can be slow on a loaded machine
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


# ----------------------------------------------------------------------------- download faults


def raw_get(mirror: MirrorServer, path: str, read: int) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and the first ``read`` bytes, without following redirects or reading to the end."""
    connection = http.client.HTTPConnection("127.0.0.1", mirror.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read(read) if read else b""
    finally:
        connection.close()


def test_oversized_route_streams_a_pdf_looking_body_without_a_length(mirror: MirrorServer) -> None:
    status, headers, body = raw_get(mirror, "/files/oversized/x.pdf", 1 << 20)
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    assert "Content-Length" not in headers and headers["Transfer-Encoding"] == "chunked"
    assert body.startswith(b"%PDF-") and len(body) == 1 << 20 and OVERSIZED_BYTES > 50 * 2**20


def test_loop_route_redirects_to_itself(mirror: MirrorServer) -> None:
    status, headers, _ = raw_get(mirror, "/files/loop/x.pdf", 0)
    assert (status, headers["Location"]) == (302, "/files/loop/x.pdf")


def test_slow_route_drips(mirror: MirrorServer) -> None:
    started = time.monotonic()
    status, headers, body = raw_get(mirror, "/files/slow/x.pdf", 12)
    assert status == 200 and headers["Content-Type"] == "application/pdf" and body.startswith(b"%PDF-")
    assert time.monotonic() - started >= 2 * SLOW_DRIP_INTERVAL_S


# ----------------------------------------------------------------------------- searches


def pubmed_ids(mirror: MirrorServer, term: str, **extra: str) -> list[str]:
    root = esearch(mirror, db="pubmed", term=term, retmax="500", **extra)
    ids = [element.text for element in root.iter("Id")]
    assert root.findtext("Count") == str(len(ids))
    return ids


def openalex_ids(mirror: MirrorServer, **params: str) -> list[str]:
    page = get_json(f"{mirror.base_urls['openalex']}/works?{urllib.parse.urlencode({'per-page': 200, **params})}")
    assert page["meta"]["count"] == len(page["results"])
    return [work["id"].rsplit("/", 1)[-1] for work in page["results"]]


def scopus_results(mirror: MirrorServer, query: str) -> dict:
    url = f"{mirror.base_urls['scopus']}/content/search/scopus?{urllib.parse.urlencode({'query': query, 'count': 200})}"
    return get_json(url, {"X-ELS-APIKey": "k"})["search-results"]


def scopus_ids(mirror: MirrorServer, query: str) -> list[str]:
    return [entry["eid"] for entry in scopus_results(mirror, query)["entry"] if "eid" in entry]


def test_the_default_mirror_serves_every_bundled_snapshot(mirror: MirrorServer) -> None:
    assert mirror.snapshot_dirs == bundled_snapshot_dirs() and mirror.snapshot_dirs[0] == SAMPLE
    everything = openalex_ids(mirror)  # no search: every work of every snapshot
    assert set(everything) == truth_ids(TRUTH, "openalex") | truth_ids(SECOND_TRUTH, "openalex")
    doi = next(work["doi"] for work in SECOND_TRUTH["works"] if work["doi"])
    assert get_json(f"{mirror.base_urls['crossref']}/works/{doi}")["message"]["DOI"] == doi
    saved = [name for name, status in SECOND_TRUTH["pdf_status"].items() if status == "saved"]
    status, headers, body = raw_get(mirror, f"/files/{saved[0].replace('/', '_')}.pdf", 5)
    assert (status, headers["Content-Type"], body) == (200, "application/pdf", b"%PDF-")


def test_different_queries_select_different_works_in_every_source(mirror: MirrorServer) -> None:
    first = {
        "pubmed": pubmed_ids(mirror, "ozone[tiab]"),
        "openalex": openalex_ids(mirror, search="ozone"),
        "scopus": scopus_ids(mirror, "TITLE-ABS-KEY(ozone)"),
    }
    second = {
        "pubmed": pubmed_ids(mirror, "statin*[tiab] AND dementia[tiab]"),
        "openalex": openalex_ids(mirror, search="statin dementia"),
        "scopus": scopus_ids(mirror, "TITLE-ABS-KEY(statin* AND dementia)"),
    }
    for source in ("pubmed", "openalex", "scopus"):
        assert first[source] and second[source] and not set(first[source]) & set(second[source]), source
        assert set(first[source]) < truth_ids(TRUTH, source), source
        assert set(second[source]) < truth_ids(SECOND_TRUTH, source), source


def test_operators_tags_and_filters_narrow_the_selection(mirror: MirrorServer) -> None:
    ozone = set(pubmed_ids(mirror, "ozone[tiab]"))
    assert set(pubmed_ids(mirror, "ozone[tiab] NOT stroke[tiab]")) < ozone
    assert set(pubmed_ids(mirror, "ozone[ti]")) < ozone
    assert set(pubmed_ids(mirror, "ozone[tiab] OR statin*[tiab]")) > ozone
    dated = pubmed_ids(mirror, "ozone[tiab]", datetype="pdat", mindate="2024/01/01", maxdate="2024/12/31")
    assert set(dated) == ozone  # date limits are not evaluated

    by_title = set(openalex_ids(mirror, filter="title.search:ozone"))
    anywhere = set(openalex_ids(mirror, search="ozone"))
    assert by_title < anywhere
    assert set(openalex_ids(mirror, filter="title_and_abstract.search:ozone,from_publication_date:2015-01-01")) == (
        anywhere
    )
    assert set(openalex_ids(mirror, **{"search.exact": "statins"})) < set(openalex_ids(mirror, search="statins"))
    assert fetch(f"{mirror.base_urls['openalex']}/works?search=a&search.exact=b")[0] == 400

    everything = set(scopus_ids(mirror, "TITLE-ABS-KEY(ozone)"))
    assert set(scopus_ids(mirror, "TITLE-ABS-KEY(ozone) AND NOT TITLE(ozone)")) < everything


def test_a_query_that_does_not_parse_still_answers(mirror: MirrorServer) -> None:
    assert pubmed_ids(mirror, "(statin*[tiab] AND dementia[tiab]")
    assert openalex_ids(mirror, search='"statin dementia')
    assert scopus_ids(mirror, "TITLE-ABS-KEY((statin AND dementia)")


def test_pubmed_finds_nothing_the_way_e_utilities_says_so(mirror: MirrorServer) -> None:
    status, _, body = fetch(
        f"{mirror.base_urls['pubmed']}/esearch.fcgi",
        data={"db": "pubmed", "term": 'zqxwv[tiab] AND "heart of glass"', "usehistory": "y"},
    )
    assert status == 200
    root = ET.fromstring(body)
    assert (root.findtext("Count"), root.findtext("RetMax")) == ("0", "0")
    assert root.find("IdList") is not None and not root.findall("IdList/Id")
    assert [e.text for e in root.iterfind("ErrorList/PhraseNotFound")] == ["zqxwv"]
    assert [e.text for e in root.iterfind("WarningList/QuotedPhraseNotFound")] == ['"heart of glass"']
    assert [e.text for e in root.iterfind("WarningList/OutputMessage")] == ["No items found."]
    parsed = parse_esearch(body.encode())  # the production client reads it as zero results, not an error
    assert parsed.count == 0 and parsed.ids == [] and "PhraseNotFound: zqxwv" in parsed.warnings

    fetched = fetch(
        f"{mirror.base_urls['pubmed']}/efetch.fcgi?db=pubmed&retmode=xml&query_key=1&WebEnv={parsed.webenv}"
    )
    assert fetched[0] == 200 and efetch_pmids(fetched[2]) == []

    payload = get_json(f"{mirror.base_urls['pubmed']}/esearch.fcgi?db=pubmed&term=zqxwv&retmode=json")
    result = payload["esearchresult"]
    assert (result["count"], result["idlist"]) == ("0", [])
    assert result["errorlist"] == {"phrasesnotfound": ["zqxwv"], "fieldsnotfound": []}
    assert result["warninglist"]["outputmessages"] == ["No items found."]
    # words that exist, in no record together: no PhraseNotFound, just no items
    both = ET.fromstring(fetch(f"{mirror.base_urls['pubmed']}/esearch.fcgi?db=pubmed&term=ozone+AND+statin")[2])
    assert both.findtext("Count") == "0" and both.find("ErrorList") is None
    assert both.findtext("WarningList/OutputMessage") == "No items found."


def test_openalex_finds_nothing_with_an_empty_page(mirror: MirrorServer) -> None:
    base = mirror.base_urls["openalex"]
    for paging in ("cursor=*", "page=1"):
        page = get_json(f"{base}/works?search=zqxwv&{paging}")
        assert page["results"] == [] and page["group_by"] == []
        assert page["meta"]["count"] == 0 and page["meta"]["next_cursor"] is None
    assert get_json(f"{base}/works?search=zqxwv&page=1")["meta"]["page"] == 1


def test_scopus_finds_nothing_with_its_empty_result_entry(mirror: MirrorServer) -> None:
    results = scopus_results(mirror, "TITLE-ABS-KEY(zqxwv)")
    assert results["opensearch:totalResults"] == "0" and results["opensearch:itemsPerPage"] == "0"
    assert results["entry"] == [{"@_fa": "true", "error": "Result set was empty"}]
    assert {link["@ref"] for link in results["link"]} == {"self", "first"}


def test_the_days_records_were_added_select_a_re_search(mirror: MirrorServer) -> None:
    """PubMed's Entrez date and OpenAlex's creation date are evaluated; Scopus's load date cannot be."""
    statins = set(pubmed_ids(mirror, "statin*[tiab] AND dementia[tiab]"))
    since_2024 = set(pubmed_ids(mirror, "statin*[tiab] AND dementia[tiab]", datetype="edat", mindate="2024/01/01"))
    assert since_2024 and since_2024 < statins
    in_2023 = pubmed_ids(mirror, "statin*[tiab]", datetype="edat", mindate="2023/01/01", maxdate="2023/12/31")
    assert in_2023 and not set(in_2023) & since_2024
    assert pubmed_ids(mirror, "statin*[tiab]", datetype="edat", mindate="2999/01/01") == []

    everything = set(openalex_ids(mirror, search="statin dementia"))
    created = set(openalex_ids(mirror, search="statin dementia", filter="from_created_date:2024-01-01"))
    before = set(openalex_ids(mirror, search="statin dementia", filter="to_created_date:2023-12-31"))
    assert created and before and created | before == everything and not created & before
    assert fetch(f"{mirror.base_urls['openalex']}/works?filter=from_created_date:soon")[0] == 400

    loaded = "TITLE-ABS-KEY(statin* AND dementia) AND ORIG-LOAD-DATE AFT 20991231"
    assert set(scopus_ids(mirror, loaded)) == set(scopus_ids(mirror, "TITLE-ABS-KEY(statin* AND dementia)"))
