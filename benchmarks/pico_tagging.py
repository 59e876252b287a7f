"""Participants, interventions and outcomes on held-out expert-style labels: the span tagger beside the rules.

Reads the validation split of ../shared/realdata/pico_ebmnlp (the abstracts ``hysem train
tagger`` holds out: never trained on, nothing chosen by them) and scores, token by token:

* the tagger's own spans (the shipped int8 file) against the labelled words of each class;
* the generic protocol's values as a reader gets them, through the whole extraction path
  (chunking, prompts, the extractive backend, merging): every occurrence of an extracted
  value in the abstract marks its tokens; population against participants,
  intervention_or_exposure and comparator together against interventions, outcomes
  against outcomes;

for the generic protocol as shipped (tagger, the default settings) and, in the same run, the
previous release's extractor: the same protocol with its tagger methods taken off (noun-phrase
ranking and cue spans), float32 sentence vectors and every sentence embedded where a field
wants its one most similar sentence; with the abstracts per second of the whole
generic extraction (all nine fields) of both, and of the previous release's own code
(checked out with ``git worktree`` and run by ``benchmarks/extraction_rate.py``), the
shipped extractor and that release taking turns, the best of two rounds each. The
interventions of the held-out abstracts that the interventions-only file labels a second
time are scored against both labellings, by both extractors: how far a score depends on
who labelled.

Then, on real abstracts in ../shared/realdata of 200 characters or more (PubMed efetch
XML, OpenAlex and Crossref works of many subjects, read as ``benchmarks/embed_speed.py``
reads them; 400 of the PubMed records two reviews of drug treatments screened, drawn with a fixed
seed; and as many records of many designs that a scoping review screened), how often each of the four fields,
effect_estimates and follow_up is filled, per source, by both extractors; and how often
study_design is filled from the text alone,
from the types the record's source states (PubMed's publication types, the OpenAlex or
Crossref type) and from both as ``hysem`` fills it, with how often the text's design agrees
with a stated one.

    python benchmarks/pico_tagging.py [--limit N] [--previous REF]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from tabulate import tabulate

from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.extraction.publication_types import record_types, stated_values
from hysem_assets.pico.corpus import INTERVENTIONS_ONLY, read_conll, relabelled, split, training_corpus
from hysem_assets.pico.evaluation import GENERIC_FIELDS, document_text, span_scores, value_scores
from hysem_assets.pico.tagger import load
from hysem_assets.settings.protocols import Protocol, load_protocol
from hysem_assets_tests.paths import REALDATA

sys.path.insert(0, str(Path(__file__).parent))
from embed_speed import real_works  # noqa: E402

FILLED = ("population", "intervention_or_exposure", "comparator", "outcomes", "effect_estimates", "follow_up")
#: Records that reviews screened, per source: two reviews of drug treatments (trials, reviews and studies of
#: drugs) and a scoping review of how health professionals' practice is steered (records of many designs:
#: trials, before-after and cross-sectional studies, qualitative studies, guidelines, reviews, editorials).
SCREENED = {
    "screened": ("Cohen_2006_ADHD.csv", "Cohen_2006_ProtonPumpInhibitors.csv"),
    "screened-designs": ("Nagtegaal_2019.csv",),
}
SCREENED_SAMPLE = 400


def screened_works(realdata: Path) -> pd.DataFrame:
    """A fixed sample of each source's screened records, as ``cluster_id`` ("<source>:<record id>"), ``title``
    and ``abstract``."""
    samples = []
    for source, names in SCREENED.items():
        records = pd.concat(pd.read_csv(realdata / "screening_asreview" / name) for name in names)
        records = records[records["abstract"].fillna("").str.len() >= 200].sample(SCREENED_SAMPLE, random_state=7)
        ids = records["pubmedID" if "pubmedID" in records else "record_id"].astype(str)
        samples.append(
            pd.DataFrame({"cluster_id": f"{source}:" + ids, "title": records["title"], "abstract": records["abstract"]})
        )
    return pd.concat(samples)


def without_tagger(protocol: Protocol) -> Protocol:
    """The protocol with the rules of the previous release: no tagger method, population and comparator one text
    span again."""
    fields = [
        spec.model_copy(
            update={"method": None, "type": "text" if spec.name in ("population", "comparator") else spec.type}
        )
        for spec in protocol.fields
    ]
    return protocol.model_copy(update={"fields": fields})


def values_as_lists(record: dict[str, Any]) -> dict[str, list[Any]]:
    """Each field's values as a list (phrases, or the records of effect_estimates), empty when not filled."""
    return {
        name: [v for v in (value if isinstance(value, list) else [value]) if v not in (None, "")]
        for name, value in record.items()
    }


