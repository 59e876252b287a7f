"""Reading EBM-NLP CoNLL files, the fixed validation split, and training windows."""

from pathlib import Path

from hysem_assets.embedding.minilm import packaged_model_path, wordpiece_tokenizer
from hysem_assets.pico.corpus import CLASSES, read_conll, relabelled, spans, split, training_corpus
from hysem_assets.pico.tagger import WINDOW
from hysem_assets.pico.training import windows
from hysem_assets_tests.paths import REALDATA, needs_realdata

CONLL = """-DOCSTART- (111)

Aspirin NN O I-INT
for NN O O
stroke NN O I-OUT
. NN O O

In NN O O
older NN O I-PAR
adults NN O I-PAR
. NN O O

-DOCSTART- (222)

Placebo NN O I-INT
"""


def test_documents_keep_words_labels_and_known_classes(tmp_path: Path) -> None:
    path = tmp_path / "tiny.conll"
    path.write_text(CONLL)
    first, second = read_conll(path)
    assert first.pmid == "111" and first.words[:3] == ("Aspirin", "for", "stroke")
    participants, interventions, outcomes = first.tags
    assert list(spans(participants)) == [(5, 7)]
    assert list(spans(interventions)) == [(0, 1)]
    assert list(spans(outcomes)) == [(2, 3)]
    assert first.known == (True, True, True)
    (only_interventions,) = read_conll(path, known=("interventions",))[1:]
    assert only_interventions.known == (False, True, False) and second.words == ("Placebo",)


SECOND = """-DOCSTART- (111)

Aspirin I-INT
for I-INT
stroke O
. O

In O
older O
adults O
. O

-DOCSTART- (222)

Placebos I-INT
"""


def test_a_second_labelling_replaces_only_the_classes_it_covers(tmp_path: Path) -> None:
    (tmp_path / "three.conll").write_text(CONLL)
    (tmp_path / "second.conll").write_text(SECOND)
    documents = read_conll(tmp_path / "three.conll")
    (again,) = relabelled(documents, read_conll(tmp_path / "second.conll", known=("interventions",)))
    participants, interventions, outcomes = again.tags
    assert again.pmid == "111" and list(spans(interventions)) == [(0, 2)]  # the second labels
    assert (participants, outcomes) == (documents[0].tags[0], documents[0].tags[2])  # the first labels
    # 222 is left out: its words differ between the two files


@needs_realdata
def test_split_is_fixed_and_held_out_abstracts_never_train() -> None:
    corpus = training_corpus(REALDATA / "pico_ebmnlp")
    train, validation = split(corpus)
    again = split(corpus)[1]
    assert [d.pmid for d in validation] == [d.pmid for d in again]
    assert len(validation) > 100 and all(all(d.known) for d in validation)
    assert not {d.pmid for d in train} & {d.pmid for d in validation}  # nor through the interventions-only file
    assert len({d.pmid for d in corpus}) == len(corpus)


def test_windows_hold_whole_sentences_with_aligned_targets(tmp_path: Path) -> None:
    path = tmp_path / "tiny.conll"
    path.write_text(CONLL)
    document = read_conll(path)[0]
    tokenizer = wordpiece_tokenizer(packaged_model_path() / "tokenizer.json")
    (window,) = windows(document, tokenizer)
    assert window.ids[0] == 101 and window.ids[-1] == 102
    pieces = [tokenizer.id_to_token(i) for i in window.ids]
    outcome = CLASSES.index("outcomes")
    assert [p for p, t in zip(pieces, window.targets[:, outcome], strict=True) if t] == ["stroke"]
    # a document longer than a window is cut between sentences
    long = read_conll(path)[0].__class__("9", document.words * 60, tuple(t * 60 for t in document.tags), (True,) * 3)
    cut = windows(long, tokenizer)
    assert len(cut) > 1 and all(len(w.ids) <= WINDOW for w in cut)
    assert all(tokenizer.id_to_token(w.ids[-2]) == "." for w in cut)
