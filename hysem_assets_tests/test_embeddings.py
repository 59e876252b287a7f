"""The one sentence encoder: unit float32 vectors, progress, and one model load per process."""

from __future__ import annotations

import numpy as np

from hysem_assets.embeddings import Encoder, load_encoder
from hysem_assets.minilm import MODEL_NAME, packaged_model_path


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
