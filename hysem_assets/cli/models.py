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


def _training_options(folder: str, contents: str, model: str):
    """``--data`` (the labelled ``folder`` of realdata, holding ``contents``) and ``-o`` (default: ``model``)."""

    def options(command):
        command = click.option(
            "-o",
            "--output",
            type=click.Path(file_okay=False, path_type=Path),
            help=f"Where to write the model (default: the package's {model}).",
        )(command)
        return click.option(
            "--data",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            default=_REALDATA / folder,
            show_default=True,
            help=f"Folder with {contents}.",
        )(command)

    return options


def rebuild_model(build, model_dir: Path, data: Path, output: Path | None) -> None:
    """Run a model's ``build`` on ``data`` into ``output`` (else ``model_dir``), its progress on stderr, and name
    the sha256 of each file its card records (one model file, or one per part)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    card = build(data, output or model_dir, progress=lambda line: click.echo(line, err=True))
    digests = card["sha256"] if isinstance(card["sha256"], dict) else {"model": card["sha256"]}  # one file or parts
    click.echo(f"wrote {output or model_dir} (sha256 {', '.join(f'{p} {d[:12]}' for p, d in digests.items())})")


@train.command("tagger")
@_training_options(
    "pico_ebmnlp", "crowd_960.conll and interventions_1978.conll (EBM-NLP)", "pico/model, which extraction loads"
)
def train_tagger(data: Path, output: Path | None) -> None:
    """Train the participants / interventions / outcomes span tagger (CPU, fixed seed, about 45 minutes)."""
    from hysem_assets.pico.build import build
    from hysem_assets.pico.tagger import MODEL_DIR

    rebuild_model(build, MODEL_DIR, data, output)


@train.command("findings")
@_training_options(
    "evidence_inference",
    "prompts.csv, annotations.csv and txt/ (Evidence Inference)",
    "findings/model, which the findings asset loads",
)
def train_findings(data: Path, output: Path | None) -> None:
    """Train the findings model: evidence sentence and direction of a comparison (CPU, fixed seed, about an hour)."""
    from hysem_assets.findings.build import build
    from hysem_assets.findings.classifier import MODEL_DIR

    rebuild_model(build, MODEL_DIR, data, output)


@train.command("entities")
@_training_options(
    ".",
    "scierc_ner/, ncbi_disease/ and scierc_relations/ (SciERC entities and relations, NCBI-disease)",
    "entities/model, which the entities asset and `hysem entities` load",
)
def train_entities(data: Path, output: Path | None) -> None:
    """Train the entity and relation model: scientific entities, diseases, relations (CPU, fixed seed, about 30
    minutes)."""
    from hysem_assets.entities.build import build
    from hysem_assets.entities.tagger import MODEL_DIR

    rebuild_model(build, MODEL_DIR, data, output)


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
