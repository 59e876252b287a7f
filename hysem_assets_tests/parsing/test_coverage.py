"""No line of Docling's native output is lost by the reconstruction unless a named rule removed it."""

from __future__ import annotations

from docling_core.types.doc import DocItemLabel

from hysem_assets.parsing.coverage import cover
from hysem_assets_tests.parsing.builders import cell, cluster

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
    kept, report = cover(LINES, clusters, removed=[LINES[3].text])
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
    kept, report = cover(LINES, [joined], removed=["Journal of Examples 12"])
    assert report.restored == 0 and len(kept) == 1


def test_without_its_rule_a_running_header_is_restored():
    body = [cluster(DocItemLabel.TEXT, 50, 100, 500, 220, *(LINES[k].text for k in (0, 1, 2, 4, 5)))]
    _, report = cover(LINES, body, removed=[])
    assert report.restored == 1


def test_a_reading_order_that_disagrees_strongly_with_doclings_gives_way_to_it():
    reversed_clusters = [
        cluster(DocItemLabel.TEXT, 50, 100, 500, 112, line.text, cluster_id=k)
        for k, line in reversed(list(enumerate(LINES)))
    ]
    kept, report = cover(LINES, reversed_clusters, removed=[])
    assert report.docling_order and texts(kept) == [[line.text] for line in LINES]
    agreeing = [cluster(DocItemLabel.TEXT, 50, 100, 500, 112, line.text, cluster_id=k) for k, line in enumerate(LINES)]
    swapped = agreeing[:2][::-1] + agreeing[2:]
    kept, report = cover(LINES, swapped, removed=[])
    assert not report.docling_order and kept == swapped
