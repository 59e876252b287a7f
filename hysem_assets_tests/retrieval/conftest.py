"""One MiniLM for the whole session: loading it is the slow part of these tests."""

from __future__ import annotations

import pytest

from hysem_assets.retrieval.embedding import Embedder


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder(device="cpu", batch_size=16)
