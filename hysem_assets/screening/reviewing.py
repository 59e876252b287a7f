"""Screening one query from the command line: its works, its page, and its decisions in and out.

The ``hysem screen`` commands call these; each reads the query's ``deduped_corpus`` file (and,
at full text, its ``parsed_docs`` file) and its decision log under ``HYSEM_HOME``, and raises
:class:`ScreeningError` or
:class:`~hysem_assets.screening.decisions.DecisionsError` with the line to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from hysem_assets.screening.agreement import Agreement, stage_agreement
from hysem_assets.screening.decisions import (
    DEFAULT_REVIEWER,
    FULLTEXT,
    TITLE_ABSTRACT,
    Decision,
    DecisionLog,
    DecisionsError,
    checked_reviewer,
    decisions_path,
    replay,
)
from hysem_assets.screening.exchange import export_decisions, read_decisions_file
from hysem_assets.screening.rules import StageRules
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import get_query
from hysem_assets.stores.tables import read_table, stored_asset

if TYPE_CHECKING:
    from hysem_assets.screening.web import PdfAttaching

CORPUS = "deduped_corpus"
PARSED = "parsed_docs"


class ScreeningError(ValueError):
    """A query that cannot be screened yet; the message says what to run first."""


def query_corpus(slug: str) -> pd.DataFrame:
    """The works of query ``slug`` to screen; an undeclared query is refused with the queries it could be."""
    get_query(slug)
    return stored_asset(CORPUS, slug, "screen its works", ScreeningError)


def fulltexts(slug: str) -> dict[str, str]:
    """cluster id -> parsed Markdown, for the works of query ``slug`` whose full text is in hand (a
    ``parsed_docs`` row without an error); empty before ``parsed_docs`` is materialized."""
    path = asset_file(PARSED, slug)
    if not path.is_file():
        return {}
    parsed = read_table(path)
    parsed = parsed[parsed["error"].isna()]
    return dict(zip(parsed["cluster_id"].astype(str), parsed["markdown"].fillna("").astype(str)))


def stage_rules(slug: str, stage: str, corpus: pd.DataFrame) -> StageRules:
    """What a decision on query ``slug``'s works at ``stage`` takes (reasons from its protocol)."""
    from hysem_assets.screening.session import review_criteria
    from hysem_assets.settings.catalog import review_for

    reasons = review_criteria(review_for(slug)).stage_reasons(stage)
    in_hand = frozenset(fulltexts(slug)) if stage == FULLTEXT else frozenset()
    return StageRules(slug, stage, frozenset(corpus["cluster_id"].astype(str)), tuple(reasons), in_hand)


def screening_page(
    slug: str,
    say: Callable[[str], None],
    stage: str = TITLE_ABSTRACT,
    reviewer: str = DEFAULT_REVIEWER,
    attaching: PdfAttaching | None = None,
):
    """The page that screens query ``slug`` at ``stage``, for ``reviewer`` until the page names another:
    ranked by its protocol's criteria, then by the classifier retrained on every decision; ``say`` hears
    the criteria's note and the ranking start. The full-text stage needs ``parsed_docs``. With
    ``attaching``, the reviewer may attach a PDF to the record on screen."""
    from hysem_assets.screening.session import Screening, review_criteria
    from hysem_assets.screening.web import ScreeningPage
    from hysem_assets.settings.catalog import review_for
    from hysem_assets.settings.profile import load_settings

    checked_reviewer(reviewer)
    corpus = query_corpus(slug)
    texts = fulltexts(slug) if stage == FULLTEXT else {}
    if stage == FULLTEXT and not texts:
        raise ScreeningError(
            f"no full text of {slug!r} is in hand; run `hysem materialize --query {slug} --select {PARSED}` "
            "(it needs `pdfs`) first, then screen the full texts"
        )
    criteria = review_criteria(review_for(slug))
    if criteria.note:
        say(f"Note: {criteria.note}.")
    say(f"Ranking {len(corpus):,} works of {slug!r} ...")
    session = Screening(corpus[["cluster_id", "title", "abstract"]], criteria)
    target = load_settings().profile.assets.screening.target_recall
    rules = stage_rules(slug, stage, corpus)
    log = DecisionLog(decisions_path(slug))
    return ScreeningPage(session, corpus, log, target, rules, reviewer, texts, attaching)


