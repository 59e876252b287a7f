"""Why two records were or were not merged.

A reviewer who doubts a merge (or a missed one) needs the evidence, not a score:
which fields agreed and by how much, which difference ruled the pair out, and,
when the two were merged through other records, the chain of links that did it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import pandas as pd

from hysem_assets.dedup.cluster import IDENTIFIERS, cluster_records
from hysem_assets.dedup.features import RecordFeatures, record_features
from hysem_assets.dedup.match import Assessment, compare, describe_evidence


@dataclass(frozen=True)
class PairExplanation:
    """The decision on two records of one input and the evidence behind it.

    ``direct`` is the bibliographic comparison of the two; ``merged`` whether they
    ended in one cluster of the whole input; ``path`` the links that joined them
    (record id, record id, rule, evidence), empty when they were not merged.
    """

    record_ids: tuple[str, str]
    merged: bool
    direct: Assessment
    identifiers: tuple[str, ...]
    recurring: bool
    path: tuple[tuple[str, str, str, str], ...]

    def lines(self) -> list[str]:
        """The explanation as text lines for a terminal."""
        a, b = self.record_ids
        lines = [f"{a!r} and {b!r}: {'merged' if self.merged else 'not merged'}"]
        lines += [f"  identifiers: {text}" for text in self.identifiers]
        if self.recurring:
            lines.append("  title: a recurring item (a series title, or one printed in several volumes or issues)")
        verdict = "duplicates" if self.direct.duplicate else "not duplicates"
        lines.append(f"  compared directly: {verdict}, because {self.direct.reason}")
        lines.append(f"  title similarity: {self.direct.similarity:.3f}")
        support = [(f, p) for f, p in self.direct.evidence if p > 0]
        against = [(f, p) for f, p in self.direct.evidence if p < 0]
        lines.append(f"  evidence for: {describe_evidence(tuple(support)) or 'none'}")
        lines.append(f"  evidence against: {describe_evidence(tuple(against)) or 'none'}")
        if self.merged:
            lines.append("  merged by the links:")
            lines += [f"    {x} -- {y}: {rule} ({evidence})" for x, y, rule, evidence in self.path]
        elif self.direct.duplicate:
            lines.append(
                "  the match was refused when clustering: the clusters hold different DOIs "
                "or publication years too far apart"
            )
        return lines


def _identifier_notes(a: RecordFeatures, b: RecordFeatures) -> tuple[str, ...]:
    notes = []
    for field in IDENTIFIERS:
        left, right = getattr(a, field), getattr(b, field)
        name = field.removesuffix("_work")
        if left and right:
            notes.append(f"same {name} {left}" if left == right else f"different {name}s {left}, {right}")
    return tuple(notes)


def _path(pairs: pd.DataFrame, start: str, goal: str) -> tuple[tuple[str, str, str, str], ...]:
    """The shortest chain of links from ``start`` to ``goal`` (breadth-first)."""
    neighbours: dict[str, list[tuple[str, str, str]]] = {}
    for a, b, rule, evidence in pairs[["record_id_a", "record_id_b", "rule", "evidence"]].itertuples(index=False):
        neighbours.setdefault(a, []).append((b, rule, evidence))
        neighbours.setdefault(b, []).append((a, rule, evidence))
    came_from: dict[str, tuple[str, str, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for other, rule, evidence in neighbours.get(node, []):
            if other not in came_from:
                came_from[other] = (node, rule, evidence)
                queue.append(other)
    if goal not in came_from:
        return ()
    steps = []
    node = goal
    while (step := came_from[node]) is not None:
        previous, rule, evidence = step
        steps.append((previous, node, rule, evidence))
        node = previous
    return tuple(reversed(steps))


def explain_pair(frame: pd.DataFrame, record_a: str, record_b: str) -> PairExplanation:
    """Explain the decision on ``record_a`` and ``record_b`` within ``frame`` (the frame
    ``cluster_records`` takes). Records are judged in the context of the whole input,
    which tells, for instance, that a title recurs in several volumes."""
    record_ids = frame["record_id"].astype(str).tolist()
    missing = [rid for rid in (record_a, record_b) if rid not in record_ids]
    if missing:
        examples = ", ".join(map(repr, record_ids[:5]))
        raise ValueError(
            f"No record with ID {', '.join(map(repr, missing))} in the input; IDs look like {examples}. "
            "Use the values of the file's ID column."
        )
    features = record_features(frame)
    i, j = record_ids.index(record_a), record_ids.index(record_b)
    result = cluster_records(frame)
    merged = bool(result.cluster_id.iloc[i] == result.cluster_id.iloc[j])
    return PairExplanation(
        record_ids=(record_a, record_b),
        merged=merged,
        direct=compare(features[i], features[j]),
        identifiers=_identifier_notes(features[i], features[j]),
        recurring=features[i].recurring or features[j].recurring,
        path=_path(result.pairs, record_a, record_b) if merged else (),
    )
