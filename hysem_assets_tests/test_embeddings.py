"""The one sentence encoder: unit float32 vectors, progress, one model load per process, and the
ONNX backends (torch's vectors, in input order, from a file exported once)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from hysem_assets.embedding import onnx_encoder
from hysem_assets.embedding.encoder import Encoder, load_encoder, profile_encoder
from hysem_assets.embedding.minilm import MODEL_NAME, packaged_model_path
from hysem_assets.settings.environment import hysem_home
from hysem_assets.sources.pubmed_xml import parse_efetch


def test_vectors_are_unit_float32_rows_and_similar_texts_are_close() -> None:
    encoder = Encoder(batch_size=2)
    seen: list[tuple[int, int | None]] = []
    vectors = encoder.encode(["random forest", "random forests", "ozone exposure"], progress=lambda *p: seen.append(p))
    assert vectors.dtype == np.float32 and vectors.shape == (3, encoder.dimension) == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert seen == [(3, 3)] and encoder.encoded == 3
    assert encoder.encode([]).shape == (0, 384)


def test_progress_follows_slices_of_sixteen_batches() -> None:
    encoder, seen = Encoder(batch_size=1), []
    encoder.encode([f"term {n}" for n in range(20)], progress=lambda *p: seen.append(p))
    assert seen == [(16, 20), (20, 20)]


def test_a_model_is_loaded_once_per_device_and_its_folder_reads_offline() -> None:
    default, again = Encoder(), load_encoder(device="cpu")
    assert default.model is again.model and default.name == MODEL_NAME
    folder = Encoder(packaged_model_path())
    assert folder.name == str(packaged_model_path())
    np.testing.assert_allclose(folder.encode(["PM2.5"]), default.encode(["PM2.5"]), atol=1e-6)


def _abstract_texts(realdata: Path) -> list[str]:
    """A real title, its abstract (past MiniLM's 256 tokens, so truncated) and its sentences: lengths mixed."""
    path = realdata / "pubmed_metapub_efetch" / "23657305.xml"
    record = parse_efetch(path.read_bytes(), str(path))[0]
    sentences = [s for s in re.split(r"(?<=\.)\s+", record["abstract"]) if s]
    return [record["abstract"], record["title"], *sentences, "PM2.5", ""]


@pytest.fixture(scope="module")
def onnx_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One HYSEM_HOME holding this module's ONNX exports: exporting is the slow part."""
    return tmp_path_factory.mktemp("onnx_home")


@pytest.mark.parametrize(("backend", "each", "mean"), [("onnx", 0.9999, 0.99999), ("onnx-int8", 0.96, 0.985)])
def test_onnx_backends_give_the_torch_vectors_in_input_order(
    backend: str, each: float, mean: float, realdata: Path, onnx_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    monkeypatch.delenv("HYSEM_MODELS_DIR")
    texts = _abstract_texts(realdata)
    reference = Encoder().encode(texts)
    encoder = Encoder(backend=backend, batch_size=64)
    vectors = encoder.encode(texts)

    assert vectors.dtype == np.float32 and vectors.shape == reference.shape and encoder.encoded == len(texts)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    cosine = np.einsum("ij,ij->i", vectors, reference)
    assert cosine.min() > each and cosine.mean() > mean, cosine
    assert (np.argmax(vectors @ reference.T, axis=1) == np.arange(len(texts))).all()  # each row is its own text
    assert encoder.token_spans("Ozone, PM2.5") == Encoder().token_spans("Ozone, PM2.5")


def test_onnx_export_is_written_once_and_reused(onnx_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    monkeypatch.delenv("HYSEM_MODELS_DIR")  # the default place, in the home
    monkeypatch.setattr(onnx_encoder, "_SESSIONS", {})  # as a new process: no session of an earlier test
    first = Encoder(backend="onnx-int8").encode(["ozone exposure"])
    folder = onnx_encoder.model_dir(packaged_model_path())
    assert folder.parent == onnx_home / "models" and folder.name.startswith(f"{MODEL_NAME}-")
    files = {path.name: path.stat().st_mtime_ns for path in folder.glob("*.onnx")}
    assert set(files) == {"model.onnx", "model-int8.onnx"}

    def no_export(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "_export_fp32", no_export)
    monkeypatch.setattr(onnx_encoder, "quantize_int8", no_export)
    monkeypatch.setattr(onnx_encoder, "_SESSIONS", {})  # as a new process: the session is read from disk
    again = Encoder(backend="onnx-int8").encode(["ozone exposure"])
    np.testing.assert_allclose(again, first, atol=1e-6)
    assert {path.name: path.stat().st_mtime_ns for path in folder.glob("*.onnx")} == files


def test_an_export_damaged_in_place_is_exported_again(
    onnx_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Vectors are cached under the source model's fingerprint, so an exported file must be the one exported."""
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    monkeypatch.delenv("HYSEM_MODELS_DIR")
    target = onnx_encoder.exported(packaged_model_path(), "onnx-int8")
    recorded = json.loads((target.parent / "source.json").read_text())["files"]
    assert recorded == {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in target.parent.glob("*.onnx")
    }
    original = target.read_bytes()
    middle = len(original) // 2
    target.write_bytes(
        original[:middle] + bytes(b ^ 0xFF for b in original[middle : middle + 64]) + original[middle + 64 :]
    )
    with caplog.at_level(logging.WARNING, logger=onnx_encoder.__name__):
        assert onnx_encoder.exported(packaged_model_path(), "onnx-int8") == target
    assert f"{target} is not the file source.json records as exported there" in caplog.text
    assert hashlib.sha256(target.read_bytes()).hexdigest() == recorded[target.name]


def test_backends_are_checked_when_the_encoder_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown encoder backend 'tensorrt'"):
        Encoder(backend="tensorrt")
    with pytest.raises(ValueError, match="runs on the CPU"):
        Encoder(backend="onnx", device="cuda:0")
    with pytest.raises(ValueError, match="use backend torch"):
        Encoder(str(tmp_path), backend="onnx")  # not a BERT folder


def test_a_gpu_profile_embeds_with_torch_and_every_profile_caches() -> None:
    gpu = profile_encoder(None, device="cuda:0", batch_size=256, backend="onnx")
    cpu = profile_encoder(None, device="cpu", batch_size=64, backend="onnx")
    assert (gpu.backend, cpu.backend) == ("torch", "onnx")
    for encoder in (gpu, cpu):
        assert encoder.cache is not None and encoder.cache.path.parent == hysem_home() / "vector_cache"


def test_onnx_batches_by_token_count_and_pads_each_batch_to_its_longest(
    onnx_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    real = onnx_encoder.session(packaged_model_path(), "onnx")
    shapes: list[tuple[int, int, int]] = []

    class Recording:
        def run(self, outputs: list[str], feed: dict[str, np.ndarray]) -> list[np.ndarray]:
            shapes.append((*feed["input_ids"].shape, int(feed["attention_mask"].sum())))
            return real.run(outputs, feed)

    monkeypatch.setattr(onnx_encoder, "session", lambda folder, variant: Recording())
    texts = [" ".join(["ozone"] * n) for n in (40, 1, 300, 3, 90, 2, 7, 100)]  # "ozone" is one token
    vectors = Encoder(backend="onnx", batch_size=3).encode(texts)
    # with [CLS] and [SEP], at most 256: 42 3 256 5 92 4 9 102; sorted, at most 3 texts and 256 padded tokens
    # per batch, each as wide as its longest text (batches run in parallel: their order varies)
    assert sorted(shapes) == sorted([(3, 5, 3 + 4 + 5), (2, 42, 9 + 42), (2, 102, 92 + 102), (1, 256, 256)])
    np.testing.assert_allclose(vectors, Encoder().encode(texts), atol=2e-5)


def test_an_int8_vector_does_not_depend_on_the_texts_beside_it(
    onnx_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    texts = ["ozone", "PM2.5 and asthma", "nitrogen dioxide exposure in children", "heat"]
    encoder = Encoder(backend="onnx-int8")
    together = encoder.encode(texts)
    for text, vector in zip(texts, together, strict=True):
        np.testing.assert_array_equal(encoder.encode([text])[0], vector)


def test_encodes_from_several_threads_share_one_pool_and_give_the_vectors_of_one_at_a_time(
    onnx_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HYSEM_HOME", str(onnx_home))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    encoder = Encoder(backend="onnx-int8")
    outcomes = ("asthma", "stroke", "dementia")
    groups = [[f"{word} exposure and {other} in adults" for other in outcomes] for word in ("ozone", "heat", "noise")]
    alone = [encoder.encode(group) for group in groups]
    before = {thread.ident for thread in threading.enumerate() if thread.name.startswith("onnx-encoder")}
    with ThreadPoolExecutor(4) as callers:
        together = list(callers.map(encoder.encode, groups))
    for one, other in zip(alone, together, strict=True):
        np.testing.assert_array_equal(one, other)
    after = {thread.ident for thread in threading.enumerate() if thread.name.startswith("onnx-encoder")}
    assert before and len(after) <= 2 and not after - before  # the first calls' threads stay and serve the rest
