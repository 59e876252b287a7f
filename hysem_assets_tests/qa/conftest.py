"""One MiniLM and one indexed tiny partition for the whole QA test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets_tests.qa.corpus import Partition, build_partition


@pytest.fixture(scope="session")
def embedder() -> Encoder:
    return Encoder(device="cpu", batch_size=16)


@pytest.fixture(scope="session")
def partition(tmp_path_factory: pytest.TempPathFactory, embedder: Encoder) -> Iterator[Partition]:
    built = build_partition(tmp_path_factory.mktemp("qa"), embedder)
    yield built
    built.store.close()
    built.graph.close()