def record_decision(slug: str, stage: str, record_id: str, action: str, **given) -> Decision:
    """Append one decision on a work of query ``slug`` (``given``: reason, note, reviewer, resolution),
    once :class:`StageRules` accept it; nothing is written otherwise."""
    rules = stage_rules(slug, stage, query_corpus(slug))
    decision = rules.decision(record_id, action, source="cli", **given)
    DecisionLog(decisions_path(slug)).append([decision])
    return decision


def undo_decision(slug: str, stage: str, reviewer: str) -> str | None:
    """Take back ``reviewer``'s latest decision still standing on query ``slug`` at ``stage``; the work
    undone, or None when nothing stands."""
    query_corpus(slug)
    return DecisionLog(decisions_path(slug)).undo_latest(checked_reviewer(reviewer), stage)


@dataclass(frozen=True)
class Conflict:
    """A work two reviewers disagree on and no resolution settled."""

    record_id: str
    title: str
    votes: list[Decision]


def conflicts(slug: str, stage: str) -> tuple[list[Conflict], Agreement | None]:
    """The unresolved conflicts of query ``slug`` at ``stage``, in the log's order, and the reviewers'
    agreement there."""
    titles = query_corpus(slug).set_index("cluster_id")["title"]
    votes = replay(DecisionLog(decisions_path(slug)).read(), stage)
    found = [
        Conflict(record, str(titles.get(record, "(a work this corpus no longer holds)")), disagreeing)
        for record, disagreeing in votes.conflicts.items()
    ]
    return found, stage_agreement(votes)


@dataclass(frozen=True)
class Imported:
    """What an import added: new decisions, changed ones, and those already so."""

    new: int
    changed: int
    same: int


def _said(decision: Decision) -> str:
    return decision.action + (f" ({decision.reason})" if decision.reason else "")


def _differs(made: Decision, given: Decision) -> bool:
    """Whether ``given`` changes the decision ``made``; a row without a note leaves the note as it is."""
    return _said(made) != _said(given) or (given.note is not None and given.note != made.note)


def import_decisions(path: Path, slug: str, *, reviewer: str, stage: str, replace: bool = False) -> Imported:
    """Add the decisions of ``path`` to query ``slug``'s log, whole or not at all; rows that name no
    reviewer or stage are ``reviewer``'s at ``stage``. Decisions that differ from ones their reviewer
    already made are refused unless ``replace``; a full-text decision on a work without its full text is
    refused."""
    corpus = query_corpus(slug)
    log = DecisionLog(decisions_path(slug))
    imported = read_decisions_file(path, corpus, reviewer=reviewer, stage=stage)
    if any(d.stage == FULLTEXT for d in imported):
        in_hand = stage_rules(slug, FULLTEXT, corpus).with_fulltext
        missing = [d.record_id for d in imported if d.stage == FULLTEXT and d.record_id not in in_hand]
        if missing:
            raise DecisionsError(
                f"{path}: {len(missing)} full-text decision(s) are for works without a full text in hand (first: "
                f"{missing[0]!r}); nothing was imported. Materialize `parsed_docs` for them, or remove those rows"
            )
    entries = log.read()
    votes = {each: replay(entries, each) for each in {d.stage for d in imported}}

    def current(decision: Decision) -> Decision | None:
        standing = votes[decision.stage]
        if decision.resolution:
            return standing.resolutions.get(decision.record_id)
        return standing.reviewers.get(decision.reviewer, {}).get(decision.record_id)

    new = [d for d in imported if current(d) is None]
    changed = [d for d in imported if current(d) is not None and _differs(current(d), d)]
    if changed and not replace:
        first = changed[0]
        raise DecisionsError(
            f"{path}: {len(changed)} decision(s) differ from ones already made (first: work {first.record_id!r}, "
            f"{_said(current(first))} here, {_said(first)} in the file, by {first.reviewer!r}); nothing was "
            "imported. Add --replace to take the file's"
        )
    log.append([*new, *changed])
    return Imported(len(new), len(changed), len(imported) - len(new) - len(changed))


def export_query_decisions(path: Path, slug: str, *, stage: str, reviewer: str | None = None) -> tuple[int, int]:
    """Write every work of query ``slug`` with its decision at ``stage`` to ``path``: the resolved one, or
    ``reviewer``'s own when named; the rows written and those decided."""
    corpus = query_corpus(slug)
    votes = replay(DecisionLog(decisions_path(slug)).read(), stage)
    decisions = votes.resolved if reviewer is None else votes.reviewers.get(reviewer, {})
    rows = export_decisions(corpus, decisions, path)
    return rows, sum(record in decisions for record in corpus["cluster_id"].astype(str))
