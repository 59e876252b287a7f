"""A sentence-transformers BERT model exported to ONNX and run by ONNX Runtime on the CPU.

On two CPU cores ONNX Runtime computes the packaged all-MiniLM-L6-v2's vectors faster than
sentence-transformers on torch (``benchmarks/embed_speed.py``: 1.4-1.6x; int8 2.2-2.8x),
from a file exported once per model: the folder's weights traced by ``torch.onnx.export``
with mean pooling and normalisation, BERT's attention, GELU and layer norms then fused by
ONNX Runtime's transformer optimizer (``model.onnx``: torch's vectors, to float32 rounding).
``model-int8.onnx`` gives its matrix products int8 weights, one scale per output channel,
and quantizes activations per call (cosine about 0.99 to the fp32 vectors). Much of the
gain is in the batching: texts sorted by token count, a few hundred tokens per call so a
layer's activations stay in the core's cache, one call per core at a time.

Files live in ``$HYSEM_HOME/models/<name>-<hash of the model files>/`` (under
``$HYSEM_MODELS_DIR`` when set, which several homes can share): a changed model is a new
folder, and nothing is fetched from a hub. Exports are written to a temporary name and
renamed, under a file lock, so concurrent steps export once and never read half a file.
``source.json`` beside them records each file's sha256, checked once per process: a file
changed since (damaged in place, even at its size) is exported again, so no vector a cache
keeps under the model's fingerprint comes from other weights. A process keeps one session per
model file, whatever ``HYSEM_HOME`` later says.

It covers the models :func:`hysem_assets.embedding.bert_numpy.supported` accepts (BERT, mean pooling,
normalised), the pooling it bakes into the graph.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tokenizers import Tokenizer

from hysem_assets.core.atomic import write_json
from hysem_assets.core.filehash import Stamp, add_file, file_sha256, stamp
from hysem_assets.embedding import bert_numpy
from hysem_assets.embedding.minilm import MODEL_NAME, packaged_model_path
from hysem_assets.settings.environment import models_dir, omp_threads

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

#: Encoder backend name -> exported file.
VARIANTS = {"onnx": "model.onnx", "onnx-int8": "model-int8.onnx"}
OPSET = 17
#: Padded tokens per ONNX Runtime call (one text at least). A layer's activations then stay in
#: the core's cache: on two cores 256 tokens ran MiniLM about 1.4x faster than 64 chunks at once.
TOKENS_PER_BATCH = 256
_SESSIONS: dict[tuple[str, str], InferenceSession] = {}
_SESSIONS_LOCK = threading.Lock()
log = logging.getLogger(__name__)


def _model_files(folder: Path) -> list[Path]:
    """What sentence-transformers reads: the folder's own files and its modules' folders (no README)."""
    modules = json.loads((folder / "modules.json").read_text()) if (folder / "modules.json").is_file() else []
    dirs = [folder, *(folder / m["path"] for m in modules if m.get("path"))]
    return sorted(
        {path for d in dirs if d.is_dir() for path in d.iterdir() if path.is_file() and path.name != "README.md"}
        - {folder / ".gitattributes"}
    )


def fingerprint(folder: str) -> str:
    """sha256 of a model folder's files (names and bytes): what its vectors depend on. Hashed once per process
    for each version of the files, so weights changed on disk, even at their size, get a fingerprint of their own."""
    files = _model_files(Path(folder))
    return _fingerprint(folder, tuple(stamp(path) for path in files))


@lru_cache(maxsize=8)
def _fingerprint(folder: str, versions: tuple[Stamp | None, ...]) -> str:
    root, digest = Path(folder), hashlib.sha256()
    for path in _model_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        add_file(digest, path)
        digest.update(b"\0")
    return digest.hexdigest()


def model_dir(folder: Path) -> Path:
    """``<models_dir()>/<model name>-<16 hex of its fingerprint>`` (``$HYSEM_HOME/models`` by default)."""
    packaged = folder.resolve() == packaged_model_path().resolve()
    name = re.sub(r"[^\w.-]+", "-", MODEL_NAME if packaged else folder.resolve().name).strip("-") or "model"
    return models_dir() / f"{name}-{fingerprint(str(folder))[:16]}"


def threads() -> int:
    """Batches run at once: ``OMP_NUM_THREADS`` when set, as torch reads it, else the CPUs this process may use."""
    if (set_threads := omp_threads()) is not None:
        return set_threads
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def atomic_target(target: Path) -> Path:
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    return Path(name)


def _export_fp32(folder: Path, target: Path) -> None:
    """Trace the model with mean pooling and normalisation, then fuse it for ONNX Runtime's CPU kernels."""
    import torch
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    # eager attention traces to the pattern the optimizer fuses into one Attention node
    model = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    # a padded sample, so no branch taken only for unpadded input is traced into the graph
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 102, 0, 0]])
    mask = (ids != 0).long()
    traced = atomic_target(target)
    try:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled(),
                (ids, mask),
                str(traced),
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}},
                opset_version=OPSET,
                dynamo=False,
            )
        fuse_bert(traced, config)
        os.replace(traced, target)
    finally:
        traced.unlink(missing_ok=True)


