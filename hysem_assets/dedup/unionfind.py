"""Union-find with merge guards.

Pairwise matches are transitive once clustered: A~B and B~C put A and C together.
The guards keep that transitivity from joining what must stay apart: two clusters
whose exclusive keys (their DOIs) differ never merge, and a union may demand that
the merged cluster's numeric span (its publication years) stays small.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


class UnionFind:
    """Disjoint sets over ``0..size-1`` with per-cluster exclusive key and value span."""

    def __init__(
        self,
        size: int,
        exclusive: Sequence[Hashable | None] | None = None,
        values: Sequence[int | None] | None = None,
    ) -> None:
        self._parent = list(range(size))
        self._size = [1] * size
        self._key: list[Hashable | None] = [None] * size if exclusive is None else list(exclusive)
        self._low: list[int | None] = [None] * size if values is None else list(values)
        self._high: list[int | None] = list(self._low)

    def find(self, item: int) -> int:
        """The representative of ``item``'s set (with path halving)."""
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def conflict(self, a: int, b: int, max_span: int | None = None) -> bool:
        """Whether joining the sets of ``a`` and ``b`` would break a guard."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        ka, kb = self._key[ra], self._key[rb]
        if ka is not None and kb is not None and ka != kb:
            return True
        if max_span is None:
            return False
        lows = [v for v in (self._low[ra], self._low[rb]) if v is not None]
        highs = [v for v in (self._high[ra], self._high[rb]) if v is not None]
        return bool(lows) and max(highs) - min(lows) > max_span

    def union(self, a: int, b: int, max_span: int | None = None) -> bool:
        """Join the sets of ``a`` and ``b``; False (and nothing changes) on a conflict.

        Returns True when both end up in one set, including when they already were.
        """
        if self.conflict(a, b, max_span):
            return False
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]
        if self._key[ra] is None:
            self._key[ra] = self._key[rb]
        lows = [v for v in (self._low[ra], self._low[rb]) if v is not None]
        highs = [v for v in (self._high[ra], self._high[rb]) if v is not None]
        self._low[ra] = min(lows) if lows else None
        self._high[ra] = max(highs) if highs else None
        return True

    def groups(self) -> list[list[int]]:
        """All sets as sorted member lists, ordered by their smallest member."""
        members: dict[int, list[int]] = {}
        for item in range(len(self._parent)):
            members.setdefault(self.find(item), []).append(item)
        return sorted(members.values(), key=lambda group: group[0])
