from hysem_assets.parsing.line_numbers import LineNumberRule, line_number_indices
from hysem_assets_tests.parsing.builders import PAGE, cell


def margin_numbers(count: int, start: int = 1, left: float = 30.0) -> list:
    """Right-aligned line numbers in the left margin, one per 12-point line."""
    return [
        cell(str(n), left + 6 - 3 * len(str(n)), 100 + 12 * k, left + 6, 106 + 12 * k)
        for k, n in enumerate(range(start, start + count))
    ]


def body_lines(count: int) -> list:
    return [cell("a line of the article's running text", 72, 98 + 12 * k, 520, 108 + 12 * k) for k in range(count)]


def test_numbers_in_the_left_margin_are_found():
    cells = [*body_lines(20), *margin_numbers(20)]
    assert line_number_indices(cells, PAGE) == set(range(20, 40))


def test_every_fifth_line_numbered_also_counts():
    numbers = [cell(str(n), 28, 100 + 12 * n, 36, 106 + 12 * n) for n in range(5, 45, 5)]
    assert len(line_number_indices([*body_lines(45), *numbers], PAGE)) == len(numbers)


def test_a_table_column_of_digits_at_the_body_edge_stays():
    digits = [cell(str(n), 72, 300 + 12 * n, 78, 308 + 12 * n) for n in range(1, 8)]
    assert line_number_indices([*body_lines(10), *digits], PAGE) == set()


def test_two_numbers_are_not_a_margin():
    assert line_number_indices([*body_lines(10), *margin_numbers(2)], PAGE) == set()


def test_numbers_that_do_not_count_down_the_page_stay():
    shuffled = [cell(str(n), 30, 100 + 12 * k, 36, 106 + 12 * k) for k, n in enumerate([7, 2, 9, 1, 8, 3, 6])]
    assert line_number_indices([*body_lines(10), *shuffled], PAGE) == set()


def test_numbers_set_much_larger_than_the_text_stay():
    big = [cell(str(n), 20, 100 + 40 * n, 40, 130 + 40 * n) for n in range(1, 6)]
    assert line_number_indices([*body_lines(10), *big], PAGE) == set()


def test_numbers_far_from_the_left_edge_stay():
    cells = [*body_lines(20), *margin_numbers(20, left=560.0)]
    assert line_number_indices(cells, PAGE, LineNumberRule()) == set()
