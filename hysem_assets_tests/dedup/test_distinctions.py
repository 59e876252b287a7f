from __future__ import annotations

import pytest

from hysem_assets.dedup.distinctions import (
    contrasting_words,
    is_recurring_title,
    issues_conflict,
    looks_like_record_numbers,
    normalize_issue,
    online_first,
    pages_conflict,
    pages_overlap,
    title_letters,
    venue_years,
)


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


@pytest.mark.parametrize(
    ("title", "recurring"),
    [
        ("editors comments", True),
        ("guest editorial", True),
        ("introduction to the special issue on learning analytics", True),
        ("introduction to the minitrack on crowdsourcing", True),
        ("in this issue", True),
        ("abstracts of the annual meeting of the society", True),
        ("reviewer acknowledgements 2019", True),
        ("an editorial process model for open peer review", False),
        ("the news media and vaccine hesitancy", False),
    ],
)
def test_recurring_titles(title, recurring):
    assert is_recurring_title(title) is recurring


def test_contrasting_words_name_other_studies():
    adults = words("drug x in adults with asthma")
    assert contrasting_words(adults, words("drug x in children with asthma")) == "adults | children"
    assert contrasting_words(
        words("exercise after stroke protocol of a trial"), words("exercise after stroke results of a trial")
    )
    assert contrasting_words(words("outcomes in patients with apnoea"), words("outcomes in patients without apnoea"))


def test_contrasting_words_spare_spelling_and_dropped_subtitles():
    assert contrasting_words(words("a randomised trial of x"), words("a randomized trial of x")) is None
    assert contrasting_words(words("paediatric asthma care"), words("pediatric asthma care")) is None
    assert contrasting_words(words("drug x for asthma"), words("drug x for asthma a pilot trial in children")) is None
    assert contrasting_words(words("drug x for asthma"), words("drug x for asthma")) is None


def test_title_letters_read_labels_not_articles():
    assert title_letters(words("hepatitis b in a rural cohort")) == {"b"}
    assert title_letters(words("results of cohort a")) == {"a"}
    assert title_letters(words("a study of sleep")) == frozenset()


@pytest.mark.parametrize(
    ("value", "issue"),
    [("3", "3"), ("03", "3"), ("No. 3", "3"), ("3 (Pt 2)", "3"), ("1-2", "1-2"), ("Suppl 1", None), ("", None)],
)
def test_normalize_issue(value, issue):
    assert normalize_issue(value) == issue


def test_issues_conflict_only_when_they_cannot_be_one_issue():
    assert issues_conflict("1", "2")
    assert not issues_conflict("1-2", "2")
    assert not issues_conflict("3", None)


def test_record_numbers_are_told_from_issues():
    assert looks_like_record_numbers([str(n) for n in range(500, 560)])
    assert not looks_like_record_numbers([str(n % 12 + 1) for n in range(60)])
    assert not looks_like_record_numbers(["5"] * 10)


def test_page_ranges():
    assert pages_conflict("288-297", "301-310")
    assert not pages_conflict("945-948", "948-961") and pages_overlap("945-948", "948-961")
    assert not pages_conflict("1-14", "411-424")  # online first
    assert not pages_conflict("e123", "45-50")  # article number against pages
    assert online_first("1-14") and not online_first("1") and not online_first("10-14")


def test_venue_years():
    assert venue_years(("icis 2019 proceedings",)) == {2019}
    assert venue_years(("journal applied ecology",)) == frozenset()
