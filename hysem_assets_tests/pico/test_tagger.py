"""The shipped span tagger: it loads, tags real abstracts as well as its card says, and fails clearly."""

import json
import shutil
from pathlib import Path

import pytest

from hysem_assets.core.text import sentence_spans
from hysem_assets.pico.build import DEVELOPMENT_SEED, DEVELOPMENT_SHARE, PEAKS, THRESHOLDS, chosen_cuts
from hysem_assets.pico.corpus import CLASSES, split, training_corpus
from hysem_assets.pico.evaluation import span_scores
from hysem_assets.pico.tagger import MODEL_DIR, MODEL_FILE, Tagger, TaggerUnavailable, load, reading_parts
from hysem_assets_tests.paths import REALDATA, needs_realdata

ABSTRACT = (
    "Effect of a home-based walking programme on glycaemic control in adults with type 2 diabetes: "
    "a randomised controlled trial.\n\n"
    "We randomly assigned 212 adults with type 2 diabetes aged 40 to 70 years to a 12-week home-based "
    "walking programme or usual care. The primary outcome was the change in HbA1c; secondary outcomes were "
    "body weight, blood pressure and quality of life. HbA1c fell by 0.4% more with walking than with usual care."
)


def test_the_shipped_weights_load_and_tag_each_class() -> None:
    tagger = load()
    spans = tagger.tag([ABSTRACT])[0]
    labels = {span.label for span in spans}
    assert labels == {"participants", "interventions", "outcomes"}
    for span in spans:
        assert ABSTRACT[span.start : span.end] == span.text
        assert tagger.thresholds[CLASSES.index(span.label)] <= span.score <= 1
    texts = {span.label: " | ".join(s.text for s in spans if s.label == span.label) for span in spans}
    assert "adults with type 2 diabetes" in texts["participants"]
    assert "walking programme" in texts["interventions"]
    assert "HbA1c" in texts["outcomes"]


def test_the_card_names_the_weights_it_describes() -> None:
    card = json.loads((MODEL_DIR / "tagger.json").read_text())
    import hashlib

    assert hashlib.sha256((MODEL_DIR / MODEL_FILE).read_bytes()).hexdigest() == card["sha256"]
    assert (MODEL_DIR / MODEL_FILE).stat().st_size < 40 * 2**20


def test_each_class_is_cut_at_the_threshold_and_peak_the_card_chose() -> None:
    card = json.loads((MODEL_DIR / "tagger.json").read_text())
    tagger = load()
    assert tagger.thresholds.tolist() == pytest.approx([card["thresholds"][label] for label in CLASSES])
    assert tagger.peaks.tolist() == pytest.approx([card["peaks"][label] for label in CLASSES])
    # a peak drops whole runs whose surest word is below it, and nothing else
    low = {**card, "thresholds": dict.fromkeys(CLASSES, 0.2)}
    runs = Tagger(card={**low, "peaks": {}}).tag([ABSTRACT])[0]
    peaks = dict(zip(CLASSES, tagger.peaks.tolist(), strict=True))
    kept = [run for run in runs if run.peak >= peaks[run.label]]
    assert Tagger(card=low).tag([ABSTRACT])[0] == kept and len(kept) < len(runs)
    strict, loose = Tagger(threshold=0.9).tag([ABSTRACT])[0], Tagger(threshold=0.2).tag([ABSTRACT])[0]
    assert all(span.score >= 0.9 for span in strict)
    # a lower threshold only widens or adds spans: every strict span lies inside a loose one of its class
    for span in strict:
        assert any(o.label == span.label and o.start <= span.start and span.end <= o.end for o in loose), span
    assert len(" ".join(s.text for s in loose)) > len(" ".join(s.text for s in strict))


def test_a_span_never_crosses_a_sentence_end() -> None:
    card = json.loads((MODEL_DIR / "tagger.json").read_text())
    # at a threshold nearly every word reaches, each class's runs are whole sentences, not the whole text
    spans = Tagger(threshold=0.001, card={**card, "peaks": {}}).tag([ABSTRACT])[0]
    sentences = sentence_spans(ABSTRACT)
    assert len(sentences) == 4
    for label in CLASSES:
        own = [(span.start, span.end) for span in spans if span.label == label]
        assert own == sentences, label


