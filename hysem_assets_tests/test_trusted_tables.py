"""Every reader trusts a table only as far as its record: a valid Parquet file with fewer rows than were
written fails ``show``, ``report``, ``ask`` and the assets after it in one line; and a run in which every
work failed extraction (a model server that refuses the key) is no success.

Tables are stored the way the IO manager stores them (with their record beside them) and the review
group is materialized by Dagster, so the files are real ones; no demo run is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from aiohttp import web
from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.extraction.rows import all_failed
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.local_server import ThreadedServer
from hysem_assets_tests.review import tables
from hysem_assets_tests.review.test_assets import QUERY, run, store
from hysem_assets_tests.test_cli_shape import run_hysem


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def damaged_line(asset: str, problem: str) -> str:
    path = asset_file(asset, QUERY)
    return f"Error: {asset} of {QUERY!r} is damaged: {problem} ({path}); `hysem doctor --fix` materializes it again\n"


def fewer_rows(asset: str, keep: int) -> None:
    """The asset's file replaced by a valid Parquet file holding only its first ``keep`` rows."""
    path = asset_file(asset, QUERY)
    pd.read_parquet(path).iloc[:keep].to_parquet(path, index=False)


def test_a_table_with_fewer_rows_than_written_fails_show_report_ask_and_the_assets_after_it(
    config: Path, tmp_path: Path
):
    store(tables.corpus())
    write_parquet(
        pd.DataFrame({"chunk_id": ["c1"], "cluster_id": ["w1"], "text": ["x"]}), asset_file("vector_index", QUERY)
    )
    write_parquet(
        pd.DataFrame({"field": ["f"], "raw_term": ["a"], "canonical": ["a"]}), asset_file("canonical_terms", QUERY)
    )
    assert run().success
    report = tmp_path / "report.md"
    assert invoke("report", "--query", QUERY, "-o", str(report)).exit_code == 0  # 4 included studies

    fewer_rows("evidence_table", 1)
    evidence = damaged_line("evidence_table", "its file holds 1 rows where its materialization recorded 4")
    shown = invoke("show", "evidence_table", "--query", QUERY)
    assert (shown.exit_code, shown.output) == (1, evidence)
    reported = invoke("report", "--query", QUERY, "-o", str(tmp_path / "again.md"))
    assert (reported.exit_code, reported.output) == (1, evidence)
    status = {row["asset"]: row for row in json.loads(invoke("status", "--query", QUERY, "--json").output)}
    assert status["evidence_table"]["problem"] == "its file holds 1 rows where its materialization recorded 4"

    fewer_rows("library", 4)
    library = damaged_line("library", "its file holds 4 rows where its materialization recorded 6")
    asked = invoke("ask", "--query", QUERY, "Which studies used a cohort design?")
    assert (asked.exit_code, asked.output) == (1, library)
    downstream = invoke("materialize", "--query", QUERY, "--select", "evidence_table")
    assert downstream.exit_code == 1
    assert f"failed: evidence_table: {library.removeprefix('Error: ')}" in downstream.stderr, downstream.stderr[-1500:]


@pytest.fixture
def refusing_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A profile whose extraction model is a loopback server that refuses every request with HTTP 401 (the
    run goes in a new process: this one's code location was built with the default profile)."""

    async def refuse(request: web.Request) -> web.Response:
        error = {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}
        return web.json_response({"error": error}, status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", refuse)
    server = ThreadedServer(app)
    llm = {"backend": "openai", "model": "m", "base_url": server.url + "/v1", "cache": False, "max_retries": 0}
    profile = tmp_path / "refused.yaml"
    profile.write_text(yaml.safe_dump({"name": "refused", "assets": {"extracted_fields": {"llm": llm}}}))
    monkeypatch.setenv("HYSEM_PROFILE", str(profile))
    yield
    server.close()


def test_a_run_in_which_every_work_failed_extraction_fails_with_the_first_reasons(
    config: Path, tmp_path: Path, refusing_model
):
    store(tables.corpus().assign(abstract="A cohort of 4,402 adults."))
    parsed = tables.parsed().assign(markdown="# Methods\n\nA cohort of adults followed for ten years.")
    write_parquet(parsed, asset_file("parsed_docs", QUERY))
    result = run_hysem("materialize", "--query", QUERY, "--select", "extracted_fields", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-3000:]
    [failed] = [line for line in result.stderr.splitlines() if line.startswith("failed: ")]
    assert failed.startswith(
        "failed: extracted_fields: check not_every_work_failed failed: all 5 works failed extraction; first reasons: "
    )
    assert "401" in failed, failed

    records = tmp_path / "records.jsonl"
    records.write_text(
        "".join(json.dumps({"id": w, "title": f"Study {w}", "abstract": "A cohort."}) + "\n" for w in "ab")
    )
    output = tmp_path / "out.jsonl"
    extracted = invoke("extract", str(records), "-o", str(output))
    assert extracted.exit_code == 1
    last = extracted.output.strip().splitlines()[-1]
    assert last.startswith(f"Error: {records}: all 2 records failed extraction; first reasons: ") and "401" in last
    assert [json.loads(line)["status"] for line in output.read_text().splitlines()] == ["error", "error"]


def test_only_a_table_in_which_every_row_failed_is_the_runs_failure():
    ok, refused = {"status": "ok", "error": None}, {"status": "error", "error": "HTTP 401:  refused"}
    assert all_failed([]) is None and all_failed([ok, refused]) is None
    assert all_failed([refused, refused]) == "all 2 works failed extraction; first reasons: HTTP 401: refused"
    reasons = [{"status": "error", "error": f"reason {n}"} for n in range(5)]
    assert all_failed(reasons, "records").endswith("first reasons: reason 0 | reason 1 | reason 2 (and 2 more)")
