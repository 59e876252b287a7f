"""The screening page in headless Chromium, driven from the keyboard against a real `hysem screen`
server: decisions reach the log, undo takes one back, two pages share one log, a server killed
with SIGKILL loses nothing it acknowledged, two reviewers' conflict is listed and resolved with
their kappa shown, full texts are screened beside their record, and a PDF from the library is
attached to the record on screen. Screenshots land in test-artifacts/ui/."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import playwright.sync_api as playwright_api
import pytest
from sklearn.metrics import cohen_kappa_score

from hysem_assets.fulltext.attach import attachments, attachments_dir
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.screening.decisions import FULLTEXT, Decision, DecisionLog, decisions_path, goes_on, replay
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.profile import load_settings
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.paths import HYSEM, PROJECT_ROOT
from hysem_assets_tests.screening.works import ON_TOPIC, corpus

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "ui"
#: A whole PDF of the sample, standing in for a copy a reviewer got from a library.
LIBRARY_PDF = default_snapshot_dir() / "files" / "10.5555_aqsr.2019.100031.pdf"

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and not CHROMIUM.exists() and not shutil.which("chromium"),
    reason="Debian's chromium is not installed (apt-get install chromium)",
)


class Server:
    """`hysem screen --query SAMPLE` in its own process, on a free port (of ``host``, loopback unless named)."""

    def __init__(self, home: Path, host: str = "127.0.0.1", *options: str) -> None:
        environment = {**os.environ, "HYSEM_HOME": str(home)}
        command = [HYSEM, "screen", "--query", SAMPLE, "--host", host, "--port", "0", "--no-open", *options]
        self.output = home / f"screen-{time.monotonic_ns()}.log"  # a file, never a pipe that could fill up
        with open(self.output, "w") as output:
            self.process = subprocess.Popen(command, env=environment, stdout=output, stderr=subprocess.STDOUT)
        self.url = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not self.url:
            if self.process.poll() is not None:
                raise RuntimeError(f"hysem screen exited with {self.process.returncode}: {self.output.read_text()}")
            found = re.search(r"at (http://\S+/)", self.output.read_text())
            self.url = found.group(1) if found else ""
            time.sleep(0.2)
        assert self.url, "hysem screen did not announce its address"

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a parent that blocks SIGTERM passes the block on
                self.kill()


@pytest.fixture
def server(isolated_home: Path) -> Iterator[Server]:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    running = Server(isolated_home)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with playwright_api.sync_playwright() as playwright:
        executable = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def open_page(browser, url: str):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(url)
    page.locator("#title").filter(has_text=re.compile(".")).wait_for()
    return page


def decisions() -> dict[str, tuple[str, str | None]]:
    return {k: (d.action, d.reason) for k, d in DecisionLog(decisions_path(SAMPLE)).current().items()}


def test_keyboard_screening_with_reasons_undo_and_key_terms(browser, server: Server) -> None:
    page = open_page(browser, server.url)
    assert page.locator("#title").inner_text().startswith(ON_TOPIC)  # the criteria rank the on-topic works first
    assert "ranked by eligibility criteria" in page.locator("#ranked").inner_text()
    assert "found in PubMed, embase" in page.locator("#meta").inner_text()  # how the record was found
    assert {m.lower() for m in page.locator("#abstract mark").all_inner_texts()} >= {"air", "pollution", "machine"}
    first = page.locator("#title").inner_text()

    page.keyboard.press("i")
    page.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
    second = page.locator("#title").inner_text()
    assert second != first
    page.keyboard.press("x")
    page.locator("#reasons.open").wait_for()
    assert page.locator("#reason-list li").nth(1).inner_text() == "wrong outcome"
    page.keyboard.press("2")
    page.locator("#counts").filter(has_text="2 of 12 decided · 1 included · 1 excluded").wait_for()
    assert "ranked by active learning" in page.locator("#ranked").inner_text()
    assert "relevant records remain" in page.locator("#estimate").inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "screening-page.png")

    page.keyboard.press("u")
    page.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
    assert page.locator("#title").inner_text() == second  # the undone record is back on screen
    ids = {row: pd.Series(corpus()["cluster_id"].values, index=corpus()["title"])[row] for row in (first, second)}
    assert decisions() == {ids[first]: ("included", None)}
    lines = decisions_path(SAMPLE).read_text(encoding="utf-8").splitlines()
    assert [line.split('"action": ')[1].split('"')[1] for line in lines] == ["included", "excluded", "undo"]


def test_two_pages_share_one_log_and_a_killed_server_loses_nothing(browser, server: Server, isolated_home) -> None:
    one, two = open_page(browser, server.url), open_page(browser, server.url)
    one.keyboard.press("i")
    one.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
    two.keyboard.press("i")  # the second page still shows the first record: deciding it again changes nothing
    two.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
    two.keyboard.press("i")
    two.locator("#counts").filter(has_text="2 of 12 decided").wait_for()
    one.reload()
    one.locator("#counts").filter(has_text="2 of 12 decided").wait_for()
    before = decisions()

    server.kill()
    one.keyboard.press("i")
    one.locator("#status.error").filter(has_text="did not answer").wait_for()  # the page says so and stays usable
    assert decisions() == before and len(before) == 2

    again = Server(isolated_home)
    try:
        page = open_page(browser, again.url)
        page.locator("#counts").filter(has_text="2 of 12 decided").wait_for()
        page.keyboard.press("x")
        page.keyboard.press("1")
        page.locator("#counts").filter(has_text="3 of 12 decided").wait_for()
    finally:
        again.stop()
    assert len(decisions()) == 3 and ("excluded", "wrong exposure") in decisions().values()


def post(url: str, body: dict, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"]


def test_bad_or_foreign_requests_are_refused_in_words(server: Server) -> None:
    decide = server.url + "api/decide"
    as_json = {"Content-Type": "application/json"}
    status, error = post(decide, {"record_id": "w00", "action": "excluded", "reason": "because"}, as_json)
    assert status == 400 and "exclude with one of the protocol's reasons" in error
    status, error = post(decide, {"record_id": ["w00"], "action": "included"}, as_json)
    assert status == 400 and "is not a work of query" in error
    status, error = post(decide, {"record_id": "w00", "action": "included", "reviewer": "Ann\u202e\u0007"}, as_json)
    assert status == 400 and "holds a control character" in error
    status, error = post(server.url + "api/undo", {"reviewer": ""}, as_json)
    assert status == 400 and "the reviewer's name is empty" in error
    # what another site could send without asking: a form post, or JSON from its own origin
    assert post(decide, {"record_id": "w00", "action": "included"}, {"Content-Type": "text/plain"})[0] == 415
    foreign = {**as_json, "Origin": "http://evil.example"}
    assert post(decide, {"record_id": "w00", "action": "included"}, foreign) == (
        403,
        "requests from other sites are refused",
    )
    rebound = {**as_json, "Host": "evil.example:80"}
    assert post(server.url + "api/undo", {}, rebound)[0] == 421
    assert decisions() == {}


def test_the_page_served_beyond_loopback_works_from_its_token_url(browser, isolated_home) -> None:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    server = Server(isolated_home, host="0.0.0.0")
    try:
        [url] = re.findall(r"at (http://\S+\?token=\S+)", server.output.read_text())
        page = open_page(browser, url)  # the page's own requests carry the token the URL gave it
        page.keyboard.press("i")
        page.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
        assert len(decisions()) == 1
        stranger = browser.new_context().new_page()
        stranger.goto(server.url)  # the same page without the token: refused
        assert "open it with the ?token= URL" in stranger.content()
        stranger.context.close()
    finally:
        server.stop()


def settled(page) -> None:
    """Wait until the page has shown the server's answer: it takes no key while a request is in flight."""
    page.wait_for_function("() => !busy")


