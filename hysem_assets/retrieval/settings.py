"""``assets.vector_index`` in a profile: the vector store plus chunking and embedding choices."""

from __future__ import annotations

from pydantic import Field, model_validator

from hysem_assets.retrieval.embedding import Embedder
from hysem_assets.stores.settings import VectorSettings


class VectorIndexSettings(VectorSettings):
    #: sentence-transformers model name or folder; None: the bundled all-MiniLM-L6-v2
    model: str | None = None
    device: str = "cpu"
    batch_size: int = Field(64, ge=1)
    #: chunk size in the model's tokens (MiniLM reads at most 256) and overlap between chunks
    max_tokens: int = Field(200, ge=8)
    overlap: int = Field(40, ge=0)

    @model_validator(mode="after")
    def _overlap_fits(self) -> VectorIndexSettings:
        if self.overlap >= self.max_tokens:
            raise ValueError("overlap must be smaller than max_tokens")
        return self

    def embedder(self) -> Embedder:
        return Embedder(self.model, device=self.device, batch_size=self.batch_size)
