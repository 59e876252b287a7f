"""The first pass: an article's sentences with their sections, those naming the comparison's outcome first."""

from hysem_assets.findings.candidates import ranked, sentences

ARTICLE = """TITLE:
Ginger for nausea in pregnancy

ABSTRACT.BACKGROUND:
Nausea is common in early pregnancy and ginger is often taken for it.

ABSTRACT.RESULTS:
Ginger reduced the nausea score more than placebo (p = 0.01). Vomiting episodes did not differ between the groups.

## Discussion

Our trial adds to earlier small trials of ginger in pregnancy.
"""


def test_sentences_carry_their_section_and_exact_offsets():
    found = sentences(ARTICLE)
    assert [s.section for s in found] == [
        "Title",
        "Abstract: Background",
        "Abstract: Results",
        "Abstract: Results",
        "Discussion",
    ]
    assert all(ARTICLE[s.start : s.end].split() == s.text.split() for s in found)
    assert not any("ABSTRACT" in s.text for s in found)


def test_the_sentence_naming_the_outcome_ranks_first():
    found = sentences(ARTICLE)
    first = ranked(found, "ginger", "placebo", "vomiting episodes", keep=2)
    assert found[first[0]].text.startswith("Vomiting episodes")
    assert len(first) == 2
