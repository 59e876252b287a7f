"""Reading the entity and relation corpora, the windows the model reads, and the scores the build reports."""

from pathlib import Path

from hysem_assets.embedding.minilm import packaged_model_path, wordpiece_tokenizer
from hysem_assets.entities.corpus import Pair, Sentence, bio, conll_sentences, read_conll, read_pairs, spans
from hysem_assets.entities.evaluation import entity_scores, relation_scores
from hysem_assets.entities.windows import WINDOW, pieces, windows


def test_io_labels_become_bio_with_a_span_wherever_the_type_changes_or_a_b_says_so() -> None:
    labels = ["I-Method", "I-Method", "I-Task", "O", "I-Task", "B-Task", "I-Task", "B-Disease"]
    assert bio(labels) == ["B-Method", "I-Method", "B-Task", "O", "B-Task", "B-Task", "I-Task", "B-Disease"]
    assert spans(bio(labels)) == {(0, 2, "Method"), (2, 3, "Task"), (4, 5, "Task"), (5, 7, "Task"), (7, 8, "Disease")}


def test_an_inside_tag_after_nothing_of_its_type_opens_a_span() -> None:
    assert spans(["O", "I-Metric", "I-Metric", "B-Metric"]) == {(1, 3, "Metric"), (3, 4, "Metric")}


def test_conll_documents_and_sentences_in_file_order_with_one_column_lines_outside() -> None:
    lines = ["-DOCSTART- X O O", "", "Deep NN O I-Method", "nets NN O I-Method", "", "win", "", "-DOCSTART-", "Go O"]
    found = list(conll_sentences(lines))
    assert [s.words for s in found] == [("Deep", "nets"), ("win",), ("Go",)]
    assert [s.tags for s in found] == [("B-Method", "I-Method"), ("O",), ("O",)]
    assert [s.document for s in found] == [1, 1, 2]


def test_the_shared_files_read_whole(realdata: Path) -> None:
    scientific = read_conll(realdata / "scierc_ner" / "dev.txt")
    disease = read_conll(realdata / "ncbi_disease" / "dev.txt")
    pairs = read_pairs(realdata / "scierc_relations" / "dev.txt")
    assert len({s.document for s in scientific}) == 50  # one per -DOCSTART-
    # every non-blank line of a sentence is a word of it
    lines = (realdata / "ncbi_disease" / "dev.txt").read_text().splitlines()
    assert sum(len(s.words) for s in disease) == sum(1 for line in lines if line.strip())
    assert {p.label for p in pairs} == {
        "USED-FOR", "FEATURE-OF", "HYPONYM-OF", "PART-OF", "COMPARE", "CONJUNCTION", "EVALUATE-FOR"
    }  # fmt: skip
    assert all("[[" in p.text and "<<" in p.text for p in pairs)


def test_windows_keep_sentences_whole_within_a_document_and_cut_an_overlong_one() -> None:
    tokenizer = wordpiece_tokenizer(packaged_model_path() / "tokenizer.json")
    short = pieces(tokenizer, ["Graph", "neural", "networks", "."])
    long = pieces(tokenizer, ["word"] * (WINDOW * 2))
    cut = windows([short, short, long, short], [0, 0, 0, 1])
    assert cut[0].parts == ((0, 0, len(short.ids)), (1, 0, len(short.ids)))
    assert [w.parts[0][0] for w in cut[1:]] == [2, 2, 2, 3]  # the long sentence alone, then the next document
    assert all(len(w.ids([short, short, long, short])) <= WINDOW for w in cut)


def test_a_word_the_vocabulary_drops_keeps_one_piece() -> None:
    tokenizer = wordpiece_tokenizer(packaged_model_path() / "tokenizer.json")
    found = pieces(tokenizer, ["a", "\u200b", "b"])
    assert sorted(set(found.words)) == [0, 1, 2]


def test_entity_scores_count_exact_spans_and_other_types_only_in_all_types() -> None:
    gold = [Sentence(("a", "b", "c", "d"), ("B-Method", "I-Method", "O", "B-Task"), 0)]
    predicted = [["B-Method", "I-Method", "B-Disease", "B-Method"]]
    scores = entity_scores(predicted, gold, ("Method", "Task"))
    assert scores["Method"] == {"precision": 0.5, "recall": 1.0, "f1": 0.6667, "gold": 1}
    assert scores["Task"]["recall"] == 0.0
    assert scores["micro"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert scores["all types"]["precision"] == round(1 / 3, 4)


def test_relation_macro_f1_averages_every_label() -> None:
    gold = [Pair("", "USED-FOR"), Pair("", "COMPARE")]
    scores = relation_scores(["USED-FOR", "USED-FOR"], gold)
    assert scores["USED-FOR"]["f1"] == round(2 / 3, 4)
    assert scores["macro"]["f1"] == round(2 / 3 / 7, 4)
    assert scores["accuracy"] == 0.5
