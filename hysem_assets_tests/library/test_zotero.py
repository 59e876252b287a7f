"""The Zotero writer, through pyzotero, against a Zotero Web API v3 look-alike on loopback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hysem_assets.library.csl import render_citations, to_csl_item
from hysem_assets.library.zotero import (
    MAX_BATCH,
    ZoteroError,
    ZoteroLibrary,
    create_items,
    find_existing,
    sync_library,
    to_zotero_item,
    with_zotero_fallback,
    zotero_citation,
)
from hysem_assets_tests.library.corpus import sample_corpus, synthetic_corpus
from hysem_assets_tests.library.zotero_server import ZoteroServer

API_KEY = "P9NiFoyLeZu2bZNvvuQPDWsd"
ROMANO = "c-480b6032ca8d"


@pytest.fixture
def server():
    with ZoteroServer(API_KEY) as running:
        yield running


@pytest.fixture
def library(server: ZoteroServer) -> ZoteroLibrary:
    return ZoteroLibrary("475425", "user", API_KEY, base_url=server.url)


def pdf(directory: Path, name: str) -> Path:
    path = directory / f"{name}.pdf"
    path.write_bytes(b"%PDF-1.4\n% " + name.encode() * 200 + b"\n%%EOF\n")
    return path


def leaks(value: object) -> bool:
    """Whether the API key shows up in a value, or anywhere along an exception's chain."""
    while value is not None:
        if API_KEY in str(value) or API_KEY in repr(value):
            return True
        value = (value.__cause__ or value.__context__) if isinstance(value, BaseException) else None
    return False


def test_zotero_item_templates_per_kind():
    rows = sample_corpus().to_dict("records")
    article, chapter, preprint, conference = (to_zotero_item(rows[i]) for i in (0, 2, 3, 4))
    assert article == {
        "itemType": "journalArticle",
        "creators": [
            {"creatorType": "author", "lastName": "Romano", "firstName": "Chiara"},
            {"creatorType": "author", "lastName": "Brunner", "firstName": "Lukas"},
            {"creatorType": "author", "lastName": "Keller", "firstName": "Anna"},
        ],
        "title": "Multi-pollutant exposure and subclinical atherosclerosis: elastic net and LASSO regularised "
        "regression in a Swiss cohort",
        "abstractNote": "BACKGROUND: Carotid intima-media thickness.\n\nMETHODS: 4,402 adults; 95% CI & more.",
        "publicationTitle": "Journal of environmental cardiology",
        "volume": "18",
        "issue": "1",
        "pages": "22-35",
        "date": "2025",
        "language": "en",
        "DOI": "10.5555/jec.2025.0103",
        "extra": "PMID: 39874511\nhysem-cluster: c-480b6032ca8d",
    }
    assert chapter["itemType"] == "bookSection"
    assert chapter["bookTitle"] == "Air Pollution and the Heart: A Clinical Compendium"
    assert (preprint["itemType"], preprint["repository"]) == ("preprint", "HealthRxiv")
    assert preprint["url"] == "https://example.org/hrx.pdf"
    assert (conference["itemType"], conference["pages"]) == ("conferencePaper", "77-84")
    assert "issue" not in conference
    collective = to_zotero_item(rows[1])["creators"][0]
    assert collective == {"creatorType": "author", "name": "European Environmental Cardiology Working Group"}
    chapter_with_doi = to_zotero_item(rows[2] | {"doi": "10.5555/chapter.7"})
    assert "DOI" not in chapter_with_doi  # bookSection has no DOI field: Zotero reads it from extra
    assert chapter_with_doi["extra"] == "DOI: 10.5555/chapter.7\nPMID: 35675501\nhysem-cluster: c-66027d8cf906"


def test_items_are_created_in_batches_of_at_most_fifty(server, library):
    result = sync_library(library, synthetic_corpus(120))
    posts = server.posts_to_items()
    assert [len(post.body) for post in posts] == [50, 50, 20]
    assert len({post.headers["Zotero-Write-Token"] for post in posts}) == 3
    assert all(post.headers["Authorization"] == f"Bearer {API_KEY}" for post in posts)
    assert all(post.headers["Zotero-API-Version"] == "3" for post in posts)
    assert len(result.created) == 120 and result.found == [] and result.failures == {}
    assert len(set(result.keys.values())) == 120 == len(server.items)
    with pytest.raises(ValueError, match="between 1 and 50"):
        create_items(library, {}, batch_size=MAX_BATCH + 1)


