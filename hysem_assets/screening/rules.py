"""What a decision at one stage of a query's screening may be, checked before anything is written.

The page, ``hysem screen decide`` and imports make their decisions here, so each refuses the
same things in the same words: a work the query does not hold, a reviewer's name that is empty
or holds a control character, an exclusion without one of the stage's reasons, and at full
text a work whose full text is not in hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from hysem_assets.screening.decisions import (
    DEFAULT_REVIEWER,
    FULLTEXT,
    TITLE_ABSTRACT,
    Decision,
    DecisionsError,
    checked_reviewer,
)

#: The decisions a reviewer may make at each stage.
STAGE_ACTIONS = {TITLE_ABSTRACT: ("included", "maybe", "excluded"), FULLTEXT: ("included", "excluded")}
NOTE_CHARACTERS = 4000


@dataclass(frozen=True)
class StageRules:
    """The works of one query and what deciding them at ``stage`` takes."""

    slug: str
    stage: str
    works: frozenset[str]
    reasons: tuple[str, ...]
    #: At full text: the works whose full text is in hand (parsed without error); unused at title and abstract.
    with_fulltext: frozenset[str] = frozenset()

    def decision(
        self,
        record_id: object,
        action: object,
        *,
        reason: object = None,
        note: object = None,
        reviewer: object = DEFAULT_REVIEWER,
        resolution: bool = False,
        source: str = "page",
    ) -> Decision:
        """The decision to append, or :class:`DecisionsError` saying in one line why it cannot be made."""
        name = checked_reviewer(reviewer)
        if not isinstance(record_id, str) or record_id not in self.works:
            raise DecisionsError(
                f"record {record_id!r} is not a work of query {self.slug!r}; check the id (or reload the page)"
            )
        if self.stage == FULLTEXT and record_id not in self.with_fulltext:
            raise DecisionsError(
                f"record {record_id!r} has no full text in hand (no parsed_docs row without an error); materialize "
                f"`pdfs` and `parsed_docs` for {self.slug!r}, or decide it at title and abstract"
            )
        actions = STAGE_ACTIONS[self.stage]
        if action not in actions:
            raise DecisionsError(f"record {record_id!r}: decide {' or '.join(map(repr, actions))}, not {action!r}")
        if action == "excluded" and reason not in self.reasons:
            raise DecisionsError(
                f"record {record_id!r}: exclude with one of the protocol's reasons ({', '.join(self.reasons)}), "
                f"not {reason!r}"
            )
        return Decision(
            record_id,
            action,  # type: ignore[arg-type]
            reason if action == "excluded" else None,
            source=source,
            reviewer=name,
            stage=self.stage,
            note=_note(record_id, note),
            resolution=resolution,
        )


def _note(record_id: str, note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > NOTE_CHARACTERS:
        raise DecisionsError(f"record {record_id!r}: a note is text of at most {NOTE_CHARACTERS} characters")
    return note.strip() or None
