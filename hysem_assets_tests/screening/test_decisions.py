"""The decision log: what is appended is read back, undo replays as a stack, and crashes or
concurrent writers never cost a decision."""

from __future__ import annotations

import json
import logging
import multiprocessing
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest

from hysem_assets.screening.decisions import (
    DEFAULT_REVIEWER,
    FULLTEXT,
    TITLE_ABSTRACT,
    Decision,
    DecisionLog,
    DecisionsError,
    current_decisions,
    last_decided,
    replay,
)

APPENDS = 200
#: Longer than a write buffer (8 KiB), so an unlocked writer would need several writes per line.
LONG_REASON = "r" * 20_000


def last_record(entries: list[Decision]) -> str | None:
    latest = last_decided(entries)
    return None if latest is None else latest.record_id


def test_appended_decisions_read_back_in_order_with_every_field(tmp_path: Path):
    log = DecisionLog(tmp_path / "q" / "decisions.jsonl")
    assert log.read() == [] and not log.path.exists()  # nothing decided yet: an empty log, not an error
    first = [Decision("a", "included"), Decision("b", "excluded", "wrong population", source="import:x.csv")]
    log.append(first)
    log.append([])  # nothing to add writes nothing
    log.append([Decision("c", "excluded", "étude animale — hors sujet")])  # non-ASCII kept as written
    read = log.read()
    assert read[:2] == first and read[2].reason == "étude animale — hors sujet"
    assert log.path.read_text(encoding="utf-8").count("\n") == 3
    assert log.current() == {d.record_id: d for d in read}


def test_undo_pops_back_to_the_previous_decision_of_that_record_and_last_decided_follows():
    at = iter(f"2025-01-01T00:00:{second:02d}+00:00" for second in range(60))
    a_in = Decision("a", "included", at=next(at))
    b_out = Decision("b", "excluded", "off topic", at=next(at))
    a_out = Decision("a", "excluded", "no outcome", at=next(at))  # a changed mind is a new line
    entries = [a_in, b_out, a_out]
    assert current_decisions(entries) == {"a": a_out, "b": b_out} and last_record(entries) == "a"
    entries.append(Decision("a", "undo", at=next(at)))
    # a is back to its first decision; the latest decision still standing is now b's
    assert current_decisions(entries) == {"a": a_in, "b": b_out} and last_record(entries) == "b"
    entries.append(Decision("b", "undo", at=next(at)))
    assert current_decisions(entries) == {"a": a_in} and last_record(entries) == "a"
    entries += [Decision("a", "undo", at=next(at)), Decision("a", "undo", at=next(at))]  # one too many: no-op
    assert current_decisions(entries) == {} and last_record(entries) is None
    entries.append(Decision("c", "included", at=next(at)))
    assert current_decisions(entries) == {"c": entries[-1]} and last_record(entries) == "c"


def test_undo_through_the_log_on_disk(tmp_path: Path):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.append([Decision("a", "included")])
    log.append([Decision("a", "excluded", "no outcome")])
    log.append([Decision("a", "undo")])
    assert log.current()["a"].action == "included" and len(log.read()) == 3  # nothing rewritten


def test_an_exclusion_without_a_reason_or_an_unknown_action_is_refused(tmp_path: Path):
    with pytest.raises(DecisionsError, match="record 'a': an exclusion needs a reason"):
        Decision("a", "excluded")
    with pytest.raises(DecisionsError, match="an exclusion needs a reason"):
        Decision("a", "excluded", "")
    with pytest.raises(DecisionsError, match="decision 'perhaps' is not one of"):
        Decision("a", "perhaps")  # type: ignore[arg-type]
    # nor is one read back from a log edited by hand
    path = tmp_path / "decisions.jsonl"
    path.write_text('{"record_id": "a", "action": "excluded"}\n', encoding="utf-8")
    with pytest.raises(DecisionsError, match="exclusion needs a reason"):
        DecisionLog(path).read()


