"""Candidate pairs: only records sharing a blocking key are compared.

Keys are chosen so that one typo cannot hide a duplicate (title prefix and title
suffix), while a rewritten title is still caught through the first author and year.
Blocks that grow large (common title openings, frequent surnames) are not compared
all-against-all; their records are sorted by title and compared with near neighbours,
which keeps the cost close to linear.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from itertools import combinations

from hysem_assets.dedup.features import RecordFeatures

TITLE_KEY_CHARS = 20
MAX_BLOCK = 48
WINDOW = 6


def blocking_keys(record: RecordFeatures) -> Iterator[str]:
    """The blocks a record belongs to."""
    for key in record.title_keys:
        yield "p:" + key[:TITLE_KEY_CHARS]
        yield "s:" + key[-TITLE_KEY_CHARS:]
    if record.authors and record.year is not None:
        first = record.authors[0]
        for word in first.surnames if first.ordered else first.words:
            yield f"a:{word}:{record.year}"
    if record.volume and record.page:
        yield f"l:{record.volume}:{record.page}"


def candidate_pairs(
    features: Sequence[RecordFeatures], max_block: int = MAX_BLOCK, window: int = WINDOW
) -> list[tuple[int, int]]:
    """Sorted, unique index pairs ``(i, j)`` with ``i < j`` worth comparing."""
    blocks: dict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(features):
        for key in set(blocking_keys(record)):
            blocks[key].append(index)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        if len(members) <= max_block:
            pairs.update(combinations(members, 2))
            continue
        ordered = sorted(members, key=lambda i: (features[i].title_key, i))
        for offset in range(1, window + 1):
            pairs.update((min(a, b), max(a, b)) for a, b in zip(ordered, ordered[offset:]))
    return sorted(pairs)