#: The previous release's extractor settings: float32 sentence vectors, every sentence embedded for a
#: one-sentence answer.
PREVIOUS = {"embedding_backend": "onnx", "sentence_shortlist": 0}


def run(
    protocol: Protocol, documents: list[Document], settings: dict[str, Any] | None = None
) -> tuple[list[dict[str, list[str]]], float]:
    """Values per document and abstracts per second, the model loaded before the clock starts."""
    backend = build_backend({"backend": "extractive", "cache": False, **(settings or {})}, protocol=protocol)
    fields = protocol.extraction_fields()
    extract_documents_sync(documents[:2], fields, backend)
    started = time.monotonic()
    results = extract_documents_sync(documents, fields, backend, concurrency=2)
    rate = len(documents) / (time.monotonic() - started)
    return [values_as_lists(result.values) for result in results], rate


#: The release before the span tagger: the extractor the speed goal is measured against.
PREVIOUS_RELEASE = "969faa3"
ROUNDS = 2


@contextlib.contextmanager
def previous_release(ref: str, documents: list[Document]) -> Iterator[Callable[[], float]]:
    """A function timing the generic extraction of release ``ref`` on ``documents`` (abstracts per second), that
    release's own code checked out beside this one and run by ``benchmarks/extraction_rate.py``."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as folder:
        checkout, texts = Path(folder) / "previous", Path(folder) / "documents.json"
        texts.write_text(json.dumps([{"id": d.doc_id, "text": d.text} for d in documents]), encoding="utf-8")
        env = {key: value for key, value in os.environ.items() if not key.startswith("HYSEM_")}
        env.update(PYTHONPATH=str(checkout), HYSEM_HOME=str(Path(folder) / "home"))
        command = [sys.executable, str(root / "benchmarks" / "extraction_rate.py"), str(texts)]

        def rate() -> float:
            done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=True)
            return json.loads(done.stdout.strip().splitlines()[-1])["rate"]

        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(checkout), ref], check=True)
        try:
            yield rate
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(checkout)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="Only the first N held-out abstracts.")
    parser.add_argument(
        "--previous", default=PREVIOUS_RELEASE, help="The git revision whose extractor is the speed baseline."
    )
    args = parser.parse_args()
    _, validation = split(training_corpus(REALDATA / "pico_ebmnlp"))
    validation = validation[: args.limit or None]
    documents = [Document(d.pmid, document_text(d)[0]) for d in validation]
    tokens = sum(len(d.words) for d in validation)
    print(f"{len(validation)} held-out abstracts, {tokens:,} tokens\n")

    spans = span_scores(validation, load().tag)
    generic = load_protocol("generic")
    rules_values, rules_rate = run(without_tagger(generic), documents, PREVIOUS)
    tagger_rate = previous_rate = 0.0
    with previous_release(args.previous, documents) as release_rate:
        for _ in range(ROUNDS):
            previous_rate = max(previous_rate, release_rate())
            tagger_values, rate = run(generic, documents)
            tagger_rate = max(tagger_rate, rate)
    rules = value_scores(validation, rules_values, GENERIC_FIELDS)
    tagged = value_scores(validation, tagger_values, GENERIC_FIELDS)

    rows = []
    for label in GENERIC_FIELDS:
        rows.append(
            [label, *(rules[label][k] for k in ("precision", "recall", "f1"))]
            + [*(tagged[label][k] for k in ("precision", "recall", "f1")), spans[label]["f1"]]
        )
    headers = ["class", "rules P", "rules R", "rules F1", "tagger P", "tagger R", "tagger F1", "spans F1"]
    print(tabulate(rows, headers=headers, floatfmt=".3f"))
    print(
        f"\nwhole generic extraction, abstracts/s: the previous release ({args.previous}, its own code) "
        f"{previous_rate:.1f}, its rules on this code {rules_rate:.1f}, the shipped extractor {tagger_rate:.1f} "
        f"({tagger_rate / previous_rate:.2f}x the previous release, {tagger_rate / rules_rate:.2f}x its rules)"
    )
    print(second_reading(validation, rules_values, tagger_values))
    held_out = {f: sum(bool(v[f]) for v in tagger_values) / len(tagger_values) for f in FILLED}
    print("\nfilled on the held-out trial abstracts: " + ", ".join(f"{f} {share:.0%}" for f, share in held_out.items()))
    works = real_works(REALDATA)[0]
    works = works[works["abstract"].fillna("").str.len() >= 200]
    filled = pd.concat([works[["cluster_id", "title", "abstract"]], screened_works(REALDATA)])
    sources = filled["cluster_id"].str.partition(":")[0]
    real = [Document(row.cluster_id, f"{row.title}\n\n{row.abstract}") for row in filled.itertuples()]
    rows = []
    for name, protocol, settings in (("rules", without_tagger(generic), PREVIOUS), ("tagger", generic, None)):
        found, _ = run(protocol, real, settings)
        for source in sorted(set(sources)):
            chosen = [v for v, s in zip(found, sources, strict=True) if s == source]
            rows.append([name, source, len(chosen)] + [sum(bool(v[f]) for v in chosen) / len(chosen) for f in FILLED])
    print("\nfilled on real abstracts (screened: records two drug reviews screened; screened-designs: of many designs)")
    print(tabulate(rows, headers=["extractor", "source", "abstracts", *FILLED], floatfmt=".2f"))
    print("\nstudy_design on the same abstracts")
    print(tabulate(design_rows(generic, works, found[: len(works)]), headers=DESIGN_HEADERS, floatfmt=".2f"))


def second_reading(
    validation: list, rules_values: list[dict[str, list[str]]], tagger_values: list[dict[str, list[str]]]
) -> str:
    """Interventions on the held-out abstracts the interventions-only file labels a second time, scored against
    both labellings: how much a score owes to the labellers' style rather than to the extractor."""
    others = read_conll(REALDATA / "pico_ebmnlp" / INTERVENTIONS_ONLY, known=("interventions",))
    second = {document.pmid: document for document in relabelled(validation, others)}
    kept = [i for i, document in enumerate(validation) if document.pmid in second]
    fields = {"interventions": GENERIC_FIELDS["interventions"]}
    tagged_spans = load().tag([document_text(validation[i])[0] for i in kept])
    rows = []
    readings = {
        "three-class labels": [validation[i] for i in kept],
        "second labels": [second[validation[i].pmid] for i in kept],
    }
    for name, documents in readings.items():
        rules = value_scores(documents, [rules_values[i] for i in kept], fields)["interventions"]
        tagged = value_scores(documents, [tagger_values[i] for i in kept], fields)["interventions"]
        spans = span_scores(documents, lambda _: tagged_spans)["interventions"]
        rows.append(
            [
                name,
                *(rules[k] for k in ("precision", "recall", "f1")),
                *(tagged[k] for k in ("precision", "recall", "f1")),
                spans["f1"],
            ]
        )
    headers = ["labels", "rules P", "rules R", "rules F1", "tagger P", "tagger R", "tagger F1", "spans F1"]
    return (
        f"\ninterventions on the {len(kept)} held-out abstracts {INTERVENTIONS_ONLY} labels a second time\n"
        + tabulate(rows, headers=headers, floatfmt=".3f")
    )


DESIGN_HEADERS = ["source", "abstracts", "from text", "stated by type", "filled", "text agrees with type"]


def design_rows(protocol: Protocol, works: Any, found: list[dict[str, list[str]]]) -> list[list[Any]]:
    """Per source: study_design filled from the text, stated by the record's types, filled by both, and how
    often the text's value is the stated one where there are both."""
    rows = []
    sources = works["cluster_id"].str.partition(":")[0].tolist()
    stated = [stated_values(protocol, record_types(types)).get("study_design") for types in works["publication_types"]]
    for source in sorted(set(sources)):
        mine = [i for i, s in enumerate(sources) if s == source]
        text = [found[i]["study_design"][0] if found[i]["study_design"] else None for i in mine]
        types = [stated[i][0] if stated[i] else None for i in mine]
        both = [(t, s) for t, s in zip(text, types, strict=True) if t and s]
        rows.append(
            [
                source,
                len(mine),
                sum(map(bool, text)) / len(mine),
                sum(map(bool, types)) / len(mine),
                sum(bool(t or s) for t, s in zip(text, types, strict=True)) / len(mine),
                f"{sum(t == s for t, s in both)} of {len(both)}",
            ]
        )
    return rows


if __name__ == "__main__":
    main()
