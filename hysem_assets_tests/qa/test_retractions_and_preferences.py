"""Retracted works stay out of answers (and are reported); a chosen answer must pass the citation audit."""

from __future__ import annotations

import asyncio
import dataclasses
import json

from hysem_assets.qa.answer import answer_question
from hysem_assets.qa.drafts import Claim, Draft, Finding, Round, Verdict
from hysem_assets.qa.loop import LoopResult
from hysem_assets.qa.preferences import dpo_rows, excluded_pairs, export_preferences, preference_records
from hysem_assets.qa.retractions import retraction_note, split_retracted
from hysem_assets.qa.sources import ContextChunk, LibraryRecord

QUESTION = "What did random forest models predict from ozone?"


def retracted_partition(partition, retracted: str):
    chunks = partition.chunks.assign(is_retracted=partition.chunks["cluster_id"] == retracted)
    return dataclasses.replace(partition, chunks=chunks)


def test_a_retracted_work_is_left_out_of_the_context_and_the_answer_says_so(partition, embedder):
    plain = asyncio.run(answer_question(QUESTION, partition.engine(embedder))).answer
    assert "c-1:0" in json.loads(plain["json"])["context"]  # the work ranks among the best when not retracted

    answer = asyncio.run(answer_question(QUESTION, retracted_partition(partition, "c-1").engine(embedder))).answer
    details = json.loads(answer["json"])
    assert not any(chunk.startswith("c-1:") for chunk in details["context"])
    assert details["retracted"] == [
        {"document": "c-1", "DOI": "10.1000/A1", "InTextCitation": "(Doe et al., 2016)", "included": False}
    ]
    assert not any(c["PDF_DocIndex"] == "c-1" for claim in details["claims"] for c in claim["citations"])
    assert "1 retracted work that matched this question was left out: (Doe et al., 2016)" in answer["markdown"]


def test_a_user_may_include_retracted_works_with_a_warning(partition, embedder):
    engine = retracted_partition(partition, "c-1").engine(embedder, include_retracted=True)
    answer = asyncio.run(answer_question(QUESTION, engine)).answer
    details = json.loads(answer["json"])
    assert "c-1:0" in details["context"] and details["retracted"][0]["included"] is True
    assert "Warning: the sources include 1 retracted work, kept as asked: (Doe et al., 2016)" in answer["markdown"]


def chunk(key: str, retracted: bool = False) -> ContextChunk:
    record = LibraryRecord(key, f"10.9/{key}", None, f"({key}, 2020)", f"{key}. 2020.", retracted)
    return ContextChunk(
        f"{key}:0", "Abstract", "Some text.", record.metadata(0, "abstract"), 1.0, ("dense",), retracted
    )


def test_split_retracted_fills_the_context_from_further_down_and_reports_each_work_once():
    ranked = [chunk("a"), chunk("r", True), chunk("b"), chunk("r", True), chunk("c")]
    context, report = split_retracted(ranked, 3)
    assert [c.chunk_id for c in context] == ["a:0", "b:0", "c:0"]
    assert [r["document"] for r in report] == ["r"]
    assert retraction_note(report) == "1 retracted work that matched this question was left out: (r, 2020)"
    kept, report = split_retracted(ranked, 2, include=True)
    assert [c.chunk_id for c in kept] == ["a:0", "r:0"] and report[0]["included"]
    assert split_retracted([chunk("a")], 3) == ([chunk("a")], []) and retraction_note([]) is None


def test_a_pair_whose_chosen_draft_fails_the_citation_audit_is_not_exported(tmp_path):
    context = [chunk("a")]
    library = {"a": LibraryRecord("a", "10.9/a", None, "(a, 2020)", "a. 2020.")}
    cited = context[0].metadata.as_dict()
    rejected = Round(
        1, Draft((Claim("An overreaching claim.", (cited,)),)), Verdict(False, (Finding(0, False, True, True),))
    )
    good = Round(2, Draft((Claim("Some text.", (cited,)),)), Verdict(True))
    fabricated = Round(2, Draft((Claim("Some text.", ({**cited, "DOI": "10.9/made-up"},)),)), Verdict(True))

    def records(final: Round) -> list[dict]:
        loop = LoopResult([rejected, final], 0.0, 0.0)
        return preference_records(
            query="q",
            question="Q?",
            context=context,
            loop=loop,
            generator_model="g",
            auditor_model="m",
            library=library,
        )

    passing, failing = records(good), records(fabricated)
    assert passing[0]["chosen_cited"] and not failing[0]["chosen_cited"]
    assert "does not match" in failing[0]["chosen_citation_problems"]
    assert len(dpo_rows(passing + failing)) == 1
    assert export_preferences(passing + failing, tmp_path / "pairs.jsonl") == 1
    assert excluded_pairs(passing + failing) == {"chosen_not_approved": 0, "chosen_failed_citation_audit": 1}
    assert excluded_pairs([{"chosen_approved": True}]) == {"chosen_not_approved": 0, "chosen_failed_citation_audit": 1}
