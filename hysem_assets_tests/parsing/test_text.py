from hysem_assets.parsing.text import join_lines, normalize, vocabulary


def test_wrapped_lines_join_with_a_space():
    assert join_lines(["The analysis used", "daily counts."]) == "The analysis used daily counts."


def test_a_word_hyphenated_at_the_line_end_closes_up():
    assert join_lines(["the recog-", "nition of tables"]) == "the recognition of tables"


def test_a_hyphen_the_document_writes_elsewhere_is_kept():
    known = vocabulary(["a", "non-linear", "model"])
    assert join_lines(["a non-", "linear model"], known) == "a non-linear model"


def test_a_dash_before_a_capital_or_after_a_space_is_not_hyphenation():
    assert join_lines(["Results -", "see below"]) == "Results - see below"
    assert join_lines(["COVID-", "19 cases"]) == "COVID- 19 cases"


def test_chinese_lines_join_without_a_space():
    assert join_lines(["空气污染与", "心血管疾病"]) == "空气污染与心血管疾病"


def test_ligatures_are_spelled_out():
    assert normalize("ﬁeld eﬀect") == "field effect"
