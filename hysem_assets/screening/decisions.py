"""Screening decisions, kept durably per query in an append-only log.

Every decision is one JSON line appended to ``$HYSEM_HOME/screening/<query>/decisions.jsonl``
under an exclusive lock and synced to disk before it is acknowledged, so a killed server
loses nothing it has answered, and two pages open on one query never interleave their
lines. Nothing is ever rewritten: a changed mind is a new line, and "undo" is a line too.
Replaying the log gives each record's current decision: its decisions form a stack, and an
undo pops the top one.

A crash can only leave a last line half written (no newline after it); reading skips that
line, says so, and the next append starts on a fresh line.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from hysem_assets.settings.environment import hysem_home

log = logging.getLogger(__name__)

Action = Literal["included", "excluded", "undo"]
ACTIONS: tuple[Action, ...] = ("included", "excluded", "undo")


class DecisionsError(ValueError):
    """Decisions that cannot be recorded or read; the message names the record or line and what to do."""


@dataclass(frozen=True)
class Decision:
    """One line of the log: a record included, excluded (with a reason), or its last decision undone."""

    record_id: str
    action: Action
    reason: str | None = None
    at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    #: Where it came from: ``page``, ``import:<file name>``.
    source: str = "page"

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise DecisionsError(f"record {self.record_id!r}: decision {self.action!r} is not one of {ACTIONS}")
        if self.action == "excluded" and not self.reason:
            raise DecisionsError(f"record {self.record_id!r}: an exclusion needs a reason")


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

    def undo_latest(self) -> str | None:
        """Take back the latest decision still standing, reading and writing under one lock (so two
        pages never undo the same decision); the record undone, or None when nothing stands."""
        with self._locked(exclusive=True):
            record = last_decided(self._read())
            if record is not None:
                self._write([Decision(record, "undo")])
        return record

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

    def current(self) -> dict[str, Decision]:
        """Each decided record's current decision (undone ones are undecided again)."""
        return current_decisions(self.read())


def _torn(line: bytes) -> bool:
    """A line a crash cut: it begins as every line hysem writes does (or is a beginning of that),
    yet does not parse: its end, perhaps mid-character, never reached the disk."""
    return line.startswith(_LINE_START) or _LINE_START.startswith(line)


def current_decisions(decisions: Iterable[Decision]) -> dict[str, Decision]:
    """Replay ``decisions``: per record, a stack of decisions that an undo pops."""
    stacks: dict[str, list[Decision]] = {}
    for decision in decisions:
        stack = stacks.setdefault(decision.record_id, [])
        if decision.action == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(decision)
    return {record: stack[-1] for record, stack in stacks.items() if stack}


def last_decided(decisions: Iterable[Decision]) -> str | None:
    """The record whose decision an undo would take back: the latest still standing, or None."""
    standing: list[str] = []
    for decision in decisions:
        if decision.action != "undo":
            standing.append(decision.record_id)
        elif decision.record_id in standing:
            del standing[len(standing) - 1 - standing[::-1].index(decision.record_id)]
    return standing[-1] if standing else None
