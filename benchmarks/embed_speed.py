"""Embedding speed on the CPU: chunks/s of hysem's encoder backends against raw sentence-transformers.

The passages are real chunks: the works of ../shared/realdata (PubMed efetch XML, OpenAlex
and Crossref responses, read through hysem's own parsers) and the Docling ground-truth
Markdown full texts, cut by hysem's chunker (``work_chunks``, 200 MiniLM tokens) into the
text the vector index embeds; distinct passages of at least ``--min-tokens`` tokens, in a
seeded shuffle, ``--count`` of them (the realdata gives 1,305). The baseline, measured in
the same run on the same passages, is ``SentenceTransformer.encode`` of the packaged
all-MiniLM-L6-v2 (batch 64). Rows: hysem's ``Encoder`` with the torch backend, with
``onnx`` (ONNX Runtime, the same vectors) and ``onnx-int8`` (int8 weights), then the
profile's default backend with the vector cache, empty (embed and store) and warm (every
passage stored before). Every runner is warmed up first (model loads, the one-time ONNX
export into $HYSEM_HOME/models); then the rows take turns on each slice of ``--slice``
passages, ``--rounds`` times, and a row's time is the sum over slices of its best round: a
burst of work elsewhere on the machine slows one slice of every row, not one whole row.
Beside chunks/s and the ratio to the baseline: the mean and lowest cosine of each row's
vectors to the baseline's.

``--quality`` adds nDCG@10 per backend: the team-written BEIR sample (dense and hybrid,
through ``evaluate_beir``) and a known-item search on the real records (each title a
query, its own abstract the one relevant passage among every abstract), with the question
embedded by the same backend and, as ``hysem ask`` does, in float32 by NumPy.

    python benchmarks/embed_speed.py [--count 2000] [--rounds 3] [--slice 200] [--batch-size 64] [--quality]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.minilm import packaged_model_path
from hysem_assets.embedding.onnx_encoder import threads
from hysem_assets.embedding.vector_cache import VectorCache
from hysem_assets.retrieval.chunking import work_chunks
from hysem_assets.settings.profile import VectorIndexSettings
from hysem_assets.sources.crossref_json import jats_to_text
from hysem_assets.sources.openalex_json import parse_work
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets.stores.chunks import searchable_text

ROOT = Path(__file__).resolve().parents[1]
REALDATA = ROOT.parent / "shared" / "realdata"
BEIR_SAMPLE = ROOT / "hysem_assets_tests" / "retrieval" / "beir_sample"
BACKENDS = ("torch", "onnx", "onnx-int8")


def _openalex_works(value: object) -> list[dict]:
    """Every OpenAlex work object inside a response (a list page, one work, or nested)."""
    if isinstance(value, list):
        return [work for item in value for work in _openalex_works(item)]
    if not isinstance(value, dict):
        return []
    own = [value] if str(value.get("id", "")).startswith("https://openalex.org/W") else []
    return own + [work for key, item in value.items() if key != "referenced_works" for work in _openalex_works(item)]


def real_works(realdata: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(works: cluster_id, title, abstract, publication_types; documents: cluster_id, markdown) from the
    realdata files."""
    works: list[dict] = []
    for path in sorted(realdata.glob("pubmed_*/*.xml")):
        body = path.read_bytes()
        if b"<PubmedArticleSet" in body:
            works += [
                {
                    "cluster_id": f"pubmed:{r['source_id']}",
                    **{k: r[k] for k in ("title", "abstract", "publication_types")},
                }
                for r in parse_efetch(body, str(path))
            ]
    for path in sorted(realdata.glob("openalex/*/*.json")):
        for work in _openalex_works(json.loads(path.read_text(encoding="utf-8"))):
            record = parse_work(work)
            works.append(
                {
                    "cluster_id": f"openalex:{record['source_id']}",
                    **{k: record[k] for k in ("title", "abstract")},
                    "publication_types": record["item_type"],
                }
            )
    for path in sorted(realdata.glob("crossref_habanero/*.json")):
        message = json.loads(path.read_text(encoding="utf-8")).get("message")
        items = message.get("items", [message]) if isinstance(message, dict) else []
        for item in items:
            if isinstance(item, dict) and item.get("DOI"):
                title = " ".join(((item.get("title") or [""])[0] or "").split())
                works.append(
                    {
                        "cluster_id": f"doi:{item['DOI'].lower()}",
                        "title": title,
                        "abstract": jats_to_text(item.get("abstract")),
                        "publication_types": item.get("type"),
                    }
                )
    documents = [
        {"cluster_id": f"md:{path.relative_to(realdata)}", "markdown": path.read_text(encoding="utf-8")}
        for path in sorted(realdata.glob("pdf_docling_*/*/*.md"))
    ]
    columns = ["cluster_id", "title", "abstract", "publication_types"]
    frame = pd.DataFrame(works, columns=columns).drop_duplicates("cluster_id")
    return frame, pd.DataFrame(documents, columns=["cluster_id", "markdown"])


