"""What each work found: the comparisons its abstract names, judged in its abstract and in its full text.

The span tagger reads the title and abstract for the interventions, comparators and outcomes
(:func:`~hysem_assets.pico.roles.role_values`); each intervention against the first
comparator (a control arm the text names, else "control") on each outcome is one comparison.
The findings model (:mod:`hysem_assets.findings.classifier`) judges every comparison twice,
from the abstract's sentences and from the parsed full text's, and a comparison it finds
stated makes a row: the direction, the evidence sentence with its section and offsets, and
an effect estimate where that sentence or the next states one. Both rows are kept; the full
text's is the preferred one. A meta-analysis or review is marked as such: its findings are
shown, never counted or pooled as a study's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import fold
from hysem_assets.embedding.onnx_encoder import threads
from hysem_assets.extraction.publication_types import record_types
from hysem_assets.findings.candidates import Sentence, sentences
from hysem_assets.findings.classifier import Comparison, FindingsModel
from hysem_assets.findings.estimates import effect_estimates
from hysem_assets.findings.schema import ABSTRACT, COLUMNS, FULLTEXT
from hysem_assets.pico.roles import role_values
from hysem_assets.pico.tagger import Tagger
from hysem_assets.retrieval.chunking import blank_reference_lists
from hysem_assets.stores.work_cache import CachedRun, WorkCache, content_key, work_id

#: Change when this module changes what it writes for the same text and model.
FINDINGS_CODE = "findings-1"
#: Most arms and outcomes a work's comparisons take, in the order the roles give them (the main ones first).
INTERVENTIONS, OUTCOMES = 2, 4
#: The comparator when the abstract names no control arm.
NO_COMPARATOR = "control"
#: Sentences of a full text the model reads per comparison (the first pass keeps the likeliest): a full text's
#: results restate the abstract's, so fewer than the benchmark's 24 cost little and halve the time.
FULL_TEXT_CANDIDATES = 12
#: A title or publication type that makes a work a synthesis of other studies.
_REVIEW = re.compile(r"\bmeta[- ]?analy|\bsystematic review|\bumbrella review|\bpooled analysis", re.IGNORECASE)


@dataclass(frozen=True)
class WorkText:
    """What a work's findings are read from."""

    cluster_id: str
    title: str
    abstract: str
    full_text: str
    publication_types: Sequence[str] = ()
    #: Who the work is from run to run (its DOI, else its cluster id): findings' ids are made from it.
    work: str = ""


