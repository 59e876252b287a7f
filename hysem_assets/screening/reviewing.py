"""Screening one query from the command line: its works, its page, and its decisions in and out.

The ``hysem screen`` commands call these; each reads the query's ``deduped_corpus`` file and
its decision log under ``HYSEM_HOME``, and raises :class:`ScreeningError` or
:class:`~hysem_assets.screening.decisions.DecisionsError` with the line to show.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hysem_assets.screening.decisions import Decision, DecisionLog, DecisionsError, current_decisions, decisions_path
from hysem_assets.screening.exchange import export_decisions, read_decisions_file
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import get_query
from hysem_assets.stores.tables import read_table

CORPUS = "deduped_corpus"


class ScreeningError(ValueError):
    """A query that cannot be screened yet; the message says what to run first."""


def query_corpus(slug: str) -> pd.DataFrame:
    """The works of query ``slug`` to screen; an undeclared query is refused with the queries it could be."""
    get_query(slug)
    path = asset_file(CORPUS, slug)
    if not path.is_file():
        raise ScreeningError(
            f"{CORPUS} is not materialized for {slug!r}; run `hysem materialize --query {slug} --select {CORPUS}` "
            "first, then screen its works"
        )
    return read_table(path)


def screening_page(slug: str, say: Callable[[str], None]):
    """The page that screens query ``slug``: ranked by its protocol's criteria, then by the classifier
    retrained on every decision; ``say`` hears the criteria's note and the ranking start."""
    from hysem_assets.screening.session import Screening, review_criteria
    from hysem_assets.screening.web import ScreeningPage
    from hysem_assets.settings.catalog import review_for
    from hysem_assets.settings.profile import load_settings

    corpus = query_corpus(slug)
    criteria = review_criteria(review_for(slug))
    if criteria.note:
        say(f"Note: {criteria.note}.")
    say(f"Ranking {len(corpus):,} works of {slug!r} ...")
    session = Screening(corpus[["cluster_id", "title", "abstract"]], criteria)
    target = load_settings().profile.assets.screening.target_recall
    return ScreeningPage(slug, session, corpus, DecisionLog(decisions_path(slug)), target)


@dataclass(frozen=True)
class Imported:
    """What an import added: new decisions, changed ones, and those already so."""

    new: int
    changed: int
    same: int


def _said(decision: Decision) -> str:
    return decision.action + (f" ({decision.reason})" if decision.reason else "")


def import_decisions(path: Path, slug: str, *, replace: bool = False) -> Imported:
    """Add the decisions of ``path`` to query ``slug``'s log, whole or not at all; decisions that differ from
    ones already made are refused unless ``replace``."""
    corpus = query_corpus(slug)
    log = DecisionLog(decisions_path(slug))
    imported = read_decisions_file(path, corpus)
    current = current_decisions(log.read())
    new = [d for d in imported if d.record_id not in current]
    changed = [
        d
        for d in imported
        if d.record_id in current and (current[d.record_id].action, current[d.record_id].reason) != (d.action, d.reason)
    ]
    if changed and not replace:
        first = changed[0]
        raise DecisionsError(
            f"{path}: {len(changed)} decision(s) differ from ones already made (first: work {first.record_id!r}, "
            f"{_said(current[first.record_id])} here, {_said(first)} in the file); nothing was imported. "
            "Add --replace to take the file's"
        )
    log.append([*new, *changed])
    return Imported(len(new), len(changed), len(imported) - len(new) - len(changed))


def export_query_decisions(path: Path, slug: str) -> tuple[int, int]:
    """Write every work of query ``slug`` with its decision to ``path``; the rows written and those decided."""
    corpus = query_corpus(slug)
    decisions = DecisionLog(decisions_path(slug)).current()
    rows = export_decisions(corpus, decisions, path)
    return rows, sum(record in decisions for record in corpus["cluster_id"].astype(str))