def export_logits(model: Any, target: Path, logits_axes: dict[int, str]) -> None:
    """A fine-tuned BERT with its head (a torch module of ids and mask) traced to ``logits`` and fused; the
    shipped taggers' export. ``logits_axes`` names the output's dynamic axes."""
    import torch

    model.eval()
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 102, 0, 0]])  # padded, as in the embedding export
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, (ids != 0).long()),
            str(target),
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
            dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}}
            | {"logits": logits_axes},
            opset_version=OPSET,
            dynamo=False,
        )
    fuse_bert(target, model.encoder.config)


def single_thread_session(path: Path) -> InferenceSession:
    """A CPU session of a shipped model on one thread: callers read several documents at once, one per core."""
    from onnxruntime import InferenceSession, SessionOptions

    options = SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def fuse_bert(path: Path, config: Any) -> None:
    """Fuse a traced BERT's attention, GELU and layer norms in place for ONNX Runtime's CPU kernels."""
    from onnxruntime.transformers.optimizer import optimize_model

    fused = optimize_model(
        str(path),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=0,
    )
    fused.save_model_to_file(str(path))


def quantize_int8(source: Path, target: Path, reduce_range: bool = True) -> None:
    """Int8 weights per output channel, activations quantized per batch. ``reduce_range`` (7-bit weights)
    keeps CPUs without VNNI from saturating; measured, it costs nothing for sentence vectors (the span
    tagger measures its own choice)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized, quiet = atomic_target(target), logging.root.manager.disable
    try:
        logging.disable(logging.WARNING)  # its advice to pre-process, written to the root logger each time
        quantize_dynamic(
            source,
            quantized,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=reduce_range,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # fused ops have no inferred types
        )
        os.replace(quantized, target)
    finally:
        logging.disable(quiet)
        quantized.unlink(missing_ok=True)


def _intact(path: Path) -> bool:
    """Whether ``path`` is the file its export wrote: its sha256 is the one ``source.json`` beside it records."""
    try:
        recorded = json.loads((path.parent / "source.json").read_text()).get("files", {})
    except (OSError, ValueError):
        recorded = {}  # no export finished here, or one of an older hysem, which recorded no hashes
    return path.is_file() and recorded.get(path.name) == file_sha256(path)


def exported(folder: Path, variant: str) -> Path:
    """The ONNX file of ``folder`` for a backend in :data:`VARIANTS`, exported now if missing or changed since."""
    from filelock import FileLock

    directory = model_dir(folder)
    target = directory / VARIANTS[variant]
    if _intact(target):
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with FileLock(directory / ".export.lock"):
        # of an export that was killed or met a full disk (the quantizer's shape-inferred copy); none runs now
        for leftover in [*directory.glob(".*.tmp"), *directory.glob("*-inferred.onnx")]:
            leftover.unlink(missing_ok=True)
        fp32 = directory / VARIANTS["onnx"]
        if not _intact(target):
            for path in dict.fromkeys([fp32, target]):
                if path.is_file() and not _intact(path):
                    log.warning("%s is not the file source.json records as exported there; exporting it again", path)
                    path.unlink()
            if not fp32.is_file():
                _export_fp32(folder, fp32)
            if not target.is_file():
                quantize_int8(fp32, target)
            files = {name: file_sha256(directory / name) for name in VARIANTS.values() if (directory / name).is_file()}
            source = {"model": str(folder), "fingerprint": fingerprint(str(folder)), "files": files}
            write_json(directory / "source.json", source)
    return target


def session(folder: Path, variant: str) -> InferenceSession:
    """One ONNX Runtime session per model file in this process. Each call runs on its caller's thread
    alone: small batches, one per core at a time, outran two threads sharing each batch by about 10%
    (fp32) and 20% (int8) on two cores, and no thread waits on another between batches."""
    key = (fingerprint(str(folder)), variant)
    with _SESSIONS_LOCK:
        if key not in _SESSIONS:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            _SESSIONS[key] = ort.InferenceSession(
                str(exported(folder, variant)), options, providers=["CPUExecutionProvider"]
            )
        return _SESSIONS[key]


class OnnxEncoder:
    """Tokenizer and session of one model folder; check :func:`hysem_assets.embedding.bert_numpy.supported` first."""

    def __init__(self, folder: Path, variant: str) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown ONNX variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        self.folder, self.variant = folder, variant
        config = json.loads((folder / "config.json").read_text())
        self.dimension = int(config["hidden_size"])
        settings = folder / "sentence_bert_config.json"
        self.max_length = (
            int(json.loads(settings.read_text()).get("max_seq_length", 512)) if settings.is_file() else 512
        )
        # two tokenizers, so spans (whole text) and model input (truncated) never share a setting
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer.no_padding()
        self.spans_tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.spans_tokenizer.no_truncation()
        self.spans_tokenizer.no_padding()

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's tokens of ``text`` (no special tokens, no truncation)."""
        encoded = self.spans_tokenizer.encode(text, add_special_tokens=False)
        return [(start, end) for start, end in encoded.offsets if end > start]

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors of ``texts`` in their order, computed shortest first in batches of at most
        ``batch_size`` texts (int8: one) and :data:`TOKENS_PER_BATCH` padded tokens, each padded to its
        longest, one batch per core at a time."""
        encodings = self.tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        runner = session(self.folder, self.variant)
        # int8 scales each call's activations by their range: alone, a text's vector never depends on its neighbours
        limit = 1 if self.variant == "onnx-int8" else batch_size
        batches = [order[rows] for rows in _batches(lengths[order], limit)]

        def run(rows: np.ndarray) -> np.ndarray:
            ids = np.zeros((len(rows), int(lengths[rows[-1]])), dtype=np.int64)
            for row, index in enumerate(rows):
                ids[row, : lengths[index]] = encodings[index].ids
            mask = (np.arange(ids.shape[1]) < lengths[rows][:, None]).astype(np.int64)
            feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
            return runner.run(["embedding"], feed)[0]

        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        workers = threads()
        if workers > 1 and len(batches) > 1:  # ONNX Runtime releases the GIL while it computes
            results = list(_pool(workers, os.getpid()).map(run, batches))
        else:
            results = [run(rows) for rows in batches]
        for rows, result in zip(batches, results, strict=True):
            vectors[rows] = result
        return vectors


@lru_cache(maxsize=4)
def _pool(workers: int, process: int) -> ThreadPoolExecutor:
    """The encoder threads of process ``process`` (a forked child gets its own), one per core: shared by every
    call, so calls from several threads at once (extraction reads documents in parallel) queue their batches
    instead of each starting threads of its own."""
    return ThreadPoolExecutor(workers, thread_name_prefix="onnx-encoder")


def _batches(sorted_lengths: np.ndarray, batch_size: int) -> list[slice]:
    """Consecutive runs of ascending lengths, each of at most ``batch_size`` texts and, padded to its
    last (longest) text, at most :data:`TOKENS_PER_BATCH` tokens (one text at least)."""
    runs, start = [], 0
    while start < len(sorted_lengths):
        end = start + 1
        while (
            end < len(sorted_lengths)
            and end - start < batch_size
            and (end + 1 - start) * sorted_lengths[end] <= TOKENS_PER_BATCH
        ):
            end += 1
        runs.append(slice(start, end))
        start = end
    return runs


def check(folder: str, variant: str) -> None:
    """Raise ``ValueError`` unless ``folder`` is a model this module runs (reads three small files)."""
    if not bert_numpy.supported(Path(folder)):
        raise ValueError(
            f"the {variant} backend runs BERT models with mean pooling and normalised vectors from a local folder "
            f"(like the packaged all-MiniLM-L6-v2); {folder} is not one: use backend torch"
        )


@lru_cache(maxsize=8)
def load(folder: str, variant: str) -> OnnxEncoder:
    """The encoder of ``folder`` (tokenizer now, session on first use), once per process."""
    check(folder, variant)
    return OnnxEncoder(Path(folder), variant)