def as_reviewer(page, name: str) -> None:
    """Type ``name`` in the page's name field; the page then shows that reviewer's next record."""
    page.fill("#reviewer", name)
    with page.expect_response(re.compile(r"/api/state\?reviewer=")):
        page.press("#reviewer", "Enter")
    settled(page)


def vote(page, key: str, *then: str) -> str:
    """Press ``key`` (and ``then``) on the record shown; the id of that record."""
    title = page.locator("#title").inner_text()
    record = corpus().set_index("title").loc[title, "cluster_id"]
    with page.expect_response(re.compile(r"/api/decide")):
        for pressed in (key, *then):
            page.keyboard.press(pressed)
    settled(page)
    return record


def test_two_reviewers_conflict_is_listed_resolved_and_their_kappa_shown(browser, server: Server) -> None:
    ann, bo = open_page(browser, server.url), open_page(browser, server.url)
    as_reviewer(ann, "Ann")
    as_reviewer(bo, "Bo")
    disputed = vote(ann, "i")
    assert vote(bo, "x", "2") == disputed  # Bo is shown the record Ann decided: his vote is his own
    assert vote(ann, "x", "1") == vote(bo, "x", "3")
    ann.fill("#note-text", "dose unclear")
    with ann.expect_response(re.compile(r"/api/decide")):
        ann.click("#maybe")  # with a note, kept with the decision
    settled(ann)
    assert vote(bo, "i") in DecisionLog(decisions_path(SAMPLE)).current()  # maybe and included agree
    with bo.expect_response(re.compile(r"/api/undo")):
        bo.keyboard.press("u")  # Bo takes back his own latest vote, not Ann's
    entries = DecisionLog(decisions_path(SAMPLE)).read()
    votes = replay(entries)
    assert len(votes.reviewers["Ann"]) == 3 and len(votes.reviewers["Bo"]) == 2
    assert [d.note for d in votes.reviewers["Ann"].values()][-1] == "dose unclear"

    cy = open_page(browser, server.url)
    as_reviewer(cy, "Cy")
    conflict = cy.locator("#conflict-list li")
    conflict.filter(has_text="Ann: included").filter(has_text="Bo: excluded (wrong outcome)").wait_for()
    assert conflict.count() == 1 and cy.locator("#no-conflicts").is_hidden()
    both = [r for r in votes.reviewers["Ann"] if r in votes.reviewers["Bo"]]
    expected = cohen_kappa_score(
        [goes_on(votes.reviewers["Ann"][r]) for r in both], [goes_on(votes.reviewers["Bo"][r]) for r in both]
    )
    shown = f"Cohen's kappa {expected:.2f} (Ann and Bo, {len(both)} records both decided)"
    assert cy.locator("#kappa").inner_text() == shown
    current = DecisionLog(decisions_path(SAMPLE)).current()
    assert disputed not in current  # the conflict counts as undecided
    assert cy.locator("#counts").inner_text().startswith(f"{len(current)} of 12 decided")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    cy.screenshot(path=ARTIFACTS / "screening-conflicts.png", full_page=True)

    conflict.locator("select").select_option("wrong outcome")
    conflict.locator(".resolve-exclude").click()
    cy.locator("#no-conflicts").wait_for()
    assert cy.locator("#conflict-list li").count() == 0 and "resolved as excluded" in cy.locator("#status").inner_text()
    resolution = DecisionLog(decisions_path(SAMPLE)).current()[disputed]
    assert (resolution.action, resolution.reason, resolution.reviewer, resolution.resolution) == (
        "excluded",
        "wrong outcome",
        "Cy",
        True,
    )
    assert cy.locator("#kappa").inner_text() == shown  # a resolution is nobody's vote


