"""What one update of a review changed, as living reviews report it.

Each update compares the review as it stands with the state the previous update recorded:
works new (none of their source records were held before), newly retracted or corrected, and
dropped (none of their records is held any more), notices (errata, retraction notices) counting
only through the work they are about; answers whose text or cited works changed,
with a line diff; and the update's PRISMA flow: the studies of the previous version, the
records this update identified, what became of them, and the total now included. Works are
matched through their source records, because a work's cluster id changes as records join it.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from hysem_assets.dedup.normalize import is_missing
from hysem_assets.dedup.notices import corrections, linked_notices
from hysem_assets.screening.outcome import retracted_works
from hysem_assets.sources import registry
from hysem_assets.stores.work_cache import work_id

#: One update's row; lists and the state are JSON text, so every Parquet column has one type.
UPDATE_COLUMNS = (
    "update",
    "searched_through",
    "search",
    "new_records",
    "new_works",
    "retracted",
    "corrected",
    "dropped",
    "changed_answers",
    "included_before",
    "included_new",
    "included_total",
    "new_records_json",
    "new_works_json",
    "retracted_json",
    "corrected_json",
    "dropped_json",
    "changed_answers_json",
    "flow_json",
    "state_json",
)


def review_state(corpus: pd.DataFrame, included: Iterable[str], answers: pd.DataFrame) -> dict[str, Any]:
    """What the next update compares against: the records found (every source record sits in one work of
    the corpus), each work's records, whether it is included, retracted or corrected, and each answer's
    text and cited works."""
    included, retracted, corrected = set(included), set(retracted_works(corpus)), set(corrections(corpus))
    notices = set(linked_notices(corpus)["cluster_id"])  # about a work, never one: a new erratum corrects a work
    works = {}
    for row in corpus[~corpus["cluster_id"].isin(notices)].itertuples(index=False):
        works[work_id(row.doi, row.cluster_id)] = {
            "title": None if is_missing(row.title) else str(row.title),
            "doi": None if is_missing(row.doi) else str(row.doi),
            "records": sorted(map(str, row.record_ids)),
            "included": row.cluster_id in included,
            "retracted": row.cluster_id in retracted,
            "corrected": row.cluster_id in corrected,
        }
    return {
        "records": sorted({str(record) for records in corpus["record_ids"] for record in records}),
        "works": works,
        "answers": {
            str(question): {"text": str(text), "cited": cited_works(details)}
            for question, text, details in zip(answers["question"], answers["markdown"], answers["json"], strict=True)
        },
    }


def cited_works(details: str | Mapping[str, Any]) -> list[str]:
    """The works an answer cites (DOI, else the document's id), from its JSON."""
    parsed = json.loads(details) if isinstance(details, str) else details
    return sorted(
        {
            work_id(citation.get("DOI"), citation.get("PDF_DocIndex"))
            for claim in parsed.get("claims", [])
            for citation in claim.get("citations", [])
        }
    )


def update_row(
    previous: Mapping[str, Any] | None, state: Mapping[str, Any], *, number: int, search: str, searched_through: str
) -> dict[str, Any]:
    """One update: what changed between ``previous`` (None for the first search) and ``state``."""
    previous = previous or {"records": [], "works": {}, "answers": {}}
    held = set(previous["records"])
    work_of_record = {record: work for work, entry in previous["works"].items() for record in entry["records"]}
    now_held = {record for entry in state["works"].values() for record in entry["records"]}

    new_records = sorted(set(state["records"]) - held)
    new, earlier = {}, {}
    for work, entry in state["works"].items():
        before = {work_of_record[r] for r in entry["records"] if r in work_of_record}
        (earlier if before else new)[work] = [previous["works"][w] for w in sorted(before)]
    dropped = {w: e for w, e in previous["works"].items() if not set(e["records"]) & now_held}

    def newly(flag: str) -> list[dict[str, Any]]:
        return [
            _named(work, state["works"][work])
            for work, before in earlier.items()
            if state["works"][work][flag] and not any(entry[flag] for entry in before)
        ]

    # works held before and included now: carried over from the previous version, or included late
    was_included = [
        any(e["included"] for e in before) for work, before in earlier.items() if state["works"][work]["included"]
    ]
    carried, late = sum(was_included), len(was_included) - sum(was_included)
    included_before = sum(entry["included"] for entry in previous["works"].values())
    included_new = sum(state["works"][work]["included"] for work in new)
    changed = changed_answers(previous["answers"], state["answers"])
    flow = _flow(new_records, len(new), included_before, carried, late, included_new)
    retracted, corrected = newly("retracted"), newly("corrected")
    return {
        "update": number,
        "searched_through": searched_through,
        "search": search,
        "new_records": len(new_records),
        "new_works": len(new),
        "retracted": len(retracted),
        "corrected": len(corrected),
        "dropped": len(dropped),
        "changed_answers": len(changed),
        "included_before": included_before,
        "included_new": included_new,
        "included_total": carried + late + included_new,
        "new_records_json": json.dumps(new_records),
        "new_works_json": _dumps([_named(work, state["works"][work]) for work in new]),
        "retracted_json": _dumps(retracted),
        "corrected_json": _dumps(corrected),
        "dropped_json": _dumps([_named(work, entry) for work, entry in dropped.items()]),
        "changed_answers_json": _dumps(changed),
        "flow_json": _dumps(flow),
        "state_json": _dumps(state),
    }


def changed_answers(previous: Mapping[str, Any], current: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Questions answered both times whose text or cited works differ, with a line diff of the text."""
    changed = []
    for question, now in current.items():
        before = previous.get(question)
        if before is None or (before["text"] == now["text"] and before["cited"] == now["cited"]):
            continue
        diff = difflib.unified_diff(
            before["text"].splitlines(), now["text"].splitlines(), "previous", "now", lineterm="", n=0
        )
        changed.append(
            {
                "question": question,
                "cited_added": sorted(set(now["cited"]) - set(before["cited"])),
                "cited_removed": sorted(set(before["cited"]) - set(now["cited"])),
                "diff": "\n".join(diff),
            }
        )
    return changed


def _flow(
    new_records: list[str], new_works: int, before: int, carried: int, late: int, included_new: int
) -> list[dict[str, Any]]:
    """The update's PRISMA 2020 flow for updated reviews: previous studies, new records, total."""
    by_source = Counter(record.split(":", 1)[0] for record in new_records)
    other = registry.other_methods(by_source)
    found = {
        box: {source: n for source, n in sorted(by_source.items()) if (source in other) == (box == "identified_other")}
        for box in ("identified", "identified_other")
    }
    rows = [
        ("previous", "Studies included in previous version of review", before),
        ("identified", "New records identified from databases", sum(found["identified"].values())),
        *((f"identified:{s}", f"New records from {registry.label(s)}", n) for s, n in found["identified"].items()),
        ("identified_other", "New records identified via other methods", sum(found["identified_other"].values())),
        *(
            (f"identified_other:{s}", f"New records from {registry.label(s)}", n)
            for s, n in found["identified_other"].items()
        ),
        (
            "duplicates_removed",
            "New records of works already held or of each other, and notices about a work",
            len(new_records) - new_works,
        ),
        ("screened", "New works screened", new_works),
        ("not_included", "New works not included (excluded, not retrieved or not readable)", new_works - included_new),
        ("included_new", "New studies included in review", included_new),
        ("withdrawn", "Studies of the previous version no longer included", before - carried),
        ("included_earlier", "Works held before and included in this update", late),
        ("total", "Total studies included in review", carried + late + included_new),
    ]
    return [{"box": box, "label": label, "count": int(count)} for box, label, count in rows]


def _named(work: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"work": work, "title": entry["title"], "doi": entry["doi"]}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def history_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Updates as a table with its columns even when there are none."""
    return pd.DataFrame(rows, columns=list(UPDATE_COLUMNS))


#: The columns of the updates table a reader sees, with their headings.
SUMMARY_COLUMNS = {
    "update": "Update",
    "searched_through": "Searched through",
    "new_works": "New works",
    "retracted": "Newly retracted",
    "corrected": "Newly corrected",
    "dropped": "Dropped",
    "changed_answers": "Answers changed",
    "included_total": "Studies included",
}


def summary_table(history: pd.DataFrame) -> pd.DataFrame:
    """One line per update, newest first."""
    return history[list(SUMMARY_COLUMNS)].iloc[::-1].rename(columns=SUMMARY_COLUMNS)


def last_update_line(history: pd.DataFrame) -> str | None:
    """The latest update in one line, as ``hysem status`` prints it; None before the first."""
    if history.empty:
        return None
    row = history.iloc[-1]
    return (
        f"update {row['update']} (searched through {row['searched_through'] or 'an unknown day'}): "
        f"{row['new_works']} new works, {row['retracted']} newly retracted, {row['corrected']} newly corrected, "
        f"{row['dropped']} dropped, {row['changed_answers']} answers changed; {row['included_total']} studies included"
    )


def what_changed_markdown(history: pd.DataFrame) -> str:
    """The report's "What changed" section body: every update, then the latest one in full."""
    if history.empty:
        return "_No update is materialized for this query._"
    row = history.iloc[-1]
    parts = [summary_table(history).to_markdown(index=False), f"### Update {row['update']}"]
    for name, heading in (
        ("new_works", "New works"),
        ("retracted", "Newly retracted"),
        ("corrected", "Newly corrected"),
        ("dropped", "Dropped"),
    ):
        works = json.loads(row[f"{name}_json"])
        listed = "\n".join(f"- {w['title'] or w['work']}" + (f" (doi:{w['doi']})" if w["doi"] else "") for w in works)
        parts.append(f"**{heading}** ({len(works)})" + (f"\n\n{listed}" if works else ""))
    flow = pd.DataFrame(json.loads(row["flow_json"]))
    parts += ["**PRISMA flow of this update**", flow[["label", "count"]].to_markdown(index=False)]
    changed = json.loads(row["changed_answers_json"])
    parts.append(f"**Answers changed** ({len(changed)})")
    for answer in changed:
        cited = "; ".join(
            [
                *(f"now cites {w}" for w in answer["cited_added"]),
                *(f"no longer cites {w}" for w in answer["cited_removed"]),
            ]
        )
        parts.append(
            f"*{answer['question']}*" + (f" ({cited})" if cited else "") + f"\n\n```diff\n{answer['diff']}\n```"
        )
    return "\n\n".join(parts)
