from docling_core.types.doc import DocItemLabel

from hysem_assets.parsing.clusters import cluster_text, equation_number, merge_formula_clusters, relabel_sparse_tables
from hysem_assets_tests.parsing.builders import PAGE, cell, cluster

FORMULA, TEXT, TABLE = DocItemLabel.FORMULA, DocItemLabel.TEXT, DocItemLabel.TABLE


def test_stacked_lines_of_one_equation_become_one_formula():
    clusters = [
        cluster(TEXT, 72, 100, 520, 140, "text before", cluster_id=0),
        cluster(FORMULA, 150, 150, 400, 162, "f(x) = a + b", cluster_id=1),
        cluster(FORMULA, 170, 165, 380, 177, "+ c + d", cluster_id=2),
        cluster(TEXT, 72, 190, 520, 230, "text after", cluster_id=3),
    ]
    merged = merge_formula_clusters(clusters, PAGE)
    assert [c.id for c in merged] == [0, 1, 3]
    formula = merged[1]
    assert cluster_text(formula) == "f(x) = a + b + c + d"
    assert (formula.bbox.l, formula.bbox.t, formula.bbox.r, formula.bbox.b) == (150, 150, 400, 177)


def test_equations_with_their_own_numbers_stay_apart():
    clusters = [
        cluster(FORMULA, 150, 150, 400, 162, "a = b", cluster_id=1),
        cluster(TEXT, 500, 150, 520, 162, "(1)", cluster_id=2),
        cluster(FORMULA, 150, 165, 400, 177, "c = d", cluster_id=3),
        cluster(TEXT, 500, 165, 520, 177, "(2)", cluster_id=4),
    ]
    assert equation_number(clusters[0], clusters, PAGE) == "(1)"
    assert [c.id for c in merge_formula_clusters(clusters, PAGE)] == [1, 2, 3, 4]


def test_numbers_inside_the_formulas_also_keep_them_apart():
    clusters = [cluster(FORMULA, 150, 150, 520, 162, "a = b (3)"), cluster(FORMULA, 150, 165, 520, 177, "c = d (4)")]
    assert len(merge_formula_clusters(clusters, PAGE)) == 2


def test_an_unnumbered_line_joins_the_numbered_equation_it_continues():
    clusters = [
        cluster(FORMULA, 150, 150, 400, 162, "a = b +", cluster_id=1),
        cluster(FORMULA, 150, 165, 520, 177, "c + d (5)", cluster_id=2),
    ]
    merged = merge_formula_clusters(clusters, PAGE)
    assert len(merged) == 1 and cluster_text(merged[0]) == "a = b + c + d (5)"


def test_formulas_with_text_between_or_far_apart_stay_apart():
    between = [
        cluster(FORMULA, 150, 150, 400, 162, "a = b"),
        cluster(TEXT, 72, 163, 520, 164.5, "where"),
        cluster(FORMULA, 150, 166, 400, 178, "c = d"),
    ]
    apart = [cluster(FORMULA, 150, 150, 400, 162, "a = b"), cluster(FORMULA, 150, 300, 400, 312, "c = d")]
    side_by_side = [cluster(FORMULA, 72, 150, 250, 162, "a = b"), cluster(FORMULA, 300, 165, 520, 177, "c = d")]
    for clusters in (between, apart, side_by_side):
        assert len(merge_formula_clusters(clusters, PAGE)) == len(clusters)


def test_a_page_sized_table_with_little_text_is_read_as_text():
    sparse = cluster(TABLE, 40, 40, 560, 760)
    sparse.cells = [cell("Name ____", 60, 60, 160, 72), cell("Date ____", 60, 400, 160, 412)]
    relabelled = relabel_sparse_tables([sparse], PAGE)
    assert relabelled[0].label == TEXT and relabelled[0].cells == sparse.cells


def test_full_and_small_tables_stay_tables():
    dense = cluster(TABLE, 40, 40, 560, 760, *[f"row {k} with many cells of text" for k in range(40)])
    small_sparse = cluster(TABLE, 100, 100, 300, 200)
    small_sparse.cells = [cell("1", 110, 110, 120, 120)]
    assert [c.label for c in relabel_sparse_tables([dense, small_sparse], PAGE)] == [TABLE, TABLE]
