"""Shipped weights are the card's: damaged in place they are refused with one line, and every cache of values a
model computed is keyed by the hash of its files, so restored or retrained weights never meet old values."""

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.embedding import onnx_encoder
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.minilm import card_hashes, packaged_model_path
from hysem_assets.extraction.documents import Document
from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.reuse import reader_of, reuse_or_extract
from hysem_assets.pico import tagger as pico_tagger
from hysem_assets.pico.tagger import CARD_FILE, MODEL_DIR, MODEL_FILE, TaggerUnavailable, load
from hysem_assets.settings.backends import ExtractiveConfig
from hysem_assets.settings.profile import ExtractionSettings
from hysem_assets.settings.protocols import load_protocol
from hysem_assets.stores.work_cache import WorkCache
from hysem_assets.terms.embeddings import cached_embeddings

TRIAL = (
    "We randomly assigned 120 pregnant women with nausea to ginger capsules or placebo for four days. "
    "The primary outcome was the change in nausea score."
)


def flipped(path: Path) -> bytes:
    """Damage ``path`` in place, at its size: 64 bytes in its middle inverted. Returns the bytes it held."""
    original = path.read_bytes()
    middle = len(original) // 2
    path.write_bytes(
        original[:middle] + bytes(b ^ 0xFF for b in original[middle : middle + 64]) + original[middle + 64 :]
    )
    assert path.stat().st_size == len(original)
    return original


def refusal(weights: Path, recorded: str) -> str:
    found = hashlib.sha256(weights.read_bytes()).hexdigest()
    return (
        f"the span tagger's {weights} does not match its model card: sha256 {found[:12]}, "
        f"the card records {recorded[:12]}; rebuild it with `make tagger`, or reinstall hysem"
    )


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of the shipped tagger's folder."""
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    return folder


def test_weights_damaged_in_place_are_refused_in_one_line_and_load_once_restored(model: Path) -> None:
    weights, recorded = model / MODEL_FILE, json.loads((model / CARD_FILE).read_text())["sha256"]
    original = flipped(weights)
    with pytest.raises(TaggerUnavailable) as error:
        load(model)
    assert str(error.value) == refusal(weights, recorded)
    weights.write_bytes(original)
    tagger = load(model)
    assert tagger.version.startswith(recorded[:12])
    assert {span.label for span in tagger.tag([TRIAL])[0]} == {"participants", "interventions", "outcomes"}


def test_a_card_without_the_weights_hash_is_refused(model: Path) -> None:
    card = json.loads((model / CARD_FILE).read_text())
    (model / CARD_FILE).write_text(json.dumps({key: value for key, value in card.items() if key != "sha256"}))
    with pytest.raises(TaggerUnavailable, match=r"the card records none; rebuild it with `make tagger`"):
        load(model)


def test_extraction_fails_with_that_line_and_writes_no_rows(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights, recorded = model / MODEL_FILE, json.loads((model / CARD_FILE).read_text())["sha256"]
    flipped(weights)
    monkeypatch.setattr(pico_tagger, "MODEL_DIR", model)  # the tagger the embedded extractor loads
    source, output = tmp_path / "records.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps({"id": "trial", "title": "Ginger for nausea", "abstract": TRIAL}) + "\n")
    result = CliRunner().invoke(main, ["extract", "--protocol", "generic", str(source), "-o", str(output)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == f"Error: {refusal(weights, recorded)}"
    assert not output.exists()


def test_answers_of_other_weights_are_not_served_once_the_shipped_ones_are_back(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weights retrained in place (a card that records them) extract under a key of their own; restored, the
    shipped weights find none of their answers."""
    monkeypatch.setattr(pico_tagger, "MODEL_DIR", model)
    protocol, settings = load_protocol("generic"), ExtractionSettings()
    cache, document = WorkCache("extracted_fields", tmp_path / "cache"), Document("trial", TRIAL, {"title": "Ginger"})

    def run(answer: str) -> bool:
        """Extract ``document`` with the tagger now in ``model``; whether the row was read from the cache."""
        reader = reader_of(protocol.fingerprint, from_protocol(protocol).model, settings)
        row = {"status": "ok", "population": [answer]}
        done = reuse_or_extract(cache, "q", ["trial"], [document], reader, lambda chosen: [dict(row) for _ in chosen])
        assert done.rows[0]["population"] == [answer] or done.reused[0]
        return done.reused[0]

    shipped, weights, card = from_protocol(protocol).model, model / MODEL_FILE, (model / CARD_FILE).read_text()
    original = flipped(weights)
    (model / CARD_FILE).write_text(json.dumps({**json.loads(card), **card_hashes(weights)}))
    assert from_protocol(protocol).model != shipped
    assert not run("under other weights") and run("under other weights")
    weights.write_bytes(original)
    (model / CARD_FILE).write_text(card)
    assert from_protocol(protocol).model == shipped
    assert not run("under the shipped weights")


def _term_embeddings_file(folder: Path, root: Path) -> str:
    """The file term embeddings of ``folder``'s model are kept in (a cache of their own per call)."""
    cache = Path(tempfile.mkdtemp(dir=root))
    cached_embeddings(Encoder(folder, backend="numpy"), ["aspirin"], "terms", cache)
    (stored,) = cache.glob("*.npy")
    return stored.name


#: Every cache of values an embedding model computed, by what names its entries: each must change with the
#: model's bytes. A new cache of such values joins this list.
MODEL_KEYED_CACHES: dict[str, Callable[[Path, Path], str]] = {
    "vector cache": lambda folder, _: Encoder(folder, backend="onnx-int8").cache_space,
    "exported ONNX models": lambda folder, _: onnx_encoder.model_dir(folder).name,
    "extraction answers": lambda folder, _: (
        from_protocol(
            load_protocol("generic"),
            ExtractiveConfig(backend="extractive", embedding_model=str(folder), embedding_backend="torch"),
        ).model
    ),
    "term embeddings": _term_embeddings_file,
}


@pytest.fixture(scope="module")
def embedding_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packaged MiniLM, whose weights the tests below change in place."""
    folder = tmp_path_factory.mktemp("minilm") / "all-MiniLM-L6-v2"
    shutil.copytree(packaged_model_path(), folder)
    return folder


@pytest.mark.parametrize("cache", list(MODEL_KEYED_CACHES))
def test_each_cache_of_model_values_is_keyed_by_the_bytes_of_the_model(
    cache: str, embedding_model: Path, tmp_path: Path
) -> None:
    key = MODEL_KEYED_CACHES[cache]
    shipped = key(embedding_model, tmp_path)
    original = flipped(embedding_model / "model.safetensors")
    try:
        changed = key(embedding_model, tmp_path)
    finally:
        (embedding_model / "model.safetensors").write_bytes(original)
    assert changed != shipped
    assert key(embedding_model, tmp_path) == shipped
