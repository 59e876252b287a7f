"""The shipped entity model through ``hysem entities tag`` and ``relate``: its files, its bad inputs, its scores.

The scores are read on the shared corpora's validation files, which the build never trains on,
through the commands a user runs; their floors sit below the card's measured scores, so a
damaged tokenizer, a broken window or a wrong tag order fails them.
"""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.entities import tagger as entity_tagger
from hysem_assets.entities.corpus import DISEASE, SCIENTIFIC, read_conll, read_pairs
from hysem_assets.entities.evaluation import entity_scores, relation_scores
from hysem_assets.entities.tagger import CARD_FILE, MODEL_DIR, MODEL_FILE, EntityModelUnavailable, load

ABSTRACT = (
    "We propose a graph neural network for relation extraction from clinical notes. "
    "Compared with a support vector machine baseline, it improves the F1 score on the i2b2 corpus. "
    "Patients with type 2 diabetes and chronic kidney disease were studied."
)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_text_documents_give_words_tags_and_entities_at_their_offsets(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps({"id": "a", "text": ABSTRACT})
        + "\n"
        + json.dumps({"id": "b", "text": "We went home after lunch."})
        + "\n"
    )
    code, _, err = _run("entities", "tag", str(source), "-o", str(tmp_path / "out.jsonl"))
    assert code == 0, err
    first, second = _lines(tmp_path / "out.jsonl")
    assert first["id"] == "a" and len(first["tokens"]) == len(first["tags"])
    assert {e["type"] for e in first["entities"]} >= {"Method", "Disease"}
    assert all(ABSTRACT[e["start"] : e["end"]] == e["text"] for e in first["entities"])
    assert any("diabetes" in e["text"] for e in first["entities"] if e["type"] == "Disease")
    assert second["entities"] == [] and set(second["tags"]) == {"O"}  # no entities is no error
    assert first["truncated"] is False


def test_types_keeps_only_the_types_named(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": ABSTRACT}) + "\n")
    code, _, _ = _run("entities", "tag", str(source), "--types", "Disease", "-o", str(tmp_path / "out.jsonl"))
    (line,) = _lines(tmp_path / "out.jsonl")
    assert code == 0 and {e["type"] for e in line["entities"]} == {"Disease"}
    assert {tag[2:] for tag in line["tags"] if tag != "O"} == {"Disease"}


def test_a_very_long_document_is_read_within_the_window_budget_and_says_so(tmp_path: Path) -> None:
    text = (ABSTRACT + " ") * (200_000 // len(ABSTRACT) + 1)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "long", "text": text[:200_000]}) + "\n")
    code, _, err = _run("entities", "tag", str(source), "-o", str(tmp_path / "out.jsonl"))
    (line,) = _lines(tmp_path / "out.jsonl")
    assert code == 0
    assert line["truncated"] is True and line["windows"] == entity_tagger.MAX_WINDOWS
    assert "'long' read in its first 64 windows only" in err
    assert len(line["tokens"]) == len(line["tags"])


def test_conll_gives_one_line_per_sentence_in_file_order(tmp_path: Path, realdata: Path) -> None:
    source = realdata / "scierc_ner" / "dev.txt"
    code, _, _ = _run("entities", "tag", str(source), "-o", str(tmp_path / "out.jsonl"))
    gold = read_conll(source)
    found = _lines(tmp_path / "out.jsonl")
    assert code == 0
    assert [tuple(line["tokens"]) for line in found] == [s.words for s in gold]
    assert all(len(line["tokens"]) == len(line["tags"]) for line in found)


@pytest.mark.parametrize(
    ("folder", "types", "floor"),
    [("scierc_ner", SCIENTIFIC, 0.52), ("ncbi_disease", DISEASE, 0.72)],
)
def test_entity_f1_on_the_validation_files_through_the_command(
    tmp_path: Path, realdata: Path, folder: str, types: tuple[str, ...], floor: float
) -> None:
    source = realdata / folder / "dev.txt"
    _run("entities", "tag", str(source), "-o", str(tmp_path / "out.jsonl"))
    predicted = [line["tags"] for line in _lines(tmp_path / "out.jsonl")]
    assert entity_scores(predicted, read_conll(source), types)["micro"]["f1"] >= floor


def test_relation_macro_f1_on_the_validation_file_through_the_command(tmp_path: Path, realdata: Path) -> None:
    source = realdata / "scierc_relations" / "dev.txt"
    code, _, _ = _run("entities", "relate", str(source), "-o", str(tmp_path / "out.jsonl"))
    labels = [line["label"] for line in _lines(tmp_path / "out.jsonl")]
    assert code == 0
    assert relation_scores(labels, read_pairs(source))["macro"]["f1"] >= 0.7


def test_a_relation_line_without_both_markers_is_named_and_the_rest_go_on(tmp_path: Path) -> None:
    source = tmp_path / "pairs.jsonl"
    rows = [
        {"text": "We use [[ dropout ]] for << regularisation >> ."},
        {"text": "We use [[ dropout ]] for regularisation ."},
        {"text": "A << parser >> and a [[ tagger ]] ."},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, _, err = _run("entities", "relate", str(source), "-o", str(tmp_path / "out.jsonl"))
    first, refused, third = _lines(tmp_path / "out.jsonl")
    assert code == 1
    assert f"{source}:2: no << or >> marker" in err
    assert first["label"] and third["label"] and refused["label"] is None


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    return folder


def test_weights_changed_in_place_are_refused_naming_the_file_and_the_rebuild(copied: Path) -> None:
    weights = copied / MODEL_FILE
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(EntityModelUnavailable, match=rf"{weights} does not match its model card.*make entities-model"):
        load(copied)


def test_missing_weights_or_card_fail_at_load_in_one_line(copied: Path) -> None:
    (copied / MODEL_FILE).unlink()
    with pytest.raises(EntityModelUnavailable, match=r"is missing; rebuild it with `make entities-model`"):
        load(copied)
    (copied / CARD_FILE).unlink()
    with pytest.raises(EntityModelUnavailable, match=r"cannot be loaded from .*make entities-model"):
        load(copied)
