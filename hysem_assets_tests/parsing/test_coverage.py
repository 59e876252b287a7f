"""No line of Docling's native output is lost by the reconstruction unless a named rule removed it."""

from __future__ import annotations

from docling_core.types.doc import DocItemLabel

from hysem_assets.parsing.coverage import cover
from hysem_assets_tests.parsing.builders import NOUNS, cell, cluster

LINES = [
    cell(text, 50, 100 + 20 * k, 500, 112 + 20 * k)
    for k, text in enumerate(
        (
            "Ozone exposure was measured daily at each monitor-",
            "ing station across the study period.",
            "Admissions rose on days of high exposure.",
            "Journal of Examples 12",
            "Figure label inside a chart",
            "The effect held in every season of the year.",
        )
    )
]


def texts(clusters) -> list[list[str]]:
    return [[c.text for c in k.cells] for k in clusters]


def test_a_line_the_layout_lost_is_put_back_after_the_line_before_it():
    clusters = [
        cluster(DocItemLabel.TEXT, 50, 100, 500, 160, LINES[0].text, LINES[1].text, LINES[2].text),
        cluster(DocItemLabel.TEXT, 50, 200, 500, 212, LINES[5].text, cluster_id=1),
    ]
    kept, report = cover(LINES, clusters, [LINES[3].text], 800)
    assert report.restored == 1 and not report.docling_order
    assert texts(kept) == [[LINES[0].text, LINES[1].text, LINES[2].text], [LINES[4].text], [LINES[5].text]]
    assert kept[1].label == DocItemLabel.TEXT


def test_merged_rejoined_and_respaced_lines_count_as_kept():
    joined = cluster(
        DocItemLabel.TEXT,
        50,
        100,
        500,
        220,
        "Ozone exposure was measured daily at each monitoring station across the study period.",
        "Admissions rose on days of high exposure.",
        "Figure label inside a chart",
        "The effect held in every season of the year.",
    )
    kept, report = cover(LINES, [joined], ["Journal of Examples 12"], 800)
    assert report.restored == 0 and len(kept) == 1


def test_without_its_rule_a_running_header_is_restored():
    body = [cluster(DocItemLabel.TEXT, 50, 100, 500, 220, *(LINES[k].text for k in (0, 1, 2, 4, 5)))]
    _, report = cover(LINES, body, [], 800)
    assert report.restored == 1


def test_a_reading_order_that_disagrees_strongly_with_doclings_gives_way_to_it():
    reversed_clusters = [
        cluster(DocItemLabel.TEXT, 50, 100, 500, 112, line.text, cluster_id=k)
        for k, line in reversed(list(enumerate(LINES)))
    ]
    kept, report = cover(LINES, reversed_clusters, [], 800)
    assert report.docling_order and texts(kept) == [[line.text] for line in LINES]
    agreeing = [cluster(DocItemLabel.TEXT, 50, 100, 500, 112, line.text, cluster_id=k) for k, line in enumerate(LINES)]
    swapped = agreeing[:2][::-1] + agreeing[2:]
    kept, report = cover(LINES, swapped, [], 800)
    assert not report.docling_order and kept == swapped


def column(count: int, left: float, first: int = 0) -> list:
    """``count`` lines of one column, 10 points high, each directly below the one before."""
    return [
        cell(
            f"Line {first + k} tells of the {NOUNS[k % len(NOUNS)]} by the {NOUNS[(3 * k) % len(NOUNS)]}",
            left,
            100 + 12 * k,
            left + 200,
            110 + 12 * k,
        )
        for k in range(count)
    ]


def paragraphs(lines: list, size: int) -> list:
    """The lines as text clusters of ``size`` lines each, as the reconstruction would join them."""
    return [
        cluster(DocItemLabel.TEXT, 50, 100, 250, 200, *(line.text for line in lines[k : k + size]), cluster_id=k)
        for k in range(0, len(lines), size)
    ]


def interleaved(*texts: str) -> str:
    return " ".join(word for words in zip(*(t.split() for t in texts)) for word in words)


def test_a_cluster_that_mixed_two_lines_word_by_word_gives_way_to_doclings_lines():
    lines = column(48, 50)
    clusters = paragraphs(lines, 4)
    clusters[2] = cluster(
        DocItemLabel.TEXT,
        50,
        196,
        250,
        244,
        lines[8].text,
        interleaved(lines[9].text, lines[10].text),
        lines[11].text,
        cluster_id=8,
    )
    kept, report = cover(lines, clusters, [], 800)
    assert report.broken == 2 and not report.docling_lines
    assert texts(kept)[2] == [line.text for line in lines[8:12]]  # one paragraph again, its lines whole
    assert texts(kept)[:2] == texts(clusters)[:2] and texts(kept)[3:] == texts(clusters)[3:]


def test_lines_of_two_columns_joined_side_by_side_are_parted_into_their_columns():
    left, right = column(30, 50), column(30, 320, first=30)
    lines = left + right  # Docling reads the first column, then the second
    merged = cluster(DocItemLabel.TEXT, 50, 100, 520, 124, f"{left[0].text} {right[0].text}", cluster_id=0)
    merged.cells[0] = cell(left[0].text, 50, 100, 250, 110)
    merged.cells.append(cell(right[0].text, 320, 100, 520, 110))
    clusters = [merged, *paragraphs(left[1:], 29), *paragraphs(right[1:], 29)]
    kept, report = cover(lines, clusters, [], 800)
    assert report.broken == 2 and not report.docling_lines
    assert texts(kept)[:2] == [[left[0].text], [right[0].text]]


def test_a_page_read_across_its_columns_becomes_doclings_lines_joined_within_each_column():
    left, right = column(20, 50), column(20, 320, first=20)
    rows = [
        cluster(DocItemLabel.TEXT, 50, 100 + 12 * k, 520, 110 + 12 * k, interleaved(a.text, b.text), cluster_id=k)
        for k, (a, b) in enumerate(zip(left, right))
    ]
    kept, report = cover(left + right, rows, [], 800)
    assert report.docling_lines and report.broken == 40
    assert texts(kept) == [[line.text for line in left], [line.text for line in right]]


def test_a_table_may_split_a_line_into_its_cells():
    lines = column(12, 50)
    table = cluster(DocItemLabel.TABLE, 50, 100, 250, 244, *(w for line in lines for w in line.text.split()))
    _, report = cover(lines, [table], [], 800)
    assert report.broken == 0 and report.restored == 0


def test_a_figure_between_two_lines_of_one_paragraph_goes_after_the_paragraph():
    lines = column(8, 50)
    caption = cell("Figure 1. The harbour and the bridge", 320, 400, 520, 410)
    first = cluster(DocItemLabel.TEXT, 50, 100, 250, 146, *(line.text for line in lines[:4]), cluster_id=0)
    picture = cluster(DocItemLabel.PICTURE, 320, 200, 520, 390, cluster_id=1)
    label = cluster(DocItemLabel.CAPTION, 320, 400, 520, 410, caption.text, cluster_id=2)
    second = cluster(DocItemLabel.TEXT, 50, 148, 250, 194, *(line.text for line in lines[4:]), cluster_id=3)
    kept, _ = cover([*lines, caption], [first, picture, label, second], [], 800)
    assert [c.id for c in kept] == [0, 3, 1, 2]
    heading = cluster(DocItemLabel.SECTION_HEADER, 320, 100, 520, 110, caption.text, cluster_id=2)
    kept, _ = cover([*lines, caption], [first, picture, heading, second], [], 800)
    assert [c.id for c in kept] == [0, 1, 2, 3]  # a heading between them is a real break