@needs_realdata
def test_held_out_abstracts_are_tagged_as_well_as_the_card_says() -> None:
    """The card's scores are what the shipped file does on the held-out split, and they clear a floor."""
    _, validation = split(training_corpus(REALDATA / "pico_ebmnlp"))
    card = json.loads((MODEL_DIR / "tagger.json").read_text())
    assert [d.pmid for d in validation] == card["data"]["validation_pmids"]
    scores = span_scores(validation, load().tag)
    for label, floor in {"participants": 0.65, "interventions": 0.5, "outcomes": 0.6}.items():
        assert scores[label]["f1"] == pytest.approx(card["int8"]["scores"][label]["f1"], abs=0.002), label
        assert scores[label]["f1"] >= floor, (label, scores[label])


@needs_realdata
def test_cuts_are_chosen_on_a_development_split_apart_from_the_held_out_one() -> None:
    train, validation = split(training_corpus(REALDATA / "pico_ebmnlp"))
    fit, development = split(train, share=DEVELOPMENT_SHARE, seed=DEVELOPMENT_SEED)
    card = json.loads((MODEL_DIR / "tagger.json").read_text())
    assert [d.pmid for d in development] == card["data"]["development_pmids"]
    assert not {d.pmid for d in development} & ({d.pmid for d in validation} | {d.pmid for d in fit})
    some = development[:12]
    chosen = chosen_cuts(Tagger(), some)
    cuts = {label: (chosen["thresholds"][label], chosen["peaks"][label]) for label in CLASSES}
    scored = {}
    for threshold, peak in {(0.5, 0.0), *cuts.values()}:
        same = {"thresholds": dict.fromkeys(CLASSES, threshold), "peaks": dict.fromkeys(CLASSES, peak)}
        scored[threshold, peak] = span_scores(some, Tagger(card={**card, **same}).tag)
    for label, (threshold, peak) in cuts.items():
        assert threshold in THRESHOLDS and peak in PEAKS and (peak == 0 or peak > threshold), label
        assert scored[threshold, peak][label]["f1"] >= scored[0.5, 0.0][label]["f1"], label


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_missing_or_corrupt_weights_fail_at_load_naming_file_and_command(tmp_path: Path, damage: str) -> None:
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    weights = folder / MODEL_FILE
    if damage == "missing":
        weights.unlink()
    else:
        weights.write_bytes(weights.read_bytes()[:4096])
    with pytest.raises(TaggerUnavailable) as error:
        Tagger(folder)
    assert str(weights) in str(error.value) and "make tagger" in str(error.value)
    assert "\n" not in str(error.value)


def test_bad_input_is_tagged_without_failing() -> None:
    tagger = load()
    empty, controls, huge = tagger.tag(["", "Adults\x00 with\x07 asthma were given\x1b salbutamol.", "word " * 40_000])
    assert empty == []
    assert all(span.end <= 60_000 for span in huge)
    read = tagger.read("Adults\x00 with\x07 asthma were given\x1b salbutamol.", 0)
    assert {span.label for span in read} <= {"participants", "interventions", "outcomes"}
    assert controls or read is not None


def test_a_long_text_is_read_by_its_opening_and_its_methods_and_results() -> None:
    text = "\n\n".join(
        ["Title", "Abstract " * 10, "# Introduction", "Background " * 50, "# Methods", "We enrolled adults " * 5]
        + ["# Results", "Pain fell " * 5, "# Discussion", "So " * 50]
    )
    words = lambda part: len(part.split())  # noqa: E731
    parts = [text[start:end] for start, end in reading_parts(text, 40, words, opening=11)]
    assert parts[:2] == ["Title", ("Abstract " * 10).strip()]
    assert "# Introduction" not in parts and not any(p.startswith("Background") for p in parts)
    assert "# Methods" in parts and "# Results" in parts and not any(p.startswith("So") for p in parts)
    assert reading_parts(text, 0, words) == [(0, len(text))]
    # one paragraph longer than the budget: its beginning, within the budget, cut at a space
    (only,) = reading_parts("Patients were given aspirin. " * 4500, 2048, words)
    assert only[0] == 0 and 1500 < words(("Patients were given aspirin. " * 4500)[only[0] : only[1]]) <= 2048


def test_weights_trained_with_another_tokenizer_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    card = json.loads((folder / "tagger.json").read_text())
    (folder / "tagger.json").write_text(json.dumps({**card, "tokenizer_sha256": "0" * 64}))
    with pytest.raises(TaggerUnavailable, match="another tokenizer.*make tagger"):
        Tagger(folder)
