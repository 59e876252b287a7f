from __future__ import annotations

from hysem_assets.dedup.unionfind import UnionFind


def test_union_joins_sets_transitively():
    sets = UnionFind(5)
    assert sets.union(0, 1) and sets.union(1, 2)
    assert sets.find(0) == sets.find(2) != sets.find(3)
    assert sets.union(0, 2)  # already together
    assert sets.groups() == [[0, 1, 2], [3], [4]]


def test_exclusive_keys_never_share_a_set_even_through_a_chain():
    sets = UnionFind(3, exclusive=["10.1/a", None, "10.1/b"])
    assert sets.union(0, 1)
    assert sets.conflict(1, 2)
    assert not sets.union(1, 2)
    assert sets.groups() == [[0, 1], [2]]


def test_equal_exclusive_keys_join():
    sets = UnionFind(2, exclusive=["10.1/a", "10.1/a"])
    assert sets.union(0, 1)


def test_span_guard_limits_the_merged_value_range():
    sets = UnionFind(3, values=[2019, 2020, 2021])
    assert sets.union(0, 1, max_span=1)
    assert not sets.union(1, 2, max_span=1)  # 2019..2021 spans two years
    assert sets.union(1, 2)  # without a limit the span does not matter
    assert sets.groups() == [[0, 1, 2]]
