from hysem_assets.parsing.geometry import Box
from hysem_assets.parsing.lines import attach_scripts, group_rows, page_segments, split_segments, visual_order
from hysem_assets.parsing.words import Word
from hysem_assets_tests.parsing.builders import segment, words


def test_a_justified_line_with_wide_even_spaces_stays_one_segment():
    line = words("every space of this narrow justified line is stretched", 50, 100, space=11.0)
    assert [s.text for s in split_segments(line)] == ["every space of this narrow justified line is stretched"]


def test_a_row_across_two_columns_splits_at_the_gutter():
    row = [*words("left column text", 50, 100), *words("right column text", 320, 100)]
    assert [s.text for s in split_segments(row)] == ["left column text", "right column text"]


def test_table_cells_with_similar_gaps_split():
    row = [
        word
        for text, left in (("Men", 50), ("15,123", 120), ("1.019", 190), ("0.988-1.049", 260))
        for word in words(text, left, 100)
    ]
    assert len(split_segments(row)) == 4


def test_a_bullet_keeps_the_text_it_introduces():
    row = [Word("•", Box(50, 100, 55, 110)), *words("first point", 68, 100)]
    assert [s.text for s in split_segments(row)] == ["• first point"]


def test_right_to_left_rows_read_from_the_right_keeping_latin_runs():
    arabic = [Word("بلغة", Box(300, 100, 330, 110)), Word("البرمجة", Box(340, 100, 380, 110))]
    latin = [Word("R", Box(250, 100, 256, 110)), Word("Python", Box(200, 100, 240, 110))]
    ordered = visual_order([*arabic, *latin], rtl=True)
    assert [w.text for w in ordered] == ["البرمجة", "بلغة", "Python", "R"]


def test_subscripts_join_their_line():
    base = segment("x = a + b", 100, 100, height=10.0)
    index = segment("t", 112, 106, height=6.0)
    merged = attach_scripts([base, index])
    assert len(merged) == 1 and "t" in merged[0].text.split()


def test_rows_group_words_sharing_a_band():
    line_one = words("first line", 50, 100)
    line_two = words("second line", 50, 114)
    rows = group_rows([*line_two, *line_one], lambda w: w.box)
    assert [[w.text for w in row] for row in rows] == [["first", "line"], ["second", "line"]]
    assert [s.text for s in page_segments([*line_two, *line_one])] == ["first line", "second line"]