def test_full_texts_are_screened_beside_their_record(browser, isolated_home: Path) -> None:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    text = "# Methods\n\nGradient boosting on daily PM2.5 and hospital admissions for stroke."
    parsed = pd.DataFrame({"cluster_id": ["w00", "w01"], "markdown": [text, "# Other"], "error": [None, None]})
    write_parquet(parsed, asset_file("parsed_docs", SAMPLE))
    DecisionLog(decisions_path(SAMPLE)).append([Decision("w00", "included"), Decision("w01", "excluded", "other")])
    server = Server(isolated_home, "127.0.0.1", "--stage", FULLTEXT, "--reviewer", "Ann")
    try:
        page = open_page(browser, server.url)
        assert page.locator("#fulltext").inner_text() == text  # as text, beside the record
        assert page.locator("#title").inner_text() == corpus()["title"][0] and page.locator("#maybe").is_hidden()
        assert page.locator("#counts").inner_text().startswith("0 of 1 decided")  # w01 did not go on
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=ARTIFACTS / "screening-fulltext.png")
        vote(page, "x", "1")
        page.locator("#counts").filter(has_text="1 of 1 decided").wait_for()
        assert page.locator("#title").inner_text() == "Every record is decided."
    finally:
        server.stop()
    [decision] = DecisionLog(decisions_path(SAMPLE)).current(FULLTEXT).values()
    assert (decision.record_id, decision.action, decision.reviewer) == ("w00", "excluded", "Ann")
    assert decision.reason == "wrong exposure"


def kept_files() -> dict[str, bytes]:
    """Every file under the query's attachments folder, by path: what a refused file must leave as it was."""
    folder = attachments_dir(SAMPLE)
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def attaching_server(isolated_home: Path) -> Iterator[Server]:
    """The page over the stored corpus with PMIDs, as ``deduped_corpus`` has them, so PDFs can be attached."""
    write_parquet(corpus().assign(pmid=None), asset_file("deduped_corpus", SAMPLE))
    running = Server(isolated_home)
    yield running
    running.stop()


def choose(page, name: str, data: bytes) -> None:
    page.set_input_files("#pdf-file", files=[{"name": name, "mimeType": "application/pdf", "buffer": data}])
    page.click("#attach-pdf")


