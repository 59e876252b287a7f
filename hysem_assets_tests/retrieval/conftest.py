"""One MiniLM for the whole session: loading it is the slow part of these tests."""

from __future__ import annotations

import pytest

from hysem_assets.embedding.encoder import Encoder


@pytest.fixture(scope="session")
def embedder() -> Encoder:
    return Encoder(device="cpu", batch_size=16)
