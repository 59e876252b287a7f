"""Screening decisions, kept durably per query in an append-only log.

Every decision is one JSON line appended to ``$HYSEM_HOME/screening/<query>/decisions.jsonl``
under an exclusive lock and synced to disk before it is acknowledged, so a killed server
loses nothing it has answered, and two pages open on one query never interleave their
lines. Nothing is ever rewritten: a changed mind is a new line, and "undo" is a line too.
Replaying the log gives each record's current decision: each reviewer's decisions on a record
at a stage form a stack, and that reviewer's undo pops the top one.

Works are screened in two stages (title and abstract, then full text), each by one reviewer or
two. Two reviewers whose votes disagree on whether a work goes on (included or "maybe" go on,
as in Covidence; excluded does not) are in conflict: the work is undecided until a decision
marked as a resolution settles it. Lines written before reviewers and stages were recorded are
the title and abstract decisions of one reviewer, named :data:`DEFAULT_REVIEWER`.

A crash can only leave a last line half written (no newline after it); reading skips that
line, says so, and the next append starts on a fresh line.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Literal

from hysem_assets.settings.environment import hysem_home

log = logging.getLogger(__name__)

Action = Literal["included", "maybe", "excluded", "undo"]
ACTIONS: tuple[Action, ...] = ("included", "maybe", "excluded", "undo")
#: The decisions that send a work on to the next stage.
GOES_ON = ("included", "maybe")
TITLE_ABSTRACT, FULLTEXT = "title_abstract", "fulltext"
STAGES = (TITLE_ABSTRACT, FULLTEXT)
#: The stages in a reader's words.
STAGE_NAMES = {TITLE_ABSTRACT: "title and abstract", FULLTEXT: "full text"}
#: Who made the decisions a log holds without a reviewer, and who decides when nobody is named.
DEFAULT_REVIEWER = "reviewer"
REVIEWER_CHARACTERS = 80


class DecisionsError(ValueError):
    """Decisions that cannot be recorded or read; the message names the record or line and what to do."""


def checked_reviewer(name: object) -> str:
    """``name`` as a reviewer's name: printable, not empty, at most ``REVIEWER_CHARACTERS`` long."""
    if not isinstance(name, str) or not name.strip():
        raise DecisionsError(
            "the reviewer's name is empty; name the reviewer (--reviewer NAME, or the page's name field)"
        )
    if any(unicodedata.category(character) == "Cc" for character in name):
        raise DecisionsError(f"the reviewer's name {name!r} holds a control character; use printable characters only")
    if len(name) > REVIEWER_CHARACTERS:
        raise DecisionsError(f"the reviewer's name {name[:20]!r}... is longer than {REVIEWER_CHARACTERS} characters")
    return name


@dataclass(frozen=True)
class Decision:
    """One line of the log: a reviewer's vote on a record at a stage (included, "maybe", excluded with a
    reason, each with an optional note), a resolution of the reviewers' conflict, or an undo."""

    record_id: str
    action: Action
    reason: str | None = None
    at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    #: Where it came from: ``page``, ``cli``, ``import:<file name>``.
    source: str = "page"
    reviewer: str = DEFAULT_REVIEWER
    stage: str = TITLE_ABSTRACT
    note: str | None = None
    #: The decision settles the reviewers' votes on the record (an undo: takes back such a decision).
    resolution: bool = False

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise DecisionsError(f"record {self.record_id!r}: decision {self.action!r} is not one of {ACTIONS}")
        if self.action == "excluded" and not self.reason:
            raise DecisionsError(f"record {self.record_id!r}: an exclusion needs a reason")
        if self.stage not in STAGES:
            raise DecisionsError(f"record {self.record_id!r}: stage {self.stage!r} is not one of {STAGES}")
        if self.stage == FULLTEXT and self.action == "maybe":
            raise DecisionsError(f"record {self.record_id!r}: at full text, decide included or excluded, not maybe")
        checked_reviewer(self.reviewer)


#: How every line the log holds begins (the first field of :class:`Decision`).
_LINE_START = b'{"record_id": '


def decisions_path(slug: str) -> Path:
    return hysem_home() / "screening" / slug / "decisions.jsonl"


class DecisionLog:
    """The append-only decision log of one query."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield

    def append(self, decisions: Iterable[Decision]) -> None:
        """Add ``decisions`` in one write, on disk before this returns."""
        with self._locked(exclusive=True):
            self._write(list(decisions))

    def undo_latest(self, reviewer: str = DEFAULT_REVIEWER, stage: str = TITLE_ABSTRACT) -> str | None:
        """Take back ``reviewer``'s latest decision still standing at ``stage``, reading and writing under one
        lock (so two pages never undo the same decision); the record undone, or None when nothing stands."""
        with self._locked(exclusive=True):
            latest = last_decided(self._read(), reviewer, stage)
            if latest is not None:
                undo = Decision(latest.record_id, "undo", reviewer=reviewer, stage=stage, resolution=latest.resolution)
                self._write([undo])
        return None if latest is None else latest.record_id

    def read(self) -> list[Decision]:
        """Every decision in the order recorded; a line torn by a crash is skipped with a warning."""
        if not self.path.exists():
            return []
        with self._locked(exclusive=False):
            return self._read()

    def _write(self, decisions: list[Decision]) -> None:
        lines = "".join(json.dumps(asdict(d), ensure_ascii=False) + "\n" for d in decisions).encode()
        if not lines:
            return
        with open(self.path, "a+b") as file:
            if file.seek(0, os.SEEK_END):
                file.seek(-1, os.SEEK_END)
                if file.read(1) != b"\n":  # a line torn by a crash stays alone on its line, and skipped
                    lines = b"\n" + lines
            file.write(lines)
            file.flush()
            os.fsync(file.fileno())

    def _read(self) -> list[Decision]:
        content = self.path.read_bytes() if self.path.exists() else b""
        decisions = []
        for number, line in enumerate(content.split(b"\n"), start=1):
            if not line.strip():
                continue
            try:
                decisions.append(Decision(**json.loads(line.decode("utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                if not _torn(line):
                    raise self._not_a_decision(number, exc) from None
                log.warning(f"{self.path}: line {number} was cut short (a crash while writing); skipped")
            except (TypeError, DecisionsError) as exc:  # whole JSON with wrong fields is no crash
                raise self._not_a_decision(number, exc) from None
        return decisions

    def _not_a_decision(self, number: int, problem: Exception) -> DecisionsError:
        return DecisionsError(
            f"{self.path}, line {number}: not a decision ({problem}); the log is written by hysem only, "
            "restore it from a backup or remove that line"
        )

    def current(self, stage: str = TITLE_ABSTRACT) -> dict[str, Decision]:
        """Each decided record's resolved decision at ``stage`` (see :func:`current_decisions`)."""
        return current_decisions(self.read(), stage)