def test_a_pdf_from_the_library_is_attached_to_the_record_on_screen(browser, attaching_server: Server) -> None:
    page = open_page(browser, attaching_server.url)
    title = page.locator("#title").inner_text()
    record = corpus().set_index("title").loc[title, "cluster_id"]
    assert page.locator("#pdf").inner_text() == "" and page.locator("#pdf-file").get_attribute("accept") == (
        ".pdf,application/pdf"
    )

    choose(page, "notes.pdf", b"reading notes, not a PDF")
    page.locator("#status.error").filter(has_text="notes.pdf is not a PDF").wait_for()
    assert attachments(SAMPLE) == [] and kept_files() == {}

    named = "Müller 2019 (library copy).pdf"  # a name no header could carry unencoded
    choose(page, named, LIBRARY_PDF.read_bytes())
    page.locator("#status").filter(has_text=f"Attached {named}").wait_for()
    assert "Materialize pdfs" in page.locator("#status").inner_text()
    assert page.locator("#status.error").count() == 0 and page.locator("#title").inner_text() == title
    assert page.locator("#pdf").inner_text() == f"PDF attached: {named}"
    [attached] = attachments(SAMPLE)
    assert (attached.cluster_id, attached.filename) == (record, named)
    assert attached.sha256 == hashlib.sha256(LIBRARY_PDF.read_bytes()).hexdigest() and attached.intact()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "screening-attach.png")

    kept = kept_files()
    choose(page, "cut.pdf", LIBRARY_PDF.read_bytes()[:4000])  # cut short: starts like a PDF, is none
    page.locator("#status.error").filter(has_text="cut.pdf is a damaged PDF").wait_for()
    assert attachments(SAMPLE) == [attached] and kept_files() == kept
    page.reload()  # the register, not the page, knows what is attached
    page.locator("#pdf").filter(has_text=f"PDF attached: {named}").wait_for()
    page.keyboard.press("i")
    page.locator("#counts").filter(has_text="1 of 12 decided").wait_for()
    assert page.locator("#pdf").inner_text() == ""  # the next record has none


def raw_post(url: str, query: dict[str, str], headers: dict[str, str], body) -> tuple[int, str]:
    """Post ``body`` (bytes, or an iterable of chunks sent chunked) to the page's attach endpoint."""
    address = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request("POST", "/api/attach?" + urllib.parse.urlencode(query), body, headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())["error"]
    finally:
        connection.close()


def test_oversized_foreign_or_misdirected_attachments_are_refused_and_nothing_is_written(
    attaching_server: Server,
) -> None:
    pdf = {"Content-Type": "application/pdf", "X-Filename": "huge.pdf"}
    cap = int(load_settings().profile.pdfs.max_megabytes * 2**20)
    over, limit = cap + 1, f"over the {cap / 2**20:.1f} MB limit on PDFs"
    # announced too large: refused from its length, before any of it is sent
    status, error = raw_post(attaching_server.url, {"record_id": "w00"}, {**pdf, "Content-Length": str(over)}, b"")
    assert (status, error) == (
        413,
        f"huge.pdf is {limit} (the profile's pdfs.max_megabytes); nothing was attached",
    )
    # sent without a length: refused once it streams past the cap
    chunks = (b"%PDF-1.4\n" if k == 0 else bytes(2**16) for k in range(over // 2**16 + 2))
    status, error = raw_post(attaching_server.url, {"record_id": "w00"}, pdf, chunks)
    assert status == 413 and limit in error
    status, error = raw_post(attaching_server.url, {"record_id": "w99"}, pdf, LIBRARY_PDF.read_bytes())
    assert status == 400 and f"no work of {SAMPLE!r}" in error and "w99" in error
    status, error = raw_post(attaching_server.url, {"record_id": "w00", "reviewer": ""}, pdf, LIBRARY_PDF.read_bytes())
    assert status == 400 and "the reviewer's name is empty" in error
    # what another site could send without asking: a form upload, or a PDF from its own origin
    form = {"Content-Type": "multipart/form-data; boundary=x", "X-Filename": "a.pdf"}
    assert raw_post(attaching_server.url, {"record_id": "w00"}, form, b"--x--") == (
        415,
        "PDFs are posted as application/pdf",
    )
    foreign = {**pdf, "Origin": "http://evil.example"}
    assert raw_post(attaching_server.url, {"record_id": "w00"}, foreign, LIBRARY_PDF.read_bytes())[0] == 403
    assert attachments(SAMPLE) == [] and kept_files() == {}