def test_a_line_torn_by_a_crash_is_skipped_and_the_next_append_starts_a_fresh_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    kept = [Decision("a", "included"), Decision("b", "excluded", "off topic")]
    log.append(kept)
    torn = json.dumps({"record_id": "c", "action": "excluded", "reason": "animal study"})[:30]
    with open(log.path, "a", encoding="utf-8") as file:  # the crash: half a line, no newline
        file.write(torn)
    with caplog.at_level(logging.WARNING, logger="hysem_assets.screening.decisions"):
        assert log.read() == kept
    assert "line 3 was cut short" in caplog.text
    later = Decision("d", "included")
    log.append([later])
    assert log.read() == [*kept, later]
    lines = log.path.read_text(encoding="utf-8").split("\n")
    assert lines[2] == torn and json.loads(lines[3])["record_id"] == "d" and lines[4] == ""
    log.append([Decision("e", "included")])  # the torn line, now in the middle, is still only skipped
    assert [d.record_id for d in log.read()] == ["a", "b", "d", "e"]


@pytest.mark.parametrize(
    "bad", ["not json", '{"record_id": "x"}', "[1, 2]", '{"record_id": "x", "action": "included", "extra": 1}']
)
def test_a_corrupt_line_that_was_not_torn_is_an_error_naming_its_line(tmp_path: Path, bad: str):
    path = tmp_path / "decisions.jsonl"
    good = json.dumps({"record_id": "a", "action": "included", "reason": None, "at": "t", "source": "page"})
    path.write_text(f"{good}\n{bad}\n{good}\n", encoding="utf-8")
    with pytest.raises(DecisionsError, match=r"decisions\.jsonl, line 2: not a decision"):
        DecisionLog(path).read()


def test_a_line_torn_inside_a_non_ascii_character_is_skipped_too(tmp_path: Path):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.append([Decision("a", "included")])
    line = json.dumps({"record_id": "b", "action": "excluded", "reason": "étude"}, ensure_ascii=False)
    cut = line.encode("utf-8")[: line.encode("utf-8").index("é".encode()) + 1]  # half of "é"
    with open(log.path, "ab") as file:
        file.write(cut)
    assert [d.record_id for d in log.read()] == ["a"]


def test_a_line_torn_just_after_a_brace_inside_a_reason_is_skipped(tmp_path: Path):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.append([Decision("a", "included")])
    line = json.dumps({"record_id": "b", "action": "excluded", "reason": "see {protocol} section 2"})
    with open(log.path, "a", encoding="utf-8") as file:
        file.write(line[: line.index("}") + 1])
    assert [d.record_id for d in log.read()] == ["a"]


def append_many(path: str, writer: int, start: Event) -> None:
    """One writer of the concurrency test: its decisions one append at a time, each a long line."""
    log = DecisionLog(Path(path))
    start.wait()
    for number in range(APPENDS):
        log.append([Decision(f"w{writer}-{number}", "excluded", f"{writer}{LONG_REASON}")])


def test_two_processes_appending_at_once_lose_no_line_and_interleave_none(tmp_path: Path):
    path = tmp_path / "decisions.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [context.Process(target=append_many, args=(str(path), writer, start)) for writer in (1, 2)]
    for process in writers:
        process.start()
    start.set()
    for process in writers:
        process.join(timeout=120)
    assert [process.exitcode for process in writers] == [0, 0]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 2 * APPENDS + 1  # every line whole, ended by its newline
    decisions = [Decision(**json.loads(line)) for line in lines[:-1]]  # each line one decision, nothing mixed
    for writer in (1, 2):
        own = [d for d in decisions if d.record_id.startswith(f"w{writer}-")]
        assert [d.record_id for d in own] == [f"w{writer}-{number}" for number in range(APPENDS)]
        assert all(d.reason == f"{writer}{LONG_REASON}" for d in own)
    assert DecisionLog(path).read() == decisions


# reviewers, conflicts, resolutions, "maybe", notes and stages


def test_a_log_written_before_reviewers_and_stages_reads_as_one_reviewers_title_and_abstract_decisions(tmp_path):
    path = tmp_path / "decisions.jsonl"
    path.write_text(
        '{"record_id": "a", "action": "included", "reason": null, "at": "t1", "source": "page"}\n'
        '{"record_id": "b", "action": "excluded", "reason": "off topic", "at": "t2", "source": "page"}\n',
        encoding="utf-8",
    )
    log = DecisionLog(path)
    assert {(d.reviewer, d.stage, d.note, d.resolution) for d in log.read()} == {
        (DEFAULT_REVIEWER, TITLE_ABSTRACT, None, False)
    }
    assert log.current() == {d.record_id: d for d in log.read()} and log.current(FULLTEXT) == {}
    log.append([Decision("a", "excluded", "off topic", reviewer="Bo")])  # a second reviewer joins the old log
    assert list(log.current()) == ["b"] and list(replay(log.read()).conflicts) == ["a"]


