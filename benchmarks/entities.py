"""Entities and relations on the shared corpora's validation files: the shipped model beside plain baselines.

Reads the validation files of ../shared/realdata/scierc_ner, ncbi_disease and
scierc_relations (never trained on; nothing was chosen by them) and prints, per corpus and per
type, entity-level precision, recall and F1 (exact span and type) of

* the shipped int8 model, as ``hysem entities tag`` tags (a corpus' sentences read together
  in windows), and
* a dictionary baseline in the same run: every span the training file labels, matched
  longest first in the validation text with the type it had most often;

then relation macro-F1 and per label for the model and for a plain baseline (TF-IDF of the
words between and around the markers, logistic regression, trained on the training file), and
the model's speed on this machine (words and pairs per second on one thread).

With ``--retrieval``, nDCG@10 and Recall@100 with and without the entity list, on the
collections of ``benchmarks/retrieval_quality.py`` (the team's BEIR sample and the two
MED-like tasks built from real abstracts): the product's dense and BM25 lists fused by RRF,
beside the same fusion with the entity list added. The entity list is built as the entity
route builds it: every document's entities named by the ``entities`` asset's own naming
(:func:`~hysem_assets.entities.mentions.mention_tables`), a query's entities found among those
names, documents ranked by how many of them they mention (no graph hop: one chunk a document).

    python benchmarks/entities.py [--retrieval]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from hysem_assets.entities.corpus import DISEASE, RELATIONS, SCIENTIFIC, Pair, Sentence, read_conll, read_pairs, spans
from hysem_assets.entities.evaluation import entity_scores, relation_scores
from hysem_assets.entities.tagger import load

DATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
CORPORA = (("SciERC", "scierc_ner", SCIENTIFIC), ("NCBI-disease", "ncbi_disease", DISEASE))


def dictionary_tags(train: Sequence[Sentence], sentences: Sequence[Sentence]) -> list[list[str]]:
    """Tags from the training file's spans, matched longest first (lower case) with their most frequent type."""
    kinds: dict[tuple[str, ...], Counter] = defaultdict(Counter)
    for sentence in train:
        for first, end, kind in spans(sentence.tags):
            kinds[tuple(w.lower() for w in sentence.words[first:end])][kind] += 1
    longest = max(map(len, kinds), default=0)
    found = []
    for sentence in sentences:
        words, tags, at = [w.lower() for w in sentence.words], ["O"] * len(sentence.words), 0
        while at < len(words):
            size = next(
                (n for n in range(min(longest, len(words) - at), 0, -1) if tuple(words[at : at + n]) in kinds), 0
            )
            if size:
                kind = kinds[tuple(words[at : at + size])].most_common(1)[0][0]
                tags[at : at + size] = [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
            at += max(size, 1)
        found.append(tags)
    return found


def _context(text: str) -> str:
    """A pair as words: each entity's words and the words between them, prefixed by where they stand."""
    one, two = text.index("[["), text.index("<<")
    one_end, two_end = text.index("]]", one), text.index(">>", two)
    between = text[(one_end if one < two else two_end) + 2 : max(one, two)]
    words = [f"e1_{w}" for w in text[one + 2 : one_end].split()] + [f"e2_{w}" for w in text[two + 2 : two_end].split()]
    return " ".join(["FIRST" if one < two else "SECOND", *words, *(f"in_{w}" for w in between.split())])


def relation_baseline(train: Sequence[Pair], pairs: Sequence[Pair]) -> list[str]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=1), LogisticRegression(max_iter=2000, C=5.0))
    model.fit([_context(p.text) for p in train], [p.label for p in train])
    return list(model.predict([_context(p.text) for p in pairs]))


def entity_lists(model, collection) -> dict[str, list]:
    """Per judged query, the documents mentioning its entities, most of them first (then in corpus order)."""
    from hysem_assets.core.matcher import matchable
    from hysem_assets.entities.mentions import ABSTRACT, WorkText, entity_id, mention_tables
    from hysem_assets.qa.entity_questions import EntityNames
    from hysem_assets.retrieval.search import Hit

    corpus = collection.corpus
    works = [WorkText(doc, f"{title}\n\n{text}".strip()) for doc, title, text in corpus.itertuples(index=False)]
    reads = []
    for work in works:
        tagged = model.tag(work.abstract, max_windows=8)
        found = [[e.type, e.start, e.end] for e in tagged.entities(work.abstract)]
        reads.append({ABSTRACT: {"entities": found, "relations": [], "windows": tagged.windows, "truncated": False}})
    chunks = pd.DataFrame({"chunk_id": corpus["doc_id"], "cluster_id": corpus["doc_id"], "part": ABSTRACT})
    chunks["text"] = [work.abstract for work in works]
    mentions, _ = mention_tables(works, reads, chunks, {})
    mentions = mentions[mentions["type"] != "Generic"]
    names = EntityNames.of_rows((entity_id(t, n), n) for t, n in zip(mentions["type"], mentions["name"], strict=True))
    by_name = mentions.groupby("name")["cluster_id"].agg(set).to_dict()
    order = {doc: at for at, doc in enumerate(corpus["doc_id"])}
    lists = {}
    for query_id in collection.qrels:
        asked = {m.name for m in names.found(matchable(collection.queries[query_id]))}
        counts = Counter(doc for name in asked for doc in by_name.get(name, ()))
        ranked = sorted(counts, key=lambda doc: (-counts[doc], order[doc]))
        lists[query_id] = [Hit(doc, float(counts[doc])) for doc in ranked]
    return lists


