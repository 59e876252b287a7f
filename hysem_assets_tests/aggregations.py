"""Aggregations computed here, from a partition's own tables, to check the answers of the graph routes.

Nothing here calls the code under test: counts, quantiles and years come from the extracted
rows, the corpus and the statistics module, and answers are read back from their claim text.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

_NUMBER = r"([\d,.]+)"


#: The source types of notices about another work: errata and retraction notices.
NOTICE_TYPES = ("erratum", "retraction of publication")


def counted_works(corpus: pd.DataFrame) -> set[str]:
    """Cluster ids of the works an answer counts: not retracted, and no notice (the sources type them so)."""
    notices = corpus["item_type"].fillna("").str.casefold().isin(NOTICE_TYPES)
    retracted = corpus["is_retracted"].fillna(False).astype(bool)
    return set(corpus.loc[~notices & ~retracted, "cluster_id"])


def canonical_terms_of(extracted: pd.DataFrame, canonical: pd.DataFrame, field: str) -> dict[str, set[str]]:
    """Cluster id -> the canonical terms of ``field`` its extracted row holds (through ``canonical_terms``)."""
    mapping = canonical[canonical["field"] == field].set_index("raw_term")["canonical"].to_dict()
    return {
        str(cluster): {mapping.get(term, term) for term in json.loads(values)} if isinstance(values, str) else set()
        for cluster, values in zip(extracted["cluster_id"], extracted[field], strict=True)
    }


def ranking(terms: Mapping[str, set[str]], works: set[str]) -> dict[str, int]:
    """Works per term, each work once, among ``works``."""
    return dict(Counter(term for cluster, found in terms.items() if cluster in works for term in found))


def shown(value: float) -> float:
    """A statistic as answers round it: whole above 100, three significant digits below."""
    return round(value) if abs(value) >= 100 else float(f"{value:.3g}")


def summary(values: Sequence[float]) -> tuple[float, ...]:
    """(median, q1, q3, min, max, mean), quartiles by linear interpolation, as answers state them."""
    if len(values) == 1:
        return tuple(shown(values[0]) for _ in range(6))
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return tuple(shown(v) for v in (median, q1, q3, min(values), max(values), statistics.mean(values)))


def summary_in(text: str, unit: str) -> tuple[float, ...]:
    """The (median, q1, q3, min, max, mean) a claim states."""
    found = re.search(
        rf"median {_NUMBER} {unit} \(IQR {_NUMBER}-{_NUMBER}\), range {_NUMBER}-{_NUMBER}, mean {_NUMBER}\.", text
    )
    assert found, text
    return tuple(float(group.replace(",", "")) for group in found.groups())


def per_year(years: Mapping[str, int], counted: Iterable[str], works: set[str]) -> dict[int, tuple[int, int]]:
    """Year -> (counted works published that year, all ``works`` of that year), for years with a counted work."""
    totals = Counter(year for cluster, year in years.items() if cluster in works)
    found = Counter(years[c] for c in counted if c in works and c in years)
    return {year: (count, totals[year]) for year, count in found.items()}


def per_year_in(claims: Iterable[str]) -> dict[int, tuple[int, int]]:
    """The year -> (works, of) lines of a trend answer."""
    return {
        int(m[1]): (int(m[2]), int(m[3]))
        for text in claims
        if (m := re.fullmatch(r"(\d{4}): (\d+) of (\d+) works \(\d+%\)\.", text))
    }
