"""The screening page in headless Chromium, driven from the keyboard against a real `hysem screen`
server: decisions reach the log, undo takes one back, two pages share one log, and a server
killed with SIGKILL loses nothing it acknowledged. Screenshots land in test-artifacts/ui/."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import playwright.sync_api as playwright_api
import pytest

from hysem_assets.screening.decisions import DecisionLog, decisions_path
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.paths import HYSEM, PROJECT_ROOT
from hysem_assets_tests.screening.works import ON_TOPIC, corpus

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "ui"

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and not CHROMIUM.exists() and not shutil.which("chromium"),
    reason="Debian's chromium is not installed (apt-get install chromium)",
)


class Server:
    """`hysem screen --query SAMPLE` in its own process, on a free port (of ``host``, loopback unless named)."""

    def __init__(self, home: Path, host: str = "127.0.0.1") -> None:
        environment = {**os.environ, "HYSEM_HOME": str(home)}
        command = [HYSEM, "screen", "--query", SAMPLE, "--host", host, "--port", "0", "--no-open"]
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