def _torn(line: bytes) -> bool:
    """A line a crash cut: it begins as every line hysem writes does (or is a beginning of that),
    yet does not parse: its end, perhaps mid-character, never reached the disk."""
    return line.startswith(_LINE_START) or _LINE_START.startswith(line)


@dataclass(frozen=True)
class Votes:
    """The decisions standing at one stage: each reviewer's vote per record, and the resolutions (its
    conflicts and resolved decisions are worked out once, when first asked for)."""

    #: reviewer -> record -> that reviewer's current vote, reviewers in the order they first decided.
    reviewers: dict[str, dict[str, Decision]]
    #: record -> the resolution standing (the latest, when several people resolved it).
    resolutions: dict[str, Decision]
    #: Each standing decision's position in the log.
    order: dict[int, int]

    def votes(self, record: str) -> list[Decision]:
        return [votes[record] for votes in self.reviewers.values() if record in votes]

    @cached_property
    def conflicts(self) -> dict[str, list[Decision]]:
        """record -> the votes that disagree on whether it goes on, for records no resolution settles."""
        records = dict.fromkeys(record for votes in self.reviewers.values() for record in votes)
        disputed = {record: self.votes(record) for record in records if record not in self.resolutions}
        return {record: votes for record, votes in disputed.items() if len({goes_on(v) for v in votes}) > 1}

    @cached_property
    def resolved(self) -> dict[str, Decision]:
        """record -> its decision: the resolution, else the reviewers' agreed vote (included over "maybe",
        then the latest); a record in conflict is left out, undecided."""
        conflicts = self.conflicts
        resolved: dict[str, Decision] = {}
        for votes in self.reviewers.values():
            for record in votes:
                if record in resolved or record in conflicts:
                    continue
                agreed = self.votes(record)
                resolved[record] = self.resolutions.get(record) or max(
                    agreed, key=lambda vote: (vote.action == "included", self.order[id(vote)])
                )
        return resolved | self.resolutions


def goes_on(decision: Decision) -> bool:
    """Whether ``decision`` sends its work on to the next stage ("maybe" does, as in Covidence)."""
    return decision.action in GOES_ON


def replay(decisions: Iterable[Decision], stage: str = TITLE_ABSTRACT) -> Votes:
    """The votes standing at ``stage`` after ``decisions``: per record and reviewer (and per record and
    resolver for resolutions) a stack of decisions that an undo of theirs pops."""
    stacks: dict[tuple[str, str, bool], list[tuple[int, Decision]]] = {}
    for index, decision in enumerate(decisions):
        if decision.stage != stage:
            continue
        stack = stacks.setdefault((decision.record_id, decision.reviewer, decision.resolution), [])
        if decision.action == "undo":
            if stack:
                stack.pop()
        else:
            stack.append((index, decision))
    standing = sorted((stack[-1] for stack in stacks.values() if stack), key=lambda entry: entry[0])
    reviewers: dict[str, dict[str, Decision]] = {}
    resolutions: dict[str, Decision] = {}
    for _, decision in standing:
        if decision.resolution:
            resolutions[decision.record_id] = decision
        else:
            reviewers.setdefault(decision.reviewer, {})[decision.record_id] = decision
    return Votes(reviewers, resolutions, {id(decision): index for index, decision in standing})


def current_decisions(decisions: Iterable[Decision], stage: str = TITLE_ABSTRACT) -> dict[str, Decision]:
    """Replay ``decisions``: each record's resolved decision at ``stage`` (see :meth:`Votes.resolved`)."""
    return replay(decisions, stage).resolved


def last_decided(
    decisions: Iterable[Decision], reviewer: str = DEFAULT_REVIEWER, stage: str = TITLE_ABSTRACT
) -> Decision | None:
    """The decision an undo of ``reviewer`` at ``stage`` would take back: their latest still standing, or None."""
    standing: list[Decision] = []
    for decision in decisions:
        if decision.stage != stage or decision.reviewer != reviewer:
            continue
        if decision.action != "undo":
            standing.append(decision)
            continue
        same = [
            k
            for k, d in enumerate(standing)
            if (d.record_id, d.resolution) == (decision.record_id, decision.resolution)
        ]
        if same:
            del standing[same[-1]]
    return standing[-1] if standing else None
