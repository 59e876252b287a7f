"""Topics of a corpus: LDA models chosen by c_v coherence, as tables and an intertopic map.

``build_topics`` preprocesses documents (tokens, lemmas, phrases, filtered dictionaries),
grid-searches scikit-learn LDA models in a process pool and keeps the most coherent;
``update_topics`` does so on a re-run only when the corpus moved, else places the new
works in the kept model; ``write_intertopic_view`` draws the winner as an interactive page and a PNG.
"""