def test_a_rerun_creates_nothing_twice(server, library):
    corpus = sample_corpus()
    first = sync_library(library, corpus)
    posts_after_first = len(server.posts_to_items())
    second = sync_library(library, corpus)
    assert len(first.created) == 6
    assert second.created == [] and sorted(second.found) == sorted(corpus["cluster_id"])
    assert second.keys == first.keys
    assert len(server.posts_to_items()) == posts_after_first
    assert len(server.items) == 6
    # a rerun finds its own items by the cluster id in extra, with one search each
    searches = [r.query for r in server.requests if r.method == "GET" and r.path.endswith("/items")]
    assert sorted(query["q"] for query in searches[-6:]) == sorted(corpus["cluster_id"])
    assert {query["qmode"] for query in searches} == {"everything"}


def test_an_item_written_before_its_work_had_a_doi_is_found_by_cluster_id(library):
    corpus = sample_corpus().iloc[[0]]
    earlier = sync_library(library, corpus.assign(doi=None))
    later = sync_library(library, corpus)
    assert later.created == [] and later.keys == earlier.keys


def test_an_item_already_in_the_library_is_found_by_its_doi(library):
    keys, _ = create_items(
        library,
        {
            "by-hand": {
                "itemType": "journalArticle",
                "title": "Added by hand",
                "DOI": "https://doi.org/10.5555/JEC.2025.0103",
                "creators": [],
            }
        },
    )
    result = sync_library(library, sample_corpus().iloc[[0]])
    assert result.found == [ROMANO] and result.created == []
    assert result.keys[ROMANO] == keys["by-hand"]


def test_a_rejected_item_keeps_its_reason_and_the_rest_go_on(server, library):
    server.reject = lambda data: (413, "Title too long") if data.get("title") == "Synthetic study number 7" else None
    corpus = synthetic_corpus(60)
    result = sync_library(library, corpus)
    rejected = corpus["cluster_id"][7]
    assert result.failures == {rejected: "Zotero rejected the item (HTTP 413): Title too long"}
    assert len(result.created) == 59 and rejected not in result.keys
    server.reject = None
    assert sync_library(library, corpus).created == [rejected]


def test_a_failed_batch_keeps_its_reason_without_the_api_key(server, library):
    server.failures.append(("POST", f"{server.prefix}/items", 500))
    corpus = synthetic_corpus(70)
    result = sync_library(library, corpus)
    first_batch = list(corpus["cluster_id"][:50])
    assert sorted(result.failures) == sorted(first_batch)
    assert len(result.created) == 20
    reason = result.failures[first_batch[0]]
    assert "HTTPError" in reason and "Code: 500" in reason and "***" in reason
    assert not leaks(result)
    assert sorted(sync_library(library, corpus).created) == sorted(first_batch)


def test_pdfs_are_uploaded_through_the_zotero_file_flow(server, library, tmp_path):
    corpus = sample_corpus()
    pdfs = {cluster_id: pdf(tmp_path, cluster_id) for cluster_id in corpus["cluster_id"][:4]}
    result = sync_library(library, corpus, pdfs)
    assert result.failures == {} and sorted(result.attachments) == sorted(pdfs)
    for cluster_id, path in pdfs.items():
        attachment = server.items[result.attachments[cluster_id]]["data"]
        assert server.files[attachment["key"]] == path.read_bytes()
        assert attachment["parentItem"] == result.keys[cluster_id]
        assert (attachment["itemType"], attachment["linkMode"], attachment["contentType"]) == (
            "attachment",
            "imported_file",
            "application/pdf",
        )
        assert (attachment["filename"], attachment["title"]) == (path.name, "Full Text PDF")
        assert attachment["md5"] == hashlib.md5(path.read_bytes()).hexdigest()
    file_steps = [r for r in server.requests if r.path.endswith(f"/items/{result.attachments[ROMANO]}/file")]
    authorization, registration = file_steps
    assert authorization.headers["If-None-Match"] == "*"
    assert authorization.body["filename"] == f"{ROMANO}.pdf" and authorization.body["params"] == "1"
    assert authorization.body["filesize"] == str(pdfs[ROMANO].stat().st_size)
    assert registration.body == {"upload": registration.body["upload"]} and registration.body["upload"]
    uploads = [r for r in server.requests if r.path == "/storage/upload"]
    assert len(uploads) == 4 and uploads[0].body["acl"] == "bucket-owner-full-control"
    assert all("Authorization" not in r.headers for r in uploads)  # the key stays with the API

    again = sync_library(library, corpus, pdfs)
    assert again.attachments == result.attachments
    assert len([r for r in server.requests if r.path == "/storage/upload"]) == 4


def test_pdfs_upload_in_parallel(server, library, tmp_path):
    corpus = synthetic_corpus(4)
    pdfs = {cluster_id: pdf(tmp_path, cluster_id) for cluster_id in corpus["cluster_id"]}
    server.upload_delay = 0.3  # long enough for the uploads to overlap if they run in parallel
    result = sync_library(library, corpus, pdfs, max_workers=4)
    assert len(result.attachments) == 4
    assert server.max_parallel_uploads >= 2


