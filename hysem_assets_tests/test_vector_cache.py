"""The vector cache: stored vectors come back exactly, only misses are embedded, each model and
backend has its own vectors, and the file outlives the encoder and the process."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.vector_cache import VectorCache

TEXTS = ["random forest", "ozone exposure and asthma in children", "PM2.5", "random forest"]


class Recording(Encoder):
    """The NumPy backend (no torch), recording which texts it was asked to embed."""

    def __init__(self, cache: VectorCache, name: str | None = None, backend: str = "numpy") -> None:
        super().__init__(name, backend=backend, cache=cache)
        self.asked: list[list[str]] = []

    def _encode(self, texts, progress, each=None):  # type: ignore[no-untyped-def]
        self.asked.append(list(texts))
        return super()._encode(texts, progress, each)


def test_hits_come_back_identical_and_only_misses_are_embedded(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    first = Recording(cache)
    seen: list[tuple[int, int | None]] = []
    vectors = first.encode(TEXTS, progress=lambda *p: seen.append(p))
    assert first.asked == [TEXTS[:3]] and first.encoded == 3  # the repeated text once
    assert seen == [(4, 4)]
    np.testing.assert_array_equal(vectors[0], vectors[3])
    np.testing.assert_allclose(vectors, Encoder(backend="numpy").encode(TEXTS), atol=1e-6)

    second = Recording(cache)
    mixed = ["PM2.5", "a new sentence about ozone", "random forest"]
    again = second.encode(mixed, progress=lambda *p: seen.append(p))
    assert second.asked == [["a new sentence about ozone"]] and second.encoded == 1
    assert seen[-1] == (3, 3)
    np.testing.assert_array_equal(again[[0, 2]], vectors[[2, 0]])  # bit for bit, in the caller's order

    third = Recording(cache)
    np.testing.assert_array_equal(third.encode(TEXTS), vectors)
    assert third.asked == [] and third.encoded == 0
    assert cache.count() == 4


def test_vectors_are_kept_apart_by_model_and_backend(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path)
    numpy_backend = Recording(cache)
    numpy_backend.encode(["ozone"])
    other_name = Recording(cache, name=str(numpy_backend.location))  # the same folder under another name
    other_name.encode(["ozone"])
    assert other_name.encoded == 1 and numpy_backend.cache_space != other_name.cache_space
    assert numpy_backend.cache_space.startswith("all-MiniLM-L6-v2@") and numpy_backend.cache_space.endswith("/numpy")

    stored = np.ones((1, 384), dtype=np.float32)
    cache.put("all-MiniLM-L6-v2@x/onnx-int8", ["ozone"], stored)
    assert cache.get("all-MiniLM-L6-v2@x/onnx-int8", ["ozone", "asthma"], 384)[1] is None
    np.testing.assert_array_equal(cache.get("all-MiniLM-L6-v2@x/onnx-int8", ["ozone"], 384)[0], stored[0])
    assert cache.get("all-MiniLM-L6-v2@x/torch", ["ozone"], 384) == [None]
    assert cache.get("all-MiniLM-L6-v2@x/onnx-int8", ["ozone"], 768) == [None]  # another dimension is a miss
    assert cache.get("all-MiniLM-L6-v2@x/onnx-int8", ["ozone "], 384) == [None]  # the exact text, nothing folded


def test_the_cache_outlives_the_process(tmp_path: Path) -> None:
    script = (
        "import sys, numpy as np; from hysem_assets.embedding.encoder import Encoder; "
        "from hysem_assets.embedding.vector_cache import VectorCache; "
        "e = Encoder(backend='numpy', cache=VectorCache(sys.argv[1])); v = e.encode(['ozone', 'asthma']); "
        "np.save(sys.argv[2], v); print(e.encoded)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "cache"), str(tmp_path / f"{n}.npy")],
            capture_output=True,
            text=True,
            check=True,
        )
        for n in range(2)
    ]
    assert [run.stdout.strip() for run in runs] == ["2", "0"]
    np.testing.assert_array_equal(np.load(tmp_path / "0.npy"), np.load(tmp_path / "1.npy"))


def test_concurrent_writers_and_an_unreadable_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = VectorCache(tmp_path)
    rng = np.random.default_rng(0)
    batches = [
        (f"space{n % 2}", [f"text {n} {i}" for i in range(50)], rng.random((50, 8), dtype=np.float32)) for n in range(8)
    ]
    workers = [threading.Thread(target=cache.put, args=batch) for batch in batches]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert cache.count() == 400 and cache.count("space0") == 200
    for space, texts, vectors in batches:
        np.testing.assert_array_equal(np.stack(cache.get(space, texts, 8)), vectors)  # type: ignore[arg-type]

    broken = VectorCache(tmp_path / "broken")
    broken.path.parent.mkdir()
    broken.path.write_bytes(b"not a database" * 100)
    encoder = Encoder(backend="numpy", cache=broken)
    assert encoder.encode(["ozone"]).shape == (1, 384) and encoder.encoded == 1
    assert "vector cache" in caplog.text and "not read" in caplog.text
