"""PRISMA 2020 flow counts, each counted from the table that holds its records.

Every box of the flow (records identified per source, duplicates removed, records marked
ineligible by the ranking, records screened and excluded with reasons, reports sought, not
retrieved, assessed, not readable, excluded at full text with reasons, studies included and the
reports of included studies) is counted directly from the upstream tables rather than derived by
subtraction, so that ``reconcile`` can catch tables that are out of step with one another (a
stale partition, a record lost between stages). The studies included are the ``screening``
table's included set, the one every view reads: a study whose report was not retrieved or not
readable stays in, read from its abstract.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from hysem_assets.screening.outcome import FULLTEXT_REASON, fulltext_excluded, included_ids, not_studies, reviewed
from hysem_assets.sources import registry

FLOW_COLUMNS = ("stage", "box", "label", "count")
#: Why an undecided work that does not go on never reached a reviewer (PRISMA: marked ineligible by automation).
RANKED_OUT = "ranked out"
#: Boxes whose count is the sum of their reasons (rows named "box:reason").
BROKEN_DOWN = (
    "identified", "identified_other", "automation_excluded", "screened", "excluded", "not_retrieved", "not_parsed", "fulltext_excluded",
    "included",
)  # fmt: skip
#: (these boxes added, minus these boxes, equals this box): the arithmetic of the flow.
STEPS = (
    (("identified", "identified_other"), ("duplicates_removed", "automation_excluded"), "screened"),
    (("screened",), ("excluded",), "sought"),
    (("sought",), ("not_retrieved",), "assessed"),
    (("assessed",), ("not_parsed", "fulltext_excluded"), "included_reports"),
    (("sought",), ("fulltext_excluded",), "included"),
)
#: How an included study is read: its full text, or its abstract (report not retrieved or not readable).
FULL_TEXT, ABSTRACT_ONLY = "full text", "abstract only"
LABELS = {
    "identified": "Records identified from databases",
    "identified_other": "Records identified via other methods",
    "duplicates_removed": "Duplicate records removed",
    "automation_excluded": "Marked ineligible by automation tools",
    "screened": "Records screened",
    "excluded": "Records excluded",
    "sought": "Reports sought for retrieval",
    "not_retrieved": "Reports not retrieved",
    "assessed": "Reports assessed for eligibility",
    "not_parsed": "Reports not readable",
    "fulltext_excluded": "Reports excluded",
    "included": "Studies included in review",
    "included_reports": "Reports of included studies",
}
#: Words for the reasons that the upstream tables record as codes.
REASON_LABELS = {
    "reviewer": "decided by a reviewer", "ranking": "not yet screened by a reviewer, let through by rank",
    RANKED_OUT: "ranked below the threshold, or left once the stopping rule was met",
    "retracted": "retracted",
    "no_oa_location": "no open-access copy", "http_error": "download failed", "timeout": "download timed out",
    "not_pdf": "link served no PDF", "invalid_pdf": "damaged PDF", "too_large": "PDF over the size limit",
}  # fmt: skip
STAGES = {
    "identified": "identification", "identified_other": "identification", "duplicates_removed": "identification", "automation_excluded": "identification",
    "screened": "screening", "excluded": "screening", "sought": "screening", "not_retrieved": "screening",
    "assessed": "screening", "not_parsed": "screening", "fulltext_excluded": "screening", "included": "included",
    "included_reports": "included",
}  # fmt: skip


@dataclass(frozen=True)
class FlowInputs:
    """The tables the flow is counted from (one query partition)."""

    raw: Mapping[str, pd.DataFrame]  # source -> raw_metadata table
    corpus: pd.DataFrame  # deduped_corpus: record_ids, is_retracted, title, item_type
    screening: pd.DataFrame  # one row per work: cluster_id, decision, reason, proceeds
    pdfs: pd.DataFrame  # one row per work screening let through: cluster_id, status, reason
    parsed: pd.DataFrame  # one row per saved PDF: cluster_id, error
    #: The sources the query searched, each counted even when it found nothing; None: every searched source's table.
    searched: Sequence[str] | None = None


def _row(box: str, count: int, reason: str | None = None) -> dict[str, object]:
    label = LABELS[box] if reason is None else REASON_LABELS.get(reason) or registry.label(reason)
    return {
        "stage": STAGES[box],
        "box": box if reason is None else f"{box}:{reason}",
        "label": label,
        "count": int(count),
    }


def _reason_rows(box: str, reasons: pd.Series) -> list[dict[str, object]]:
    counts = reasons.fillna("unknown").astype(str).value_counts()
    return [_row(box, count, reason) for reason, count in sorted(counts.items())]


def prisma_counts(inputs: FlowInputs) -> pd.DataFrame:
    """The flow as a table: one row per box and per reason within a box ("stage", "box", "label",
    "count"). Undecided works screening does not let through are marked ineligible by automation;
    records screened are those a reviewer decided and those let through by their rank; works are
    excluded with the reviewer's reason, or as retracted; reports are the open-access PDFs,
    "not retrieved" and "not readable" broken down by reason. Records are identified from databases
    (searched or imported) or via other methods (citation searching), per source."""
    rows: list[dict[str, object]] = []
    found = identified_by_source(inputs.raw, inputs.searched)
    other = registry.other_methods(found)
    for box, names in (("identified", [n for n in found if n not in other]), ("identified_other", sorted(other))):
        rows.append(_row(box, sum(found[name] for name in names)))
        rows += [_row(box, found[name], name) for name in names]
    rows.append(_row("duplicates_removed", sum(len(ids) - 1 for ids in inputs.corpus["record_ids"])))
    screening = inputs.screening[inputs.screening["cluster_id"].isin(set(inputs.corpus["cluster_id"]))]
    decided, through = reviewed(screening), screening["proceeds"].astype(bool)
    ranked_out = screening[~decided & ~through]
    rows.append(_row("automation_excluded", len(ranked_out)))
    rows += _reason_rows("automation_excluded", pd.Series([RANKED_OUT] * len(ranked_out), dtype=object))
    screened = screening[decided | through]
    rows.append(_row("screened", len(screened)))
    rows += _reason_rows("screened", decided[decided | through].map({True: "reviewer", False: "ranking"}))
    by_reviewer = screened[screened["decision"] == "excluded"]
    left = set(screened["cluster_id"]) - set(by_reviewer["cluster_id"])
    not_study = {c: why for c, why in not_studies(inputs.corpus).items() if c in left}
    excluded = [*by_reviewer["cluster_id"], *not_study]
    rows.append(_row("excluded", len(excluded)))
    rows += _reason_rows("excluded", pd.Series([*by_reviewer["reason"], *not_study.values()], dtype=object))

    sought = inputs.pdfs[inputs.pdfs["cluster_id"].isin(set(screened["cluster_id"]) - set(excluded))]
    missing = sought[sought["status"] != "saved"]
    rows.append(_row("sought", len(sought)))
    rows.append(_row("not_retrieved", len(missing)))
    rows += _reason_rows("not_retrieved", missing["status"])

    assessed = sought.loc[sought["status"] == "saved", "cluster_id"]
    parsed = inputs.parsed[inputs.parsed["cluster_id"].isin(set(assessed))]
    unreadable = parsed.loc[parsed["error"].notna(), "error"].map(_error_kind)
    never_parsed = pd.Series(["not parsed"] * len(set(assessed) - set(parsed["cluster_id"])), dtype=object)
    rows.append(_row("assessed", len(assessed)))
    rows.append(_row("not_parsed", len(unreadable) + len(never_parsed)))
    rows += _reason_rows("not_parsed", pd.concat([unreadable, never_parsed], ignore_index=True))
    readable = set(parsed.loc[parsed["error"].isna(), "cluster_id"])
    judged = screening[fulltext_excluded(screening) & screening["cluster_id"].isin(readable)]
    rows.append(_row("fulltext_excluded", len(judged)))
    rows += _reason_rows("fulltext_excluded", judged[FULLTEXT_REASON] if len(judged) else pd.Series(dtype=object))

    included = included_ids(screening)
    how = [FULL_TEXT if work in readable else ABSTRACT_ONLY for work in included]
    rows.append(_row("included", len(included)))
    rows += _reason_rows("included", pd.Series(how, dtype=object))
    rows.append(_row("included_reports", how.count(FULL_TEXT)))
    return pd.DataFrame(rows, columns=list(FLOW_COLUMNS))


def identified_by_source(raw: Mapping[str, pd.DataFrame], searched: Sequence[str] | None = None) -> dict[str, int]:
    """Records per source: each source searched, even one that found nothing, and one count per source
    an imported export was named as (the rows' own ``source``) or records were chased by."""
    searches = {name for name in raw if registry.BY_NAME[name].kind is registry.Kind.SEARCH}
    counts: dict[str, int] = {}
    for name, frame in raw.items():
        if name in (searches if searched is None else set(searched)):
            counts[name] = len(frame)
        elif name not in searches and len(frame):
            counts.update(frame["source"].astype(str).value_counts().sort_index().to_dict())
    return counts


def screening_out_of_step(screening: pd.DataFrame, pdfs: pd.DataFrame) -> str | None:
    """Why the flow cannot add up when ``pdfs`` was made before the latest ``screening``, or None."""
    through = set(screening.loc[screening["proceeds"].astype(bool), "cluster_id"])
    fetched = set(pdfs["cluster_id"])
    if through == fetched:
        return None
    return (
        f"pdfs is older than screening: it holds {len(fetched - through)} work(s) screening no longer lets "
        f"through and lacks {len(through - fetched)} it does; materialize 'screening*' for this query"
    )


def _error_kind(error: str) -> str:
    """The kind of a parse error ("no text layer", "corrupt or not a PDF"): its text
    before the first colon, so that one kind groups however its details differ."""
    return str(error).split(":", 1)[0].strip()[:80] or "parse error"


def reconcile(flow: pd.DataFrame) -> list[str]:
    """What does not add up in a flow table, in words; empty when every count reconciles."""
    counts = dict(zip(flow["box"], flow["count"]))
    problems = [f"{box} is negative ({count})" for box, count in counts.items() if count < 0]
    missing = [box for box in LABELS if box not in counts]
    if missing:
        return problems + [f"boxes missing: {', '.join(missing)}"]
    for added, minus, result in STEPS:
        left = sum(counts[name] for name in added) - sum(counts[name] for name in minus)
        if left != counts[result]:
            start = " + ".join(f"{name} ({counts[name]})" for name in added)
            taken = " - ".join(f"{name} ({counts[name]})" for name in minus)
            problems.append(f"{start} - {taken} = {left}, but {result} is {counts[result]}")
    for box in BROKEN_DOWN:
        parts = sum(count for name, count in counts.items() if name.startswith(f"{box}:"))
        if parts != counts[box]:
            problems.append(f"the reasons of {box} add up to {parts}, but {box} is {counts[box]}")
    return problems
