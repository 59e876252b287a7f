"""Citation chasing over real loopback HTTP against the mirror serving the bundled sample.

The sample's ``cited_only_works`` (truth.json) are OpenAlex works no search of the sample query
finds: method papers and an older cohort that sample studies cite, and a letter citing one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from hysem_assets.mirror.server import MirrorServer, default_snapshot_dir
from hysem_assets.net.http import HttpClient, RetryPolicy
from hysem_assets.settings.queries import CitationSearch, load_queries
from hysem_assets.sources import citations
from hysem_assets.sources.base import Endpoint
from hysem_assets.sources.citations import ChaseOutcome, chase_citations
from hysem_assets.sources.openalex import fetch_openalex
from hysem_assets.sources.pubmed import fetch_pubmed
from hysem_assets.sources.scopus import fetch_scopus
from hysem_assets_tests.paths import PROJECT_ROOT

SAMPLE = default_snapshot_dir()
TRUTH = json.loads((SAMPLE / "truth.json").read_text(encoding="utf-8"))
WORKS = json.loads((SAMPLE / "openalex" / "works.json").read_text(encoding="utf-8"))
LOOKUP_ONLY = json.loads((SAMPLE / "openalex" / "lookup_only.json").read_text(encoding="utf-8"))
CITED_ONLY = {work["id"]: work for work in TRUTH["cited_only_works"]}
#: Article id of the file -> OpenAlex W-id, for the searched works and the cited-only ones alike.
W = {
    work["id"]: record["source_id"]
    for work in [*TRUTH["works"], *TRUTH["cited_only_works"]]
    for record in work["records"]
    if record["source"] == "openalex"
}
#: The sample studies the tests treat as a review's included studies (w04 cites no cited-only work).
INCLUDED = ["w01", "w02", "w03", "w04", "w05", "w09", "w36"]
FAST = RetryPolicy(max_retries=0, backoff_base_s=0.01)


def short(work_id: str) -> str:
    return work_id.rsplit("/", 1)[-1]


def references_of(w_id: str) -> list[str]:
    work = next(work for work in [*WORKS, *LOOKUP_ONLY] if short(work["id"]) == w_id)
    return [short(ref) for ref in work["referenced_works"]]


def citing(w_id: str) -> list[str]:
    return [short(work["id"]) for work in [*WORKS, *LOOKUP_ONLY] if w_id in map(short, work["referenced_works"])]


@pytest.fixture(scope="module")
def mirror() -> Iterator[MirrorServer]:
    with MirrorServer() as server:
        yield server


def endpoint(mirror: MirrorServer, source: str = "openalex") -> Endpoint:
    return Endpoint(source, mirror.base_urls[source], 1000, 4, 200, api_key="k", mailto="test@example.org")


async def _with_client(run):
    async with aiohttp.ClientSession() as session:
        return await run(HttpClient(session, requests_per_second=1000, retry=FAST))


def chase(
    mirror: MirrorServer, seeds: list[str], settings: CitationSearch = CitationSearch(), **kwargs
) -> ChaseOutcome:
    async def run(client: HttpClient) -> ChaseOutcome:
        return await chase_citations(client, endpoint(mirror), [W[s] for s in seeds], settings, **kwargs)

    return asyncio.run(_with_client(run))


def by_id(outcome: ChaseOutcome) -> dict[str, dict[str, Any]]:
    records = {record["source_id"]: record for record in outcome.records}
    assert len(records) == len(outcome.records), "a work is one record however many studies reach it"
    return records


# ----------------------------------------------------------------------------- the sample searches


@pytest.mark.parametrize("source", ["pubmed", "openalex", "scopus"])
def test_the_sample_query_still_finds_exactly_the_searched_works(mirror: MirrorServer, source: str) -> None:
    """The cited-only works live in the snapshot, yet a search of the sample query returns what it did."""
    spec = load_queries(PROJECT_ROOT / "config" / "queries.yaml")["air-pollution-cardio-ml"]
    fetch = {"pubmed": fetch_pubmed, "openalex": fetch_openalex, "scopus": fetch_scopus}[source]

    async def run(client: HttpClient):
        return await fetch(client, endpoint(mirror, source), spec)

    outcome = asyncio.run(_with_client(run))
    found = [record["source_id"] for record in outcome.records]
    expected = {r["source_id"] for work in TRUTH["works"] for r in work["records"] if r["source"] == source}
    assert not outcome.failures and len(found) == len(set(found)) == TRUTH["expected_counts"][source]
    assert set(found) == expected
    assert not set(found) & {W[work_id] for work_id in CITED_ONLY}


def test_cited_only_works_answer_identifier_and_cites_filters_but_no_listing(mirror: MirrorServer) -> None:
    async def run(client: HttpClient) -> dict[str, list[str]]:
        base = mirror.base_urls["openalex"]
        answers = {}
        for name, params in {
            "listing": {"per-page": "200"},
            "search": {"search": "heart failure cohort", "per-page": "200"},
            "by id": {"filter": f"openalex:{W['w56']}|{W['w01']}", "per-page": "50"},
            "cites": {"filter": f"cites:{W['w09']}", "per-page": "200"},
            "cites or": {"filter": f"cites:{W['w54']}|{W['w55']}", "per-page": "200"},
        }.items():
            _, body = await client.request(f"{base}/works", params=params)
            answers[name] = [short(work["id"]) for work in json.loads(body)["results"]]
        _, body = await client.request(f"{base}/works/{W['w58']}")
        answers["single"] = [short(json.loads(body)["id"])]
        return answers

    answers = asyncio.run(_with_client(run))
    hidden = {W[work_id] for work_id in CITED_ONLY}
    assert not hidden & set(answers["listing"]) and not hidden & set(answers["search"])
    assert set(answers["by id"]) == {W["w56"], W["w01"]} and answers["single"] == [W["w58"]]
    assert set(answers["cites"]) == set(citing(W["w09"])) and W["w58"] in answers["cites"]
    cited = {W[w] for work_id in ("w54", "w55") for w in CITED_ONLY[work_id]["cited_by"]}
    assert set(answers["cites or"]) == cited


# ----------------------------------------------------------------------------- chasing


def test_backward_reaches_the_works_the_studies_cite_and_names_each_study(mirror: MirrorServer) -> None:
    outcome = chase(mirror, INCLUDED, CitationSearch(forward=False))
    records = by_id(outcome)
    seeds = {W[s] for s in INCLUDED}
    assert not outcome.not_chased and not outcome.fetch.failures and not outcome.capped
    assert all(record["source"] == "citations" and record["openalex_id"] == wid for wid, record in records.items())
    assert not seeds & set(records), "the studies themselves are not chased records"
    expected = {ref for seed in seeds for ref in references_of(seed)} - seeds
    assert set(records) == set(outcome.found_via) == expected
    for work_id, work in CITED_ONLY.items():
        citing_studies = [s for s in work["cited_by"] if s in INCLUDED]
        if citing_studies:
            assert outcome.found_via[W[work_id]] == sorted(f"backward:{W[s]}" for s in citing_studies)
            assert records[W[work_id]]["title"] == work["title"]
    # one work reached from three studies is one record with three ways in
    assert len(outcome.found_via[W["w56"]]) == 3 and records[W["w56"]]["year"] == 2012
    assert W["w58"] not in records  # it cites w09; only forward finds it


def test_forward_reaches_the_work_citing_a_study(mirror: MirrorServer) -> None:
    outcome = chase(mirror, INCLUDED, CitationSearch(backward=False))
    records = by_id(outcome)
    seeds = {W[s] for s in INCLUDED}
    assert not outcome.not_chased and not outcome.fetch.failures
    assert set(records) == {work for seed in seeds for work in citing(seed)} - seeds
    assert outcome.found_via[W["w58"]] == [f"forward:{W['w09']}"]
    assert records[W["w58"]]["item_type"] == "letter" and records[W["w58"]]["source"] == "citations"
    assert all(entry.startswith("forward:") for entries in outcome.found_via.values() for entry in entries)


def test_both_directions_from_one_study(mirror: MirrorServer) -> None:
    outcome = chase(mirror, ["w09"])
    study = W["w09"]
    assert outcome.found_via[W["w54"]] == [f"backward:{study}"] and outcome.found_via[W["w58"]] == [f"forward:{study}"]
    assert set(by_id(outcome)) == (set(references_of(study)) | set(citing(study))) - {study}


def test_the_per_study_cap_is_honoured_and_reported(mirror: MirrorServer) -> None:
    studies = ["w09", "w36"]
    outcome = chase(mirror, studies, CitationSearch(per_study=1))
    for study in (W[s] for s in studies):
        taken = {
            direction: [w for w, via in outcome.found_via.items() if f"{direction}:{study}" in via]
            for direction in ("backward", "forward")
        }
        assert len(taken["backward"]) <= 1 and len(taken["forward"]) <= 1
        assert outcome.capped[f"{study}:backward"] == len(references_of(study)) - 1
        if len(citing(study)) > 1:
            assert outcome.capped[f"{study}:forward"] == len(citing(study)) - 1
        else:
            assert f"{study}:forward" not in outcome.capped
    assert outcome.capped[f"{W['w09']}:forward"] == 1  # w42 and the letter w58 cite it
    assert not outcome.not_chased
    uncapped = chase(mirror, studies)
    assert not uncapped.capped and len(uncapped.records) > len(outcome.records)


def _failing(paths: list[str]):
    """Answer 500 to any OpenAlex /works request whose filter is one of ``paths``; count what was asked."""
    asked: list[str] = []

    @web.middleware
    async def fail(request: web.Request, handler):
        asked.append(request.query.get("filter", ""))
        if request.path.endswith("/works") and request.query.get("filter") in paths:
            return web.Response(status=500, text="upstream exploded")
        return await handler(request)

    return fail, asked


def test_a_study_whose_requests_fail_is_not_chased_and_the_others_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(citations, "OPENALEX_ID_BATCH", 1)  # each study's references read in a batch of its own
    fail, asked = _failing([f"openalex:{W['w36']}", f"cites:{W['w09']}"])
    with MirrorServer(middlewares=[fail]) as mirror:
        outcome = chase(mirror, INCLUDED)
    assert set(outcome.not_chased) == {W["w36"], W["w09"]}
    assert outcome.not_chased[W["w36"]].startswith("backward: included studies' references, batch")
    assert "500" in outcome.not_chased[W["w36"]]
    assert outcome.not_chased[W["w09"]].startswith(f"forward: works citing {W['w09']}, page 1 failed")
    assert outcome.fetch.partial and len(outcome.fetch.failures) == 2
    assert asked.count(f"openalex:{W['w36']}") == 2  # one retry round, then it counts as failed
    # what the other studies (and w09's backward side) reached is kept
    records = by_id(outcome)
    assert outcome.found_via[W["w56"]] == sorted(f"backward:{W[s]}" for s in ("w01", "w09"))
    assert W["w57"] not in records  # only w36 cites it
    assert outcome.found_via[W["w54"]] == sorted(f"backward:{W[s]}" for s in ("w02", "w09"))
    assert W["w58"] not in records  # only forward from w09 reaches it


def test_known_works_are_not_fetched_again_but_their_links_are_said(monkeypatch: pytest.MonkeyPatch) -> None:
    fail, asked = _failing([])
    with MirrorServer(middlewares=[fail]) as mirror:
        outcome = chase(
            mirror, ["w01", "w09"], CitationSearch(forward=False), known={f"https://openalex.org/{W['w56']}"}
        )
    assert W["w56"] not in by_id(outcome)
    assert outcome.found_via[W["w56"]] == sorted(f"backward:{W[s]}" for s in ("w01", "w09"))
    lookups = [f for f in asked if f.startswith("openalex:") and W["w01"] not in f]
    assert lookups and not any(W["w56"] in f for f in lookups)
    assert W["w54"] in by_id(outcome)


def test_a_seed_that_is_no_work_id_or_not_in_openalex_is_said(mirror: MirrorServer) -> None:
    async def run(client: HttpClient) -> ChaseOutcome:
        return await chase_citations(client, endpoint(mirror), ["10.5555/x", "W1", W["w02"]], CitationSearch())

    outcome = asyncio.run(_with_client(run))
    assert "not an OpenAlex work id" in outcome.not_chased["10.5555/x"]
    assert outcome.not_chased["W1"] == "backward: OpenAlex has no such work, so its references are unknown"
    assert outcome.found_via[W["w54"]] == [f"backward:{W['w02']}"]
    with pytest.raises(ValueError, match="per_study"):
        CitationSearch(per_study=0)
