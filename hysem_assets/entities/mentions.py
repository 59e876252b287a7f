"""Entities of the included works' texts, each named once however it is spelled, and the relations between them.

The entity model (:mod:`hysem_assets.entities.tagger`) reads a work's title and abstract and
its parsed full text, each within a budget of windows (a longer text is read up to the
budget and marked truncated). What it reads is kept per work by content and model version
(:func:`cached_reads`), so a re-run tags only new or changed texts; naming is redone each run
(:func:`mention_tables`) because it depends on the whole corpus and on ``canonical_terms``.

A mention's name is the canonical term of its spelling where ``canonical_terms`` has one,
else its spelling lower-cased with the last word made singular; an abbreviation the work
defines ("random forest (RF)") is read as its long form, and one defined by another work of
the corpus too, when the corpus gives it only one long form. So "RF", "random forests" and
"Random Forest" are one entity, whose id is ``type:name``.

Relations: the relation model learned from pairs that are related, so it has no "no
relation" answer and labels any pair it is shown. It is shown only pairs of one sentence at
most :data:`PAIR_DISTANCE` entities apart, the nearest first, at most :data:`PAIRS_PER_SENTENCE`
per sentence, each in both orders (the likelier order is kept, with its label and
probability), and at most :data:`PAIRS_PER_TEXT` pairs of a text, which bounds its cost as the
window budget bounds the tagging: near pairs are where a sentence states a relation, and the
probability says how sure the label is. Generic entities ("method", "this approach") name no particular thing: they
are kept in the mentions table, but are neither related nor nodes of the graph.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

import pandas as pd

from hysem_assets.core.abbreviations import abbreviations
from hysem_assets.core.matcher import TermMatcher, is_abbreviation
from hysem_assets.core.text import sentence_spans
from hysem_assets.embedding.onnx_encoder import threads
from hysem_assets.entities.corpus import FIRST, SECOND
from hysem_assets.stores.work_cache import CachedRun, WorkCache, content_key

if TYPE_CHECKING:
    from hysem_assets.entities.tagger import EntityModel

#: Change when this module changes what it keeps of a text for the same model.
ENTITIES_CODE = "entities-1"
#: The parts of a work that are read.
ABSTRACT, FULL_TEXT = "abstract", "full_text"
#: The entity type of words that name no particular thing.
GENERIC = "Generic"
#: Relation candidates: entities of one sentence at most this many entities apart, nearest first, this many a sentence.
PAIR_DISTANCE, PAIRS_PER_SENTENCE = 2, 4
#: Most pairs asked of one text, in text order: each costs two passes of the model, a full sentence each. 400 cost
#: 4-8 s a full text (six PMC articles), about an hour for the seed's 1,000 full texts on two cores; 48 about 1 s.
PAIRS_PER_TEXT = 48
#: Most windows read of a title and abstract, and of a full text (at most 254 word pieces each).
ABSTRACT_WINDOWS, FULL_TEXT_WINDOWS = 8, 64
MENTION_COLUMNS = ("cluster_id", "chunk_id", "part", "type", "text", "name", "start", "end", "sentence")
RELATION_COLUMNS = ("cluster_id", "first", "first_type", "second", "second_type", "label", "probability", "sentence")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_BRACKETED_TAIL = re.compile(r"\s*\(\s*[^()]{1,12}\s*\)$")


@dataclass(frozen=True)
class WorkText:
    """What a work's entities are read from: its title and abstract (:func:`opening`) and its full text."""

    cluster_id: str
    abstract: str
    full_text: str | None = None

    def parts(self) -> dict[str, str]:
        return {part: text for part, text in ((ABSTRACT, self.abstract), (FULL_TEXT, self.full_text)) if text}


def opening(title: str | None, abstract: str | None) -> str:
    """A work's title and abstract as one text, each as its chunks cut it (title spaces collapsed, abstract
    stripped), a paragraph apart so no sentence joins them."""
    return "\n\n".join(part for part in (" ".join((title or "").split()), (abstract or "").strip()) if part)


def entity_id(kind: str, name: str) -> str:
    """The graph's key of an entity: its type and lower-case name."""
    return f"{kind}:{name.casefold()}"


