"""The test server answers in the shapes the real Zotero Web API v3 recorded (shared/realdata)."""

from __future__ import annotations

import json
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hysem_assets.library.zotero import ZoteroError, ZoteroLibrary, attach_pdfs, find_existing
from hysem_assets_tests.dripping_server import dripping_server
from hysem_assets_tests.library.zotero_server import ZoteroServer

API_KEY = "k3yForShapeChecks0000000"
ATOM, ZAPI = "{http://www.w3.org/2005/Atom}", "{http://zotero.org/ns/api}"


@pytest.fixture
def recorded(realdata: Path):
    folder = realdata / "zotero_pyzotero"
    return lambda name: (folder / name).read_text(encoding="utf-8")


@pytest.fixture
def server():
    with ZoteroServer(API_KEY) as running:
        yield running


@pytest.fixture
def library(server) -> ZoteroLibrary:
    return ZoteroLibrary(str(server.library_id), "user", API_KEY, server.url)


def test_write_responses_and_items_have_the_recorded_shape(recorded, server, library, tmp_path):
    response = library.connect().create_items([{"itemType": "journalArticle", "title": "T", "creators": []}])
    assert set(json.loads(recorded("creation_doc.json"))) <= set(response)
    key = response["success"]["0"]
    assert response["successful"]["0"]["key"] == key and len(key) == 8

    real_item = json.loads(recorded("items_doc.json"))[1]
    ours = library.connect().item(key)
    assert set(ours) == set(real_item)
    assert set(ours["library"]) == set(real_item["library"])
    assert set(real_item["links"]) <= set(ours["links"])

    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    attachments, _ = attach_pdfs(library, {"a": key}, {"a": pdf})
    real_attachment = json.loads(recorded("attachments_doc.json"))["data"]
    our_attachment = server.items[attachments["a"]]["data"]
    assert set(real_attachment) - {"url"} <= set(our_attachment)  # url belongs to linked-URL attachments


def test_atom_entries_have_the_recorded_elements(recorded, server, library):
    key = library.connect().create_items([{"itemType": "book", "title": "T & U", "creators": []}])["success"]["0"]
    request = urllib.request.Request(
        f"{server.url}{server.prefix}/items/{key}?content=citation&format=atom",
        headers={"Authorization": f"Bearer {API_KEY}"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("application/atom+xml")
        ours = ET.fromstring(answer.read())
    real = ET.fromstring(recorded("citation_doc.xml").encode())
    optional = {f"{ZAPI}parsedDate"}  # only items with a date have it
    assert {child.tag for child in real} - optional == {child.tag for child in ours}
    content = ours.find(f"{ATOM}content")
    assert (content.get("type"), content.get(f"{ZAPI}type")) == ("xhtml", "citation")
    assert ours.find(f"{ATOM}title").text == "T & U"


def test_a_zotero_server_that_drips_its_answer_stops_the_sync_at_the_deadline():
    with dripping_server() as url:
        library = ZoteroLibrary("475425", "user", API_KEY, url, deadline_s=1.0)
        started = time.monotonic()
        with pytest.raises(ZoteroError, match=r"^Zotero search for .* failed: DeadlineExceeded: no complete answer"):
            find_existing(library, {"c-1": {"title": "A", "DOI": "10.1234/x"}})
        assert time.monotonic() - started < 4
