"""QA answer quality on the embedded default: route accuracy, cited-source recall and claim support.

Runs the labelled questions of ``benchmarks/data/qa_questions.yaml`` (local, global, numeric,
counting and listing questions with the works an answer should cite, read off the sample's
text) against a materialized sample partition: ``$HYSEM_HOME`` when it holds one, else the
sample demo is materialized into a temporary ``HYSEM_HOME`` first (a few minutes). Each
question is answered twice in the same run: routed (rules, fallback chain), and by the
baseline, hybrid retrieval with the revise loop for every question (the local route alone).

Per expected route it prints:

- route accuracy: the router's first choice equals the label;
- recall@5 and recall@all: the share of the expected works among the first five works the
  answer cites, and among all it cites;
- supported: the share of quoted claims whose words (80%, the auditor's rule) stand in the
  chunk they cite (a whole-work citation: any of its chunks). Counting and listing claims
  and the numeric total are computed from the graph, not quoted, and are left out;
- for global questions, the share of the partition's topics the cited works cover.

    python benchmarks/qa_quality.py [--questions FILE] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

QUESTIONS = Path(__file__).parent / "data" / "qa_questions.yaml"
TABLES = ("vector_index", "library", "canonical_terms", "extracted_fields", "summary_tree", "topics", "deduped_corpus")
SUPPORT = 0.8


def materialized(home: Path, query: str) -> bool:
    return all((home / "assets" / table / f"{query}.parquet").is_file() for table in TABLES)


def cited_works(details: dict) -> list[str]:
    """Cluster ids in the order the answer first cites them."""
    return list(dict.fromkeys(c["PDF_DocIndex"] for claim in details["claims"] for c in claim["citations"]))


def quoted_claims(answer: dict, details: dict) -> list[dict]:
    """Claims that quote text: not the counts a graph route computes, nor the numeric total, nor a number
    stated without an evidence sentence (a publication year, given with its work's title)."""
    if answer["route"] in ("counting", "listing"):
        return []
    if answer["route"] != "numeric":
        return details["claims"]
    unquoted = {row["cluster_id"] for row in details["numeric"]["rows"] if not row["evidence"]}
    return [c for c in details["claims"][1:] if not {x["PDF_DocIndex"] for x in c["citations"]} & unquoted]


def supported(claim: dict, chunks: dict[tuple[str, int], str], works: dict[str, str]) -> bool:
    from hysem_assets.qa.embedded import containment

    cited = [
        chunks.get((c["PDF_DocIndex"], c["PDF_ChunkIndex"]), "")
        if c["PDF_ChunkIndex"] is not None
        else works.get(c["PDF_DocIndex"], "")
        for c in claim["citations"]
    ]
    return containment(claim["text"], " ".join(cited)) >= SUPPORT


def _title(text: object) -> str:
    return " ".join(str(text).split()).rstrip(".").casefold()


def expected_clusters(sources: list[str], corpus: pd.DataFrame) -> set[str]:
    """Cluster ids of the labelled works (a DOI, or the title of a work without one)."""
    by_doi = {str(d).lower(): c for d, c in zip(corpus["doi"], corpus["cluster_id"], strict=True) if isinstance(d, str)}
    by_title = {_title(t): c for t, c in zip(corpus["title"], corpus["cluster_id"], strict=True)}
    found = set()
    for source in sources:
        cluster = by_doi.get(source.lower()) or by_title.get(_title(source))
        if cluster is None:
            raise SystemExit(f"labelled source {source!r} is not in the partition")
        found.add(cluster)
    return found


def score(
    answers: list[dict], labels: list[dict], expected: list[set[str]], tables: dict[str, pd.DataFrame]
) -> pd.DataFrame:
    chunks_table = tables["vector_index"]
    chunks = {
        (c, int(i)): t
        for c, i, t in zip(chunks_table["cluster_id"], chunks_table["chunk_index"], chunks_table["text"], strict=True)
    }
    works = chunks_table.groupby("cluster_id")["text"].agg(" ".join).to_dict()
    topic_of = dict(zip(tables["topics"]["cluster_id"], tables["topics"]["dominant_topic"], strict=True))
    tree = tables["summary_tree"]
    topics = int((tree["level"] == "topic").sum()) or 1
    rows = []
    for answer, label, wanted in zip(answers, labels, expected, strict=True):
        details = json.loads(answer["json"])
        cited = cited_works(details)
        claims = quoted_claims(answer, details)
        rows.append(
            {
                "label": label["route"],
                "planned": details["routing"]["route"],
                "route": answer["route"],
                "recall@5": len(wanted & set(cited[:5])) / len(wanted) if wanted else None,
                "recall@all": len(wanted & set(cited)) / len(wanted) if wanted else None,
                "claims": len(claims),
                "supported": sum(supported(c, chunks, works) for c in claims),
                "topics": len({topic_of.get(c) for c in cited} - {None}) / topics
                if label["route"] == "global"
                else None,
                "seconds": answer["total_seconds"],
            }
        )
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    grouped = frame.groupby("label", sort=False)
    return pd.DataFrame(
        {
            "questions": grouped.size(),
            "route_acc": grouped.apply(lambda g: (g["planned"] == g.name).mean(), include_groups=False),
            "recall@5": grouped["recall@5"].mean(),
            "recall@all": grouped["recall@all"].mean(),
            "supported": grouped["supported"].sum() / grouped["claims"].sum().where(lambda n: n > 0),
            "claims": grouped["claims"].sum(),
            "topics": grouped["topics"].mean(),
            "s/answer": grouped["seconds"].mean(),
        }
    )


def overall(frame: pd.DataFrame) -> dict[str, float]:
    return {
        "route accuracy": float((frame["planned"] == frame["label"]).mean()),
        "recall@5": float(frame["recall@5"].dropna().mean()),
        "recall@all": float(frame["recall@all"].dropna().mean()),
        "claims supported": float(frame["supported"].sum() / max(1, frame["claims"].sum())),
    }


def run(path: Path, limit: int | None) -> None:
    from hysem_assets.qa.answer import answer_question
    from hysem_assets.qa.engine import tables_engine
    from hysem_assets.settings.environment import hysem_home
    from hysem_assets.settings.profile import load_settings

    labelled = yaml.safe_load(path.read_text(encoding="utf-8"))
    query, labels = labelled["query"], labelled["questions"][:limit]
    assets = hysem_home() / "assets"
    tables = {name: pd.read_parquet(assets / name / f"{query}.parquet") for name in TABLES}
    expected = [expected_clusters(label.get("sources") or [], tables["deduped_corpus"]) for label in labels]
    settings = load_settings().profile.assets
    routed, baseline = [], []
    started = time.perf_counter()
    with tables_engine(settings, query, tables) as engine:

        async def answer_all() -> None:
            try:
                for n, label in enumerate(labels, 1):
                    routed.append((await answer_question(label["question"], engine)).answer)
                    baseline.append((await answer_question(label["question"], engine, route="local")).answer)
                    print(f"  {n}/{len(labels)} {routed[-1]['route_chain']:<16} {label['question']}", file=sys.stderr)
            finally:
                await engine.aclose()

        asyncio.run(answer_all())
    saved = hysem_home() / "benchmarks" / "qa_quality_answers.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps({"routed": routed, "baseline": baseline}, default=str), encoding="utf-8")
    print(f"answers saved to {saved}", file=sys.stderr)
    routed_scores, baseline_scores = (score(answers, labels, expected, tables) for answers in (routed, baseline))
    pd.set_option("display.width", 160)
    print(f"{len(labels)} labelled questions on {query!r}, {time.perf_counter() - started:.0f} s")
    print("\nrouted (rules, fallback chain)")
    print(summary(routed_scores).round(3).to_string())
    print("\nbaseline: hybrid retrieval and the revise loop for every question (the local route alone)")
    print(summary(baseline_scores).drop(columns=["route_acc"]).round(3).to_string())
    ours, theirs = overall(routed_scores), overall(baseline_scores)
    print("\noverall            routed   baseline")
    for name, value in ours.items():
        other = "" if name == "route accuracy" else f"{theirs[name]:9.3f}"
        print(f"{name:<18} {value:7.3f}  {other}")
    misrouted = routed_scores[routed_scores["planned"] != routed_scores["label"]]
    for index in misrouted.index:
        print(
            f"misrouted ({misrouted.at[index, 'planned']} for {misrouted.at[index, 'label']}): {labels[index]['question']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--limit", type=int, help="Only the first N questions (a quick look).")
    args = parser.parse_args()
    query = yaml.safe_load(args.questions.read_text(encoding="utf-8"))["query"]
    home = Path(os.environ["HYSEM_HOME"]) if os.environ.get("HYSEM_HOME") else None
    if home is not None and materialized(home, query):
        run(args.questions, args.limit)
        return
    with tempfile.TemporaryDirectory(prefix="hysem-qa-quality-") as scratch:
        print(f"materializing the sample into {scratch} ...", file=sys.stderr)
        subprocess.run(
            [str(Path(sys.executable).with_name("hysem")), "demo"],
            env={**os.environ, "HYSEM_HOME": scratch},
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.environ["HYSEM_HOME"] = scratch
        run(args.questions, args.limit)


if __name__ == "__main__":
    main()