def candidate_pairs(
    count: int, distance: int = PAIR_DISTANCE, limit: int = PAIRS_PER_SENTENCE
) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of a sentence's ``count`` entities at most ``distance`` apart, nearest first,
    at most ``limit``."""
    pairs = [(i, j) for i, j in combinations(range(count), 2) if j - i <= distance]
    return sorted(pairs, key=lambda pair: (pair[1] - pair[0], pair[0]))[:limit]


def marked(sentence: str, first: tuple[int, int], second: tuple[int, int]) -> str:
    """``sentence`` with the spans ``first`` and ``second`` (offsets in it, not overlapping) marked for the
    relation model."""
    edits = sorted([(*first, FIRST), (*second, SECOND)])
    out, done = [], 0
    for start, end, (opens, closes) in edits:
        out += [sentence[done:start], f"{opens} {sentence[start:end]} {closes}"]
        done = end
    return "".join([*out, sentence[done:]])


def _sentence_of(spans: Sequence[tuple[int, int]], start: int) -> int | None:
    """The index of the sentence (``spans`` in text order) holding offset ``start``."""
    index = bisect_right(spans, (start, math.inf)) - 1
    return index if index >= 0 and start < spans[index][1] else None


def related(
    model: EntityModel, text: str, entities: Sequence[tuple[str, int, int]]
) -> list[tuple[int, int, str, float]]:
    """``(first, second, label, probability)`` per candidate pair of non-generic ``entities`` (type, start, end)
    of one sentence, the indexes into ``entities`` in the likelier order; at most :data:`PAIRS_PER_TEXT` pairs."""
    spans = sentence_spans(text)
    by_sentence: dict[int, list[int]] = defaultdict(list)
    for index, (kind, start, _) in enumerate(entities):
        sentence = _sentence_of(spans, start)
        if kind != GENERIC and sentence is not None:
            by_sentence[sentence].append(index)
    found = []
    pairs = [
        (sentence, members[i], members[j])
        for sentence, members in sorted(by_sentence.items())
        for i, j in candidate_pairs(len(members))
    ]
    for sentence, first, second in pairs[:PAIRS_PER_TEXT]:
        base, stop = spans[sentence]
        a, b = entities[first], entities[second]
        if a[2] > b[1] or b[2] > stop:  # overlapping, or running past the sentence
            continue
        at_a, at_b = (a[1] - base, a[2] - base), (b[1] - base, b[2] - base)
        forward = model.relate(marked(text[base:stop], at_a, at_b))
        backward = model.relate(marked(text[base:stop], at_b, at_a))
        label, probability = max(forward, backward, key=lambda answer: answer[1])
        ends = (first, second) if forward[1] >= backward[1] else (second, first)
        found.append((*ends, label, round(probability, 4)))
    return found


def read_text(model: EntityModel, text: str, max_windows: int) -> dict[str, Any]:
    """What the model finds in ``text`` within ``max_windows``: entities ``[type, start, end]``, relations
    ``[first, second, label, probability]`` between them, windows read and whether text was left unread."""
    tagged = model.tag(text, max_windows=max_windows)
    entities = [(entity.type, entity.start, entity.end) for entity in tagged.entities(text)]
    return {
        "entities": [list(entity) for entity in entities],
        "relations": [list(relation) for relation in related(model, text, entities)],
        "windows": tagged.windows,
        "truncated": tagged.truncated,
    }


def read_work(model: EntityModel, work: WorkText, budgets: Mapping[str, int]) -> dict[str, Any]:
    """Each part of ``work`` read within its budget of windows."""
    return {part: read_text(model, text, budgets[part]) for part, text in work.parts().items()}


def cached_reads(
    cache: WorkCache,
    partition: str,
    works: Sequence[WorkText],
    ids: Sequence[str],
    model: EntityModel,
    budgets: Mapping[str, int],
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> CachedRun:
    """Each work's reading (:func:`read_work`), from ``cache`` where its texts, budgets and model were read
    before; ``ids`` name the works from run to run."""
    keys = [content_key(ENTITIES_CODE, model.version, dict(budgets), work.parts()) for work in works]

    def compute(positions: list[int]) -> list[dict[str, Any]]:
        # one work per core side by side: each model call runs on one thread, as the findings model's do
        rows = []
        with ThreadPoolExecutor(max_workers=threads()) as pool:
            reads = pool.map(lambda position: read_work(model, works[position], budgets), positions)
            for done, row in enumerate(reads, 1):
                rows.append(row)
                progress(done, len(positions))
        return rows

    return cache.reuse_or_compute(partition, ids, [(key,) for key in keys], compute, lambda p, _: keys[p])


def singular(name: str) -> str:
    """``name`` with a plural last word made singular (not an abbreviation, nor "analysis" or "class")."""
    head, _, last = name.rpartition(" ")
    if len(last) < 4 or not last.isalpha() or is_abbreviation(last) or last.endswith(("ss", "us", "is")):
        return name
    if last.endswith("ies"):
        last = last[:-3] + "y"
    elif last.endswith("yses"):  # "analyses" is the plural of "analysis"
        last = last[:-2] + "is"
    elif last.endswith(("sses", "ches", "shes", "xes")):
        last = last[:-2]
    elif last.endswith("s"):
        last = last[:-1]
    return f"{head} {last}" if head else last


def defined_abbreviations(work: WorkText) -> dict[str, str]:
    """Abbreviations a work's texts define, abbreviation -> long form (its abstract's first)."""
    found: dict[str, str] = {}
    for text in work.parts().values():
        for short, long_form in abbreviations(text).items():
            found.setdefault(short, " ".join(long_form.split()))
    return found


def corpus_abbreviations(defined: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """The abbreviations the works define (one mapping a work) that they all spell out alike; one given two long
    forms names different things in different works and is left out."""
    forms: dict[str, set[str]] = defaultdict(set)
    for found in defined:
        for short, long_form in found.items():
            forms[short].add(long_form.casefold())
    return {short: next(iter(longs)) for short, longs in forms.items() if len(longs) == 1}


def trimmed(text: str) -> str:
    """``text`` without punctuation at its edges, nor a bracket it does not open or close ("RF)" is "RF",
    "random forest (" is "random forest")."""
    text = text.strip(" .,;:")
    opened, closed = text.count("(") + text.count("["), text.count(")") + text.count("]")
    if text.endswith(("(", "[")) or (text.endswith((")", "]")) and closed > opened):
        text = text[:-1]
    elif text.startswith((")", "]")) or (text.startswith(("(", "[")) and opened > closed):
        text = text[1:]
    return text.strip(" .,;:")


def entity_name(text: str, defined: Mapping[str, str], terms: TermMatcher) -> str:
    """The name of a mention spelled ``text``: its canonical term, through its long form where ``defined`` spells
    it out, else the long form or the spelling, lower case, its last word singular."""
    written = trimmed(" ".join(text.split())) or " ".join(text.split())
    spelling = _BRACKETED_TAIL.sub("", _LEADING_ARTICLE.sub("", written)) or written
    long_form = defined.get(spelling) or spelling
    canonical = terms.lookup(long_form) or terms.lookup(spelling)
    return " ".join((canonical or singular(long_form.casefold())).casefold().split())


def chunk_spans(text: str, chunks: Sequence[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """``(chunk_id, start, end)`` of each chunk ``(chunk_id, text)`` in ``text``, chunks in order (a chunk is an
    exact slice of what it was cut from; one not found is left out)."""
    found, cursor = [], 0
    for chunk_id, chunk in chunks:
        start = text.find(chunk, cursor)
        if start < 0:
            start = text.find(chunk)
        if start >= 0 and chunk:
            found.append((chunk_id, start, start + len(chunk)))
            cursor = start + 1
    return found


def _chunk_of(spans: Sequence[tuple[str, int, int]], start: int, end: int) -> str | None:
    return next((chunk_id for chunk_id, a, b in spans if a <= start and end <= b), None)


def mention_tables(
    works: Sequence[WorkText],
    reads: Sequence[Mapping[str, Any]],
    chunks: pd.DataFrame,
    terms: Mapping[str, str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mentions (:data:`MENTION_COLUMNS`) and relations (:data:`RELATION_COLUMNS`) of ``works`` from their
    ``reads`` (:func:`read_work`, in the same order). ``chunks`` (``chunk_id``, ``cluster_id``, ``part``,
    ``text``, in chunk order) place each mention in the chunk holding it; ``terms`` maps a raw term to its
    canonical term."""
    matcher = TermMatcher(terms)
    own = [defined_abbreviations(work) for work in works]
    shared = corpus_abbreviations(own)
    by_part = {
        key: list(zip(group["chunk_id"], group["text"], strict=True))
        for key, group in chunks.groupby(["cluster_id", "part"], sort=False)
    }
    mentions, relations = [], []
    for work, read, defined_here in zip(works, reads, own, strict=True):
        defined = {**shared, **defined_here}
        for part, found in read.items():
            text = work.parts()[part]
            spans, placed = sentence_spans(text), chunk_spans(text, by_part.get((work.cluster_id, part), []))
            rows = []
            for kind, start, end in found["entities"]:
                sentence = _sentence_of(spans, start)
                rows.append(
                    {
                        "cluster_id": work.cluster_id,
                        "chunk_id": _chunk_of(placed, start, end),
                        "part": part,
                        "type": kind,
                        "text": text[start:end],
                        "name": entity_name(text[start:end], defined, matcher),
                        "start": start,
                        "end": end,
                        "sentence": text[slice(*spans[sentence])] if sentence is not None else text[start:end],
                    }
                )
            mentions += rows
            relations += [
                {
                    "cluster_id": work.cluster_id,
                    "first": rows[first]["name"],
                    "first_type": rows[first]["type"],
                    "second": rows[second]["name"],
                    "second_type": rows[second]["type"],
                    "label": label,
                    "probability": probability,
                    "sentence": rows[first]["sentence"],
                }
                for first, second, label, probability in found["relations"]
            ]
    return _table(mentions, MENTION_COLUMNS, {"start": "int64", "end": "int64"}), _table(
        relations, RELATION_COLUMNS, {"probability": "float64"}
    )


def _table(rows: list[dict[str, Any]], columns: Sequence[str], dtypes: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns)).astype(dict(dtypes))


def reading_counts(reads: Sequence[Mapping[str, Any]], works: Sequence[WorkText]) -> dict[str, Any]:
    """Windows read per part and the works whose full text (or abstract) was left partly unread."""
    windows = {part: sum(read.get(part, {}).get("windows", 0) for read in reads) for part in (ABSTRACT, FULL_TEXT)}
    truncated = sorted(
        work.cluster_id for work, read in zip(works, reads, strict=True) if any(p["truncated"] for p in read.values())
    )
    return {"windows": windows, "truncated": truncated}
