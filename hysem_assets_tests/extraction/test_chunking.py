"""Token windows: bounded, overlapping, exact slices that end at word boundaries."""

from __future__ import annotations

from hysem_assets.extraction.chunking import chunk_text, count_tokens, wordpiece_offsets

TEXT = " ".join(f"Sentence {n} reports PM2.5 of 12.{n} µg/m3 in Montréal (n = 1,2{n}4)." for n in range(60))


def test_windows_are_bounded_overlapping_slices_that_cover_the_text():
    chunks = chunk_text(TEXT, chunk_tokens=200, overlap=30)
    assert len(chunks) > 3 and all(chunk.tokens <= 200 for chunk in chunks)
    assert chunks[0].start == 0 and chunks[-1].end == len(TEXT)
    for before, after in zip(chunks, chunks[1:]):
        assert TEXT[after.start : after.end].rstrip() == after.text
        assert before.start < after.start < before.end  # they overlap ...
        assert 30 <= count_tokens(TEXT[after.start : before.end]) <= 40  # ... by `overlap` tokens, to a word start
        assert TEXT[after.start - 1] == " " and TEXT[before.end - 1] == " "  # and cut between words


def test_a_short_text_is_one_chunk_and_blank_text_none():
    (only,) = chunk_text("Random forests and PM2.5.")
    assert (only.text, only.tokens) == (
        "Random forests and PM2.5.",
        len(wordpiece_offsets("Random forests and PM2.5.")),
    )
    assert chunk_text(" \n\t ") == []


def test_wordpiece_counts_more_tokens_than_words_for_scientific_text():
    assert count_tokens("PM2.5") == 4 and count_tokens(TEXT) > 2 * len(TEXT.split())