def work_texts(corpus: pd.DataFrame, parsed: pd.DataFrame) -> list[WorkText]:
    """Title, abstract, parsed full text (empty where none), stated types and run-to-run id of each work."""
    full_text = parsed[parsed["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    return [
        WorkText(
            row.cluster_id,
            row.title if isinstance(row.title, str) else "",
            row.abstract if isinstance(row.abstract, str) else "",
            full_text.get(row.cluster_id) or "",
            tuple(record_types(getattr(row, "publication_types", None), getattr(row, "item_type", None))),
            work_id(row.doi, row.cluster_id),
        )
        for row in corpus.itertuples()
    ]


def term_lookup(canonical_terms: pd.DataFrame) -> dict[str, str]:
    """Folded raw term -> canonical term as the dictionaries spell it, over every field the protocol unifies (the
    first field's on a clash)."""
    matched = canonical_terms[canonical_terms["canonical"].notna()]
    lookup: dict[str, str] = {}
    for raw, canonical in zip(matched["raw_term"], matched["canonical"], strict=True):
        lookup.setdefault(folded(str(raw)), str(canonical))
    return lookup


def study_kind(title: str, publication_types: Sequence[str]) -> str:
    """ "review" for a meta-analysis or systematic review (by its stated type or its title), else "primary"."""
    return "review" if any(_REVIEW.search(text) for text in (title, *publication_types)) else "primary"


def comparisons(tagger: Tagger, opening: str) -> list[Comparison]:
    """Each intervention against the first comparator on each outcome, as the title and abstract name them."""
    roles = role_values(opening, tagger.tag([opening])[0])
    comparator = (roles["comparators"] or [NO_COMPARATOR])[0]
    return [
        Comparison(intervention, comparator, outcome)
        for intervention in roles["interventions"][:INTERVENTIONS]
        for outcome in roles["outcomes"][:OUTCOMES]
    ]


def stated_estimate(article: Sequence[Sentence], evidence: Sentence) -> dict[str, Any]:
    """The first effect estimate stated in the evidence sentence, else in the next one of its section (empty when
    neither does)."""
    at = next((i for i, sentence in enumerate(article) if sentence.start == evidence.start), None)
    texts = [evidence.text]
    if at is not None and at + 1 < len(article) and article[at + 1].section == evidence.section:
        texts.append(article[at + 1].text)
    for text in texts:
        for found in effect_estimates(text):
            return {
                "measure": found["measure"],
                "estimate": found["value"],
                "ci_low": found.get("ci_lower"),
                "ci_high": found.get("ci_upper"),
                "p_value": found.get("p_value"),
            }
    return {}


def work_findings(work: WorkText, tagger: Tagger, model: FindingsModel) -> list[dict[str, Any]]:
    """The rows of one work (before its ids, terms and preference), abstract first, then full text: what the
    work cache keeps, so nothing in them names the work, whose cluster id may change as records join it."""
    opening = "\n\n".join(part for part in (work.title, work.abstract) if part)
    asked = comparisons(tagger, opening) if opening.strip() else []
    if not asked:
        return []
    kind = study_kind(work.title, work.publication_types)
    rows = []
    texts = [(ABSTRACT, opening, None), (FULLTEXT, blank_reference_lists(work.full_text), FULL_TEXT_CANDIDATES)]
    for source, text, keep in texts:
        article = sentences(text) if text.strip() else []
        for comparison, judgement in zip(asked, model.judge(asked, article, keep)):
            if judgement is None or not judgement.found:
                continue
            evidence = judgement.evidence
            rows.append(
                {
                    "intervention": comparison.intervention,
                    "comparator": comparison.comparator,
                    "outcome": comparison.outcome,
                    "direction": judgement.direction,
                    "confidence": round(judgement.confidence, 4),
                    "evidence": evidence.text,
                    "source": source,
                    "section": evidence.section or ("Abstract" if source == ABSTRACT else None),
                    "start": evidence.start,
                    "end": evidence.end,
                    "study_kind": kind,
                    **stated_estimate(article, evidence),
                }
            )
    return rows


def folded(value: str) -> str:
    """A span or term as terms are compared: folded, lower case, single spaces."""
    return " ".join(fold(value).casefold().split())


def findings_table(rows: Sequence[Mapping[str, Any]], terms: Mapping[str, str]) -> pd.DataFrame:
    """The findings table (:data:`~hysem_assets.findings.schema.COLUMNS`) of ``rows``: each span's canonical
    term from ``terms`` (folded span -> term; the folded span where it has none), an id stable from run to run
    and across queries (from the row's ``work``, else its cluster id, its terms and its source), and which row
    of a comparison is preferred (the full text's over the abstract's)."""
    if not rows:
        return pd.DataFrame({column: pd.Series(dtype=dtype) for column, dtype in COLUMNS.items()})
    table = pd.DataFrame(list(rows), columns=[*COLUMNS, "work"])
    for role in ("intervention", "comparator", "outcome"):
        table[f"{role}_term"] = [terms.get(folded(v), folded(v)) for v in table[role].fillna("")]
    comparison = table["intervention_term"] + "\x1f" + table["comparator_term"] + "\x1f" + table["outcome_term"]
    work = table["work"].fillna(table["cluster_id"])
    table["finding_id"] = [
        hashlib.sha256(f"{w}\x1f{c}\x1f{s}".encode()).hexdigest()[:16]
        for w, c, s in zip(work, comparison, table["source"], strict=True)
    ]
    key = table["cluster_id"] + "\x1f" + comparison
    with_full_text = set(key[table["source"] == FULLTEXT])
    table["preferred"] = [s == FULLTEXT or k not in with_full_text for k, s in zip(key, table["source"], strict=True)]
    table = table.drop(columns="work")
    return table.astype(COLUMNS)


def work_rows(works: Sequence[WorkText], run: CachedRun) -> list[dict[str, Any]]:
    """The rows of every work of ``run`` (:func:`cached_findings`), each given its work's cluster id as of now."""
    return [
        {**row, "cluster_id": work.cluster_id, "work": work.work or work.cluster_id}
        for work, cached in zip(works, run.rows, strict=True)
        for row in cached["rows"]
    ]


def findings_of(
    works: Sequence[WorkText],
    tagger: Tagger,
    model: FindingsModel,
    progress: Callable[[int, int], None] = lambda done, total: None,
    workers: int | None = None,
) -> list[list[dict[str, Any]]]:
    """The rows of each work, in order; ``workers`` works (default: one per core) are read side by side, since
    each model call runs on one thread, as the span tagger's do in extraction."""
    found = []
    with ThreadPoolExecutor(max_workers=workers or threads()) as pool:
        for done, rows in enumerate(pool.map(lambda work: work_findings(work, tagger, model), works), start=1):
            found.append(rows)
            progress(done, len(works))
    return found


def finding_key(work: WorkText, tagger: Tagger, model: FindingsModel) -> str:
    """What a work's findings depend on: its texts and types, the tagger's and the model's weights, this code."""
    return content_key(  # the work's texts, not its ids: a work keeps its findings when its cluster id changes
        "findings",
        FINDINGS_CODE,
        work.title,
        work.abstract,
        work.full_text,
        list(work.publication_types),
        tagger.version,
        model.version,
    )


def cached_findings(
    cache: WorkCache,
    partition: str,
    works: Sequence[WorkText],
    ids: Sequence[str],
    tagger: Tagger,
    model: FindingsModel,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> CachedRun:
    """Each work's rows (``{"rows": [...]}``), read from ``cache`` where its key is there, else judged."""
    keys = [finding_key(work, tagger, model) for work in works]
    return cache.reuse_or_compute(
        partition,
        ids,
        [(key,) for key in keys],
        lambda positions: [
            {"rows": rows} for rows in findings_of([works[p] for p in positions], tagger, model, progress)
        ],
        lambda position, _: keys[position],
    )
