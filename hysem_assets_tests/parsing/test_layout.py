"""Reading order, running headers, tables and block labels on synthetic pages."""

from docling_core.types.doc import DocItemLabel, Size

from hysem_assets.parsing.blocks import Block, BodyStyle, heading, label_blocks, region_blocks
from hysem_assets.parsing.columns import reading_regions
from hysem_assets.parsing.furniture import running_furniture
from hysem_assets.parsing.geometry import Box, is_sideways
from hysem_assets.parsing.lines import Segment, split_segments
from hysem_assets.parsing.margins import sideways_furniture, upright_words
from hysem_assets.parsing.tables import table_data
from hysem_assets.parsing.words import Word
from hysem_assets_tests.parsing.builders import PAGE, segment, sideways_cell, words

STYLE = BodyStyle(font="Body", height=10.0)
PROSE = "words of running text fill this line"


def column(left: float, top: float, lines: int, tag: str) -> list[Segment]:
    return [segment(f"{tag}{k} {PROSE}", left, top + 14 * k) for k in range(lines)]


def test_two_columns_under_a_full_width_title_read_title_left_right():
    title = segment("A title that runs across both columns of the page", 60, 60, height=16.0)
    regions = reading_regions([title, *column(60, 100, 12, "L"), *column(320, 100, 12, "R")])
    assert [r[0].text.split()[0] for r in regions] == ["A", "L0", "R0"]
    assert [len(r) for r in regions] == [1, 12, 12]


def test_a_full_width_figure_caption_between_columns_separates_two_bands():
    caption = segment("Figure 1. A caption under a figure that spans both columns", 60, 300)
    regions = reading_regions(
        [
            *column(60, 100, 10, "A"),
            *column(320, 100, 10, "B"),
            caption,
            *column(60, 330, 5, "C"),
            *column(320, 330, 5, "D"),
        ]
    )
    assert [r[0].text.split()[0] for r in regions] == ["A0", "B0", "Figure", "C0", "D0"]


def test_a_table_is_not_mistaken_for_columns():
    rows = [
        split_segments(
            [
                *words("Group", 60, 100 + 14 * k),
                *words(f"{k}1,234", 200, 100 + 14 * k),
                *words(f"1.0{k}", 320, 100 + 14 * k),
            ]
        )
        for k in range(6)
    ]
    cells = [s for row in rows for s in row]
    assert len(reading_regions(cells)) == 1
    blocks = region_blocks(cells, STYLE)
    assert [b.label for b in blocks] == [DocItemLabel.TABLE]


def test_running_headers_and_page_numbers_are_furniture():
    size = Size(width=600, height=800)
    pages = [
        [
            segment("Journal of Examples 12 (2024)", 60, 30),
            segment(f"{opening} {PROSE}", 60, 300),
            segment(str(n), 295, 770),
        ]
        for n, opening in enumerate(("First,", "Second,", "Third,"), start=1)
    ]
    dropped = running_furniture(pages, [size] * 3)
    assert dropped == [{0, 2}, {0, 2}, {0, 2}]


def test_a_top_line_of_pages_that_repeat_whole_is_text_not_a_running_header():
    pages = [[segment("Docling bundles PDF conversion", 60, 30), segment(PROSE, 60, 300)] for _ in range(3)]
    assert running_furniture(pages, [Size(width=600, height=800)] * 3) == [set(), set(), set()]


def test_text_repeated_at_the_same_place_mid_page_is_furniture_and_elsewhere_is_not():
    stamp = "Licensed to the Example Library for personal use"
    pages = [
        [segment(stamp, 20, 400), segment(f"{opening} {PROSE}", 60, 300), segment("Results", 60, 500)]
        for opening in ("First,", "Second,")
    ]
    assert running_furniture(pages, [PAGE] * 2) == [{0}, {0}]  # "Results" is too short to be a stamp
    pages[1][0] = segment(stamp, 20, 600)  # the same words elsewhere: a quotation, not the page's template
    assert running_furniture(pages, [PAGE] * 2) == [set(), set()]


def test_a_lone_page_number_at_the_bottom_goes_even_outside_the_band():
    page = [segment(PROSE, 60, 300), segment("7", 295, 650)]
    assert running_furniture([page], [PAGE]) == [{1}]


def test_table_grid_keeps_rows_columns_and_a_wrapped_header():
    cells = [
        ("Group", Box(50, 110, 80, 118)),
        ("RR per 10", Box(200, 100, 240, 108)),
        ("units", Box(200, 110, 225, 118)),
        ("All", Box(50, 130, 65, 138)),
        ("1.011", Box(200, 130, 225, 138)),
        ("Men", Box(50, 150, 68, 158)),
        ("1.019", Box(200, 150, 225, 158)),
    ]
    grid = [[c.text for c in row] for row in table_data(cells).grid]
    assert grid == [["Group", "RR per 10 units"], ["All", "1.011"], ["Men", "1.019"]]


def test_paragraphs_split_at_indents_and_short_sentence_ends():
    lines = [
        segment("The first paragraph starts here and runs on", 60, 100),
        segment("to a short end.", 50, 114),
        segment("A second paragraph starts on a line of its", 60, 128),
        segment("own and ends.", 50, 142),
    ]
    blocks = region_blocks(lines, STYLE)
    assert [len(b.rows) for b in blocks] == [2, 2]


def block(text: str, height: float = 10.0, font: str = "Body") -> Block:
    return Block(DocItemLabel.TEXT, [[segment(text, 60, 100, height=height, font=font)]])


def test_headings_are_set_apart_by_size_numbering_or_name():
    assert heading(block("Results", height=14.0), STYLE)
    assert heading(block("2.1 Data sources", font="Heading"), STYLE)
    assert heading(block("References"), STYLE)
    assert heading(block("Stainless Steel Self-Locking Nut", font="Italic"), STYLE)
    assert not heading(block("2.1 Data sources"), STYLE)
    assert not heading(block("A plain sentence in the body font."), STYLE)
    assert not heading(block("Table 2. Estimates by group", font="Caption", height=12.0), STYLE)


def test_the_largest_text_at_the_top_of_page_one_is_the_title():
    blocks = [block("A Study Of Things", height=18.0), block(PROSE)]
    label_blocks(blocks, STYLE, first_page=True, page_height=800)
    assert [b.label for b in blocks] == [DocItemLabel.TITLE, DocItemLabel.TEXT]


def test_sideways_lines_beside_the_text_are_furniture_unless_the_page_is_turned():
    stamp = sideways_cell("Downloaded from example.org", 560, 200, 572, 500)
    assert is_sideways(stamp.rect)
    body = words("upright words of the body", 100, 300)
    turned = [Word(w.text, w.box, sideways=True) for w in words("a landscape table set sideways on the page", 100, 300)]
    found = sideways_furniture([[stamp], [stamp]], [body, upright_words(turned + body[:1])], [PAGE] * 2)
    assert found == [[stamp], []]