def test_an_interrupted_upload_is_reported_then_completed_on_the_next_run(server, library, tmp_path):
    corpus = sample_corpus().iloc[[0]]
    pdfs = {ROMANO: pdf(tmp_path, ROMANO)}
    server.failures.append(("POST", rf"{server.prefix}/items/\w+/file", 503))
    first = sync_library(library, corpus, pdfs)
    assert first.attachments == {} and "Code: 503" in first.failures[ROMANO]
    assert not leaks(first)
    attachments = [item for item in server.items.values() if item["data"]["itemType"] == "attachment"]
    assert len(attachments) == 1 and attachments[0]["key"] not in server.files
    second = sync_library(library, corpus, pdfs)
    assert second.failures == {} and second.attachments == {ROMANO: attachments[0]["key"]}
    assert server.files[attachments[0]["key"]] == pdfs[ROMANO].read_bytes()


def test_missing_pdfs_and_missing_parents_fail_alone(library, tmp_path):
    corpus = sample_corpus().iloc[:2]
    pdfs = {ROMANO: tmp_path / "gone.pdf", "c-not-in-corpus": pdf(tmp_path, "x"), "c-d17a15471213": pdf(tmp_path, "ok")}
    result = sync_library(library, corpus, pdfs)
    assert result.failures[ROMANO].startswith("cannot read the PDF")
    assert result.failures["c-not-in-corpus"] == "no Zotero item to attach the PDF to"
    assert list(result.attachments) == ["c-d17a15471213"]


def test_fallback_bibliography_comes_from_zotero(server, library):
    keys = sync_library(library, sample_corpus()).keys
    citation = zotero_citation(library, keys[ROMANO], style="apa")
    assert citation.in_text == "(Romano et al., 2025)"
    assert citation.bibliography == (
        "Romano, C., Brunner, L., Keller, A. (2025). Multi-pollutant exposure and subclinical atherosclerosis: "
        "elastic net and LASSO regularised regression in a Swiss cohort. Journal of environmental cardiology."
    )
    assert "<i>Journal of environmental cardiology</i>" in citation.bibliography_html
    item_reads = [r.query for r in server.requests if r.path.endswith(f"/items/{keys[ROMANO]}")]
    assert [(q["content"], q["style"], q["format"]) for q in item_reads] == [
        ("citation", "apa", "atom"),
        ("bib", "apa", "atom"),
    ]


def test_failed_local_citations_are_replaced_by_zotero_renderings(server, library):
    corpus = sample_corpus()
    keys = sync_library(library, corpus).keys
    items = [to_csl_item(row) for row in corpus.to_dict("records")]
    items[1]["issued"] = {"date-parts": [["spring"]]}  # citeproc-py cannot render this one
    local = render_citations(items, style="vancouver")
    assert local["c-d17a15471213"].error
    merged = with_zotero_fallback(local, keys, library, style="vancouver")
    assert merged["c-d17a15471213"].error is None
    assert merged["c-d17a15471213"].in_text == "(European Environmental Cardiology Working Group et al., 2021)"
    assert {cid: c for cid, c in merged.items() if cid != "c-d17a15471213"} == {
        cid: c for cid, c in local.items() if cid != "c-d17a15471213"
    }
    assert server.requests[-1].query["style"] == "vancouver-nlm"


def test_the_api_key_never_appears_in_errors(server, library):
    server.failures.append(("GET", f"{server.prefix}/items", 403))  # error page echoing request headers
    with pytest.raises(ZoteroError) as caught:
        find_existing(library, {ROMANO: to_zotero_item(sample_corpus().to_dict("records")[0])})
    assert caught.value.fatal
    assert "Code: 403" in str(caught.value) and "Bearer ***" in str(caught.value)
    assert not leaks(caught.value)
    assert caught.value.__cause__ is None and caught.value.__context__ is None

    server.failures.append(("GET", rf"{server.prefix}/items/\w+", 500))
    with pytest.raises(ZoteroError) as caught:
        zotero_citation(library, "ABCD2345")
    assert not caught.value.fatal and not leaks(caught.value)
    assert API_KEY not in repr(library)


def test_unreachable_server_is_fatal(tmp_path):
    library = ZoteroLibrary("1", "group", API_KEY, base_url="http://127.0.0.1:9")
    with pytest.raises(ZoteroError, match="ConnectError") as caught:
        sync_library(library, sample_corpus())
    assert caught.value.fatal and not leaks(caught.value)


@pytest.mark.parametrize(
    ("library_id", "library_type", "message"),
    [
        ("475425", "users", 'must be "user" or "group"'),
        (" ", "group", "library_id is empty"),
    ],
)
def test_library_settings_are_checked(library_id, library_type, message):
    with pytest.raises(ValueError, match=message):
        ZoteroLibrary(library_id, library_type, API_KEY)
