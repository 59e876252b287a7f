"""A BERT sentence encoder (mean pooling, unit vectors) computed with NumPy alone.

Answering one question embeds the question and a few dozen sentences: milliseconds of
arithmetic, behind seconds of importing torch and sentence-transformers. This reads the
folder sentence-transformers reads (``config.json``, ``model.safetensors``,
``tokenizer.json``, the pooling and length settings) and computes the same vectors, to
float32 rounding, so vectors stored by the indexer and vectors computed here agree. It
covers what it can check: a BERT encoder with absolute positions and GELU, mean pooling and
normalisation (the packaged all-MiniLM-L6-v2 and its kin); :func:`supported` says so.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

_SQRT_HALF = math.sqrt(0.5)
_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def supported(folder: Path) -> bool:
    """True for a sentence-transformers folder this module computes exactly: BERT, mean pooling, normalised."""
    config, modules = (
        _read(folder / "config.json"),
        json.loads((folder / "modules.json").read_text()) if (folder / "modules.json").is_file() else [],
    )
    pooling = _read(folder / "1_Pooling" / "config.json")
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and tuple(m.get("type") for m in modules) == _MODULES
        and pooling.get("pooling_mode_mean_tokens") is True
        and not any(pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens"))
        and (folder / "model.safetensors").is_file()
        and (folder / "tokenizer.json").is_file()
    )


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, ``x * Phi(x)``, with the error function of Abramowitz and Stegun 7.1.26 (error
    below 1.5e-7; NumPy has no erf, and SciPy is a second's import): few temporaries, it is
    the largest elementwise step of the network."""
    z = np.abs(x)
    z *= _SQRT_HALF
    t = z * 0.3275911
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z
    poly *= 0.5  # half of 1 - erf(|x| / sqrt 2), that is Phi(-|x|)
    return np.where(x >= 0, x - x * poly, x * poly)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class NumpyBert:
    """The encoder of one model folder; check :func:`supported` first."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file

        config = _read(folder / "config.json")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.dimension = int(config["hidden_size"])
        self.max_length = int(_read(folder / "sentence_bert_config.json").get("max_seq_length", 512))
        self.w = {name.removeprefix("bert."): value for name, value in load_file(folder / "model.safetensors").items()}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer.no_padding()

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's tokens of ``text`` (no special tokens, no truncation)."""
        self.tokenizer.no_truncation()
        try:
            encoded = self.tokenizer.encode(text, add_special_tokens=False)
        finally:
            self.tokenizer.enable_truncation(max_length=self.max_length)
        return [(start, end) for start, end in encoded.offsets if end > start]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        """``x W^T + b`` as one 2-D product: BLAS reads the stored (out, in) weight transposed, with no copy
        (a stacked 3-D product would fall back to NumPy's own loop)."""
        weight = self.w[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight.T
        flat += self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[0])

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, (batch, length) = self.w, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        size = self.dimension // self.heads
        scale = 1.0 / math.sqrt(size)  # a Python float: a NumPy float64 here would turn every array float64
        blocked = ((1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min).astype(np.float32)
        for n in range(self.layers):
            layer = f"encoder.layer.{n}"

            def heads(name: str, layer: str = layer) -> np.ndarray:
                projected = self._dense(x, f"{layer}.attention.self.{name}")
                return projected.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

            scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) * scale + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ heads("value")
            context = context.transpose(0, 2, 1, 3).reshape(batch, length, self.dimension)
            x = _layer_norm(
                self._dense(context, f"{layer}.attention.output.dense") + x,
                w[f"{layer}.attention.output.LayerNorm.weight"],
                w[f"{layer}.attention.output.LayerNorm.bias"],
                self.eps,
            )
            inner = self._dense(x, f"{layer}.intermediate.dense")
            inner = _gelu(inner)
            x = _layer_norm(
                self._dense(inner, f"{layer}.output.dense") + x,
                w[f"{layer}.output.LayerNorm.weight"],
                w[f"{layer}.output.LayerNorm.bias"],
                self.eps,
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors of ``texts`` (float32), batched by length so little is spent on padding.

        BLAS runs on one thread: these products are small, and more threads spin for longer
        than they save, the more so beside other processes.
        """
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="blas"):
            return self._encode(texts, batch_size)

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            length = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), length), dtype=np.int64)
            mask = np.zeros((len(rows), length), dtype=np.float32)
            for r, i in enumerate(rows):
                ids[r, : len(encodings[i].ids)] = encodings[i].ids
                mask[r, : len(encodings[i].ids)] = 1.0
            vectors[rows] = self._forward(ids, mask)
        return vectors


@lru_cache(maxsize=4)
def load(folder: str) -> NumpyBert:
    """The encoder of ``folder``, loaded once per process."""
    return NumpyBert(Path(folder))