def passages(realdata: Path, count: int, min_tokens: int, seed: int, spans: Callable) -> list[str]:
    works, documents = real_works(realdata)
    chunks = work_chunks(works, documents, max_tokens=200, overlap=40, spans=spans)
    texts = list(
        dict.fromkeys(searchable_text(s or "", t) for s, t in zip(chunks["section"], chunks["text"], strict=True))
    )
    texts = [text for text in texts if len(spans(text)) >= min_tokens]
    random.Random(seed).shuffle(texts)
    return texts[:count]


def cosines(vectors: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", vectors.astype(np.float64), baseline.astype(np.float64))


def known_item_ndcg(queries: np.ndarray, documents: np.ndarray) -> float:
    """nDCG@10 when document i is the one relevant answer to query i."""
    scores = queries @ documents.T
    ranks = (scores > np.diag(scores)[:, None]).sum(1)
    return float(np.where(ranks < 10, 1 / np.log2(ranks + 2), 0.0).mean())


def quality(encoders: dict[str, Encoder], realdata: Path, work_dir: Path) -> list[list]:
    from hysem_assets.retrieval.beir import evaluate_beir

    works, _ = real_works(realdata)
    pairs = works[works["title"].str.len().fillna(0).gt(0) & works["abstract"].str.len().fillna(0).gt(200)]
    pairs = pairs.drop_duplicates("abstract").drop_duplicates("title")
    titles, abstracts = list(pairs["title"]), list(pairs["abstract"])
    float32_titles = Encoder(backend="numpy").encode(titles)
    rows = []
    for backend, encoder in encoders.items():
        beir = evaluate_beir(BEIR_SAMPLE, "all", embedder=encoder, work_dir=work_dir)
        documents = encoder.encode(abstracts)
        rows.append(
            [
                backend,
                beir["dense"].ndcg_at_10,
                beir["hybrid"].ndcg_at_10,
                known_item_ndcg(encoder.encode(titles), documents),
                known_item_ndcg(float32_titles, documents),
            ]
        )
    print(f"\nnDCG@10: BEIR sample ({BEIR_SAMPLE.relative_to(ROOT)}) and {len(pairs)} real titles -> own abstract")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="passages embedded per row")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds; each slice's best counts")
    parser.add_argument("--slice", type=int, default=200, help="passages each row embeds before the next takes a turn")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--min-tokens", type=int, default=32, help="shortest passage kept (titles alone are not chunks)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--quality", action="store_true", help="also nDCG@10 per backend")
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    spans = Encoder(backend="onnx").token_spans
    texts = passages(args.realdata, args.count, args.min_tokens, args.seed, spans)
    lengths = np.array([len(spans(text)) for text in texts])
    print(
        f"{len(texts):,} real passages, MiniLM tokens median {np.median(lengths):.0f}, p90 "
        f"{np.percentile(lengths, 90):.0f}, max {lengths.max()}; {threads()} threads; batch {args.batch_size}",
        flush=True,
    )
    model = SentenceTransformer(str(packaged_model_path()), device="cpu", local_files_only=True)
    encoders = {backend: Encoder(batch_size=args.batch_size, backend=backend) for backend in BACKENDS}
    default = VectorIndexSettings().embedding_backend  # the vector index's backend when a profile names none
    with tempfile.TemporaryDirectory() as scratch:
        cold_cache, warm_cache = VectorCache(Path(scratch) / "cold"), VectorCache(Path(scratch) / "warm")
        cached = Encoder(batch_size=args.batch_size, backend=default, cache=warm_cache)

        def cold(part: list[str]) -> np.ndarray:
            cold_cache.path.unlink(missing_ok=True)
            for suffix in ("-wal", "-shm"):
                Path(f"{cold_cache.path}{suffix}").unlink(missing_ok=True)
            return Encoder(batch_size=args.batch_size, backend=default, cache=cold_cache).encode(part)

        runners: dict[str, Callable[[list[str]], np.ndarray]] = {
            "sentence-transformers encode (baseline)": lambda part: model.encode(
                part, batch_size=args.batch_size, normalize_embeddings=True, show_progress_bar=False
            ),
            **{f"hysem Encoder, {backend}": encoder.encode for backend, encoder in encoders.items()},
            f"hysem {default} + vector cache, empty": cold,
            f"hysem {default} + vector cache, warm": cached.encode,
        }
        started = time.perf_counter()  # warm-up: loading and the one-time ONNX export belong to no row
        model.encode(texts[:64], batch_size=args.batch_size, show_progress_bar=False)
        for encoder in encoders.values():
            encoder.encode(texts[:64])
        print(f"warm-up (model loads; ONNX export if missing) {time.perf_counter() - started:.0f} s", flush=True)
        cached.encode(texts)  # every passage stored before the timed rounds

        # rows take turns on each slice, so a burst of load elsewhere slows one slice of each
        # row rather than one whole row; a row's time is the sum of its best time per slice
        slices = [texts[start : start + args.slice] for start in range(0, len(texts), args.slice)]
        best = {name: [float("inf")] * len(slices) for name in runners}
        parts: dict[str, list[np.ndarray]] = {name: [np.empty(0)] * len(slices) for name in runners}
        for round_ in range(args.rounds):
            for number, part in enumerate(slices):
                for name, run in runners.items():
                    started = time.perf_counter()
                    parts[name][number] = run(part)
                    best[name][number] = min(best[name][number], time.perf_counter() - started)
            print(f"round {round_ + 1}/{args.rounds} done", flush=True)
        assert cached.encoded == len(texts), "the warm cache embedded passages again"
    seconds = {name: sum(times) for name, times in best.items()}
    vectors = {name: np.vstack(arrays) for name, arrays in parts.items()}

    baseline = next(iter(runners))
    rows = []
    for name in runners:
        similarity = cosines(vectors[name], vectors[baseline])
        rows.append(
            [name, len(texts) / seconds[name], seconds[baseline] / seconds[name], similarity.mean(), similarity.min()]
        )
    print()
    print(
        tabulate(
            rows,
            headers=["row", "chunks/s", "x baseline", "mean cosine", "min cosine"],
            floatfmt=("", ".1f", ".2f", ".6f", ".6f"),
        )
    )
    if args.quality:
        with tempfile.TemporaryDirectory() as scratch:
            table = quality(encoders, args.realdata, Path(scratch))
        print(
            tabulate(
                table,
                headers=["backend", "BEIR dense", "BEIR hybrid", "known item", "known item, float32 questions"],
                floatfmt=("", ".4f", ".4f", ".4f", ".4f"),
            )
        )


if __name__ == "__main__":
    main()