def retrieval_rows(model) -> list[list]:
    """nDCG@10 and Recall@100 of dense + BM25 fused, without and with the entity list, per collection."""
    import sys
    import tempfile

    from hysem_assets.embedding.encoder import Encoder
    from hysem_assets.retrieval.beir import DEPTH, corpus_chunks, load_beir
    from hysem_assets.retrieval.indexing import index_chunks
    from hysem_assets.retrieval.search import reciprocal_rank_fusion, search
    from hysem_assets.stores.edge_chunks import EdgeChunkStore

    sys.path.insert(0, str(Path(__file__).parent))
    from retrieval_quality import BEIR_SAMPLE, med_like, scored

    embedder, rows = Encoder(), []
    with tempfile.TemporaryDirectory() as scratch:
        sets = [("BEIR sample", BEIR_SAMPLE), *((name, folder) for name, folder, _ in med_like(DATA, Path(scratch)))]
        for name, folder in sets:
            collection = load_beir(folder)
            store = EdgeChunkStore(Path(scratch) / name.replace(" ", "_"), collection="entities")
            try:
                index_chunks(corpus_chunks(collection.corpus), query="beir", store=store, embedder=embedder)
                lists = {
                    method: {
                        q: search(method, collection.queries[q], store=store, embedder=embedder, query="beir",
                                  limit=DEPTH)
                        for q in collection.qrels
                    }
                    for method in ("dense", "bm25")
                }  # fmt: skip
            finally:
                store.close()
            entity = entity_lists(model, collection)
            plain = {q: reciprocal_rank_fusion([lists["dense"][q], lists["bm25"][q]], limit=DEPTH) for q in entity}
            fused = {
                q: reciprocal_rank_fusion([lists["dense"][q], lists["bm25"][q], entity[q]], limit=DEPTH) for q in entity
            }
            without, with_entities = scored("without", plain, collection.qrels), scored("with", fused, collection.qrels)
            reached = sum(bool(entity[q]) for q in entity)
            rows.append([name, len(entity), reached, round(without.ndcg, 4), round(with_entities.ndcg, 4),
                         round(without.recall, 4), round(with_entities.recall, 4)])  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrieval", action="store_true", help="also measure retrieval with the entity list")
    args = parser.parse_args()
    model = load()
    rows = []
    for name, folder, types in CORPORA:
        train, gold = read_conll(DATA / folder / "train.txt"), read_conll(DATA / folder / "dev.txt")
        started = time.monotonic()
        tags, _, _ = model.tag_sentences([s.words for s in gold], [s.document for s in gold])
        speed = sum(len(s.words) for s in gold) / (time.monotonic() - started)
        shipped, plain = entity_scores(tags, gold, types), entity_scores(dictionary_tags(train, gold), gold, types)
        for kind in (*types, "micro"):
            rows.append([name, kind, shipped[kind].get("gold", sum(shipped[t]["gold"] for t in types))]
                        + [shipped[kind][m] for m in ("precision", "recall", "f1")] + [plain[kind]["f1"]])  # fmt: skip
        rows.append(
            [name, "all types (other corpus' types count as wrong)", "", "", "", shipped["all types"]["f1"], ""]
        )
        print(f"{name}: {speed:.0f} words per second, one thread, int8")
    print(tabulate(rows, headers=["corpus", "type", "gold", "P", "R", "F1 model", "F1 dictionary"], tablefmt="github"))

    train, pairs = (
        read_pairs(DATA / "scierc_relations" / "train.txt"),
        read_pairs(DATA / "scierc_relations" / "dev.txt"),
    )
    started = time.monotonic()
    labels = [model.relate(p.text)[0] for p in pairs]
    speed = len(pairs) / (time.monotonic() - started)
    shipped, plain = relation_scores(labels, pairs), relation_scores(relation_baseline(train, pairs), pairs)
    table = [[label, shipped[label]["f1"], plain[label]["f1"]] for label in RELATIONS]
    table += [
        ["macro", shipped["macro"]["f1"], plain["macro"]["f1"]],
        ["accuracy", shipped["accuracy"], plain["accuracy"]],
    ]
    print(f"\nrelations: {len(pairs)} pairs, {speed:.0f} pairs per second")
    print(tabulate(table, headers=["label", "F1 model", "F1 TF-IDF + LR"], tablefmt="github"))
    print(f"ratio of relation macro-F1, model / plain: {shipped['macro']['f1'] / max(plain['macro']['f1'], 1e-9):.2f}")
    if args.retrieval:
        headers = ["collection", "queries", "with entities", "nDCG@10 without", "nDCG@10 with", "R@100 without",
                   "R@100 with"]  # fmt: skip
        print("\n" + tabulate(retrieval_rows(model), headers=headers, tablefmt="github"))


if __name__ == "__main__":
    main()
