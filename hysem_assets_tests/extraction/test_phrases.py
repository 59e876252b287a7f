"""Candidate phrases, abbreviations and sentence spans on composed sentences."""

from __future__ import annotations

from hysem_assets.core.abbreviations import abbreviations
from hysem_assets.core.text import sentence_spans, split_sentences
from hysem_assets.extraction.phrases import is_clean, noun_phrases


def test_noun_phrases_are_clean_and_placed() -> None:
    sentence = "We measured serum procalcitonin in 386 children with community-acquired pneumonia and 90 controls."
    phrases = noun_phrases(sentence, offset=100)
    texts = [phrase.text for phrase in phrases]
    assert "serum procalcitonin" in texts and "community-acquired pneumonia" in texts
    assert not any(text[0].isdigit() or text.lower().startswith(("the ", "a ")) for text in texts)
    for phrase in phrases:
        assert sentence[phrase.start - 100 : phrase.end - 100] == phrase.text


def test_phrases_split_at_comparisons_and_lose_qualifiers() -> None:
    texts = [
        p.text for p in noun_phrases("Higher exposure to cisplatin (vs no exposure) raised the risk of ototoxicity.")
    ]
    assert "exposure to cisplatin" in texts or "cisplatin" in texts
    assert "ototoxicity" in texts and not any("vs" in text for text in texts)
    assert not is_clean("ptrend=0.048)") and not is_clean("the results") and is_clean("laparoscopic appendectomy")


def test_abbreviations_defined_in_brackets() -> None:
    found = abbreviations(
        "Ventilator-associated pneumonia (VAP) and methicillin-resistant Staphylococcus aureus (MRSA) were rare; "
        "the p value (P) and a range (2-5) are not abbreviations."
    )
    assert found == {"VAP": "Ventilator-associated pneumonia", "MRSA": "methicillin-resistant Staphylococcus aureus"}


def test_sentence_spans_point_into_the_text_as_written() -> None:
    text = (
        "Hip <i>fracture</i> surgery. Outcomes at 30 days, e.g. Death, were recorded.\n\n# Results\n- Mortality was 7%."
    )
    spans = sentence_spans(text)
    assert [text[start:end] for start, end in spans] == [
        "Hip <i>fracture</i> surgery.",
        "Outcomes at 30 days, e.g. Death, were recorded.",
        "# Results",
        "- Mortality was 7%.",
    ]
    assert split_sentences(text)[0] == "Hip fracture surgery."