def test_two_reviewers_agree_disagree_and_a_resolution_settles_their_conflict():
    ann = [Decision("a", "included", reviewer="Ann"), Decision("b", "excluded", "off topic", reviewer="Ann")]
    bo = [Decision("a", "excluded", "no outcome", reviewer="Bo"), Decision("b", "excluded", "other", reviewer="Bo")]
    entries = [*ann, *bo]
    votes = replay(entries)
    assert set(votes.reviewers) == {"Ann", "Bo"} and list(votes.conflicts) == ["a"]
    assert [v.reviewer for v in votes.conflicts["a"]] == ["Ann", "Bo"]
    assert current_decisions(entries) == {"b": bo[1]}  # agreed: the latest vote, with its reason; a: undecided
    resolution = Decision("a", "included", reviewer="Cy", resolution=True)
    entries.append(resolution)
    assert current_decisions(entries) == {"b": bo[1], "a": resolution} and replay(entries).conflicts == {}
    entries.append(Decision("a", "undo", reviewer="Cy", resolution=True))  # the resolution taken back
    assert "a" not in current_decisions(entries) and list(replay(entries).conflicts) == ["a"]


def test_maybe_goes_on_like_included_and_only_a_vote_against_going_on_is_a_conflict():
    included, maybe = Decision("a", "included", reviewer="Ann"), Decision("a", "maybe", reviewer="Bo")
    assert current_decisions([included, maybe]) == {"a": included}  # agreed to go on; included over maybe
    both_maybe = [Decision("b", "maybe", reviewer="Ann"), Decision("b", "maybe", reviewer="Bo", note="dose?")]
    assert current_decisions(both_maybe)["b"].note == "dose?"
    against = [maybe, Decision("a", "excluded", "other", reviewer="Ann")]
    assert list(replay(against).conflicts) == ["a"] and current_decisions(against) == {}
    with pytest.raises(DecisionsError, match="at full text, decide included or excluded, not maybe"):
        Decision("a", "maybe", stage=FULLTEXT)


def test_undo_takes_back_only_that_reviewers_decision_at_that_stage(tmp_path: Path):
    log = DecisionLog(tmp_path / "decisions.jsonl")
    log.append([Decision("a", "included", reviewer="Ann"), Decision("b", "included", reviewer="Ann")])
    log.append([Decision("a", "excluded", "other", reviewer="Bo")])
    log.append([Decision("a", "included", reviewer="Ann", stage=FULLTEXT, note="table 2 has the outcome")])
    assert log.undo_latest("Ann") == "b"  # Ann's latest at title and abstract, not Bo's, not her full-text one
    assert log.undo_latest("Bo") == "a" and log.undo_latest("Bo") is None
    assert set(log.current()) == {"a"} and log.current()["a"].reviewer == "Ann"
    assert log.current(FULLTEXT)["a"].note == "table 2 has the outcome"
    assert log.undo_latest("Ann", FULLTEXT) == "a" and log.current(FULLTEXT) == {}
    assert log.undo_latest("Cy") is None  # nobody by that name decided anything


@pytest.mark.parametrize("name", ["", "   ", "Ann\x1b[2J", "Ann\nBo", "tab\there", "x" * 81])
def test_a_reviewer_name_that_is_empty_or_holds_a_control_character_is_refused(tmp_path: Path, name: str):
    with pytest.raises(DecisionsError, match="reviewer's name") as refused:
        Decision("a", "included", reviewer=name)
    assert "\n" not in str(refused.value)
    path = tmp_path / "decisions.jsonl"  # nor is one read back from a log edited by hand
    path.write_text(json.dumps({"record_id": "a", "action": "included", "reviewer": name}) + "\n", encoding="utf-8")
    with pytest.raises(DecisionsError, match="line 1: not a decision"):
        DecisionLog(path).read()
    assert Decision("a", "included", reviewer="Zoë Ångström-Ba").reviewer == "Zoë Ångström-Ba"
