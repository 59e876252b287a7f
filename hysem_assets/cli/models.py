"""The models hysem ships and measures: ``train`` them again, ``eval-retrieval`` on a labelled collection."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from hysem_assets.settings.environment import project_root

#: Labelled data beside the source checkout (``../shared/realdata``); for an installed wheel, name it with --data.
_REALDATA = (project_root() or Path(__file__).resolve().parents[2]).parent / "shared" / "realdata"


@click.group()
def train() -> None:
    """Rebuild the models hysem ships from labelled data."""


@train.command("tagger")
@click.option(
    "--data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=_REALDATA / "pico_ebmnlp",
    show_default=True,
    help="Folder with crowd_960.conll and interventions_1978.conll (EBM-NLP).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the model (default: the package's pico/model, which extraction loads).",
)
def train_tagger(data: Path, output: Path | None) -> None:
    """Train the participants / interventions / outcomes span tagger (CPU, fixed seed, about 45 minutes)."""
    from hysem_assets.pico.build import build
    from hysem_assets.pico.tagger import MODEL_DIR

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    card = build(data, output or MODEL_DIR, progress=lambda line: click.echo(line, err=True))
    click.echo(f"wrote {output or MODEL_DIR} (sha256 {card['sha256'][:12]})")


@train.command("findings")
@click.option(
    "--data",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=_REALDATA / "evidence_inference",
    show_default=True,
    help="Folder with prompts.csv, annotations.csv and txt/ (Evidence Inference).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the model (default: the package's findings/model, which the findings asset loads).",
)
def train_findings(data: Path, output: Path | None) -> None:
    """Train the findings model: evidence sentence and direction of a comparison (CPU, fixed seed, about an hour)."""
    from hysem_assets.findings.build import build
    from hysem_assets.findings.classifier import MODEL_DIR

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    card = build(data, output or MODEL_DIR, progress=lambda line: click.echo(line, err=True))
    click.echo(f"wrote {output or MODEL_DIR} (sha256 {card['sha256'][:12]})")


@click.command("eval-retrieval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--method", type=click.Choice(["bm25", "dense", "hybrid", "all"]), default="all", show_default=True)
@click.option("--split", default="test", show_default=True, help="qrels/<split>.tsv to score against.")
def eval_retrieval(folder: Path, method: str, split: str) -> None:
    """nDCG@10 and Recall@100 on a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/).

    Uses the chunking, indexes and search of the vector_index asset and the QA stage;
    hybrid is Qdrant's Reciprocal Rank Fusion (k = 60) of the dense and BM25 lists.
    """
    from hysem_assets.defs.resources import build_resources
    from hysem_assets.retrieval.beir import evaluate_beir

    try:
        results = evaluate_beir(folder, method, embedder=build_resources()["chunk_store"].encoder(), split=split)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(f"{folder}: {exc}") from exc
    click.echo(f"{'method':<8} {'nDCG@10':>8} {'Recall@100':>11} {'queries':>8}")
    for metrics in results.values():
        click.echo(
            f"{metrics.method:<8} {metrics.ndcg_at_10:>8.4f} {metrics.recall_at_100:>11.4f} {metrics.queries:>8}"
        )


COMMANDS = (train, eval_retrieval)
