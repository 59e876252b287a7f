"""What screening lets through, read from the ``screening`` table by the stages after it."""

from __future__ import annotations

import pandas as pd

#: The decision of a work no reviewer has decided.
UNDECIDED = "undecided"


def screened_in(corpus: pd.DataFrame, screening: pd.DataFrame) -> pd.DataFrame:
    """The works of ``corpus`` that go on to full text: included, or undecided and ranked high enough."""
    through = set(screening.loc[screening["proceeds"].astype(bool), "cluster_id"])
    return corpus[corpus["cluster_id"].isin(through)]


def reviewed(screening: pd.DataFrame) -> pd.Series:
    """Per row: a reviewer decided the work."""
    return screening["decision"] != UNDECIDED
