"""Screening decisions to and from the files other screening tools read and write.

Two formats, as ASReview writes them:

- CSV (``.csv``, ``.tsv``): one row per record with ``record_id``, the bibliographic columns and
  a label column (``included``, ``label_included``, ``asreview_label`` or the other names ASReview
  accepts): 1 goes on (included, or "maybe"), 0 excluded, empty undecided. hysem adds
  ``exclusion_reason``, ``decision`` (included, maybe, excluded), ``note``, ``reviewer``,
  ``stage`` and ``resolution`` (1 for a decision that resolved a conflict).
- RIS (``.ris``, ``.txt``): the label is a note (``N1``) reading ``ASReview_relevant``,
  ``ASReview_irrelevant`` or ``ASReview_not_seen``; hysem adds the same as notes
  ``exclusion_reason: …``, ``decision: …``, ``note: …``, ``reviewer: …``, ``stage: …``,
  ``resolution: 1``.

A row that names no reviewer or stage is the importing reviewer's, at the stage imported.

An imported row is matched to a work by its id (``record_id``, RIS ``ID``), else its DOI, else
its title (case and punctuation aside) when no other work has it; an import is taken whole
or not at all. A CSV's cells are written inert (a title starting with ``=`` cannot become a
formula in the reviewer's spreadsheet) and read back as they were.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import rispy

from hysem_assets.core.identifiers import normalize_doi
from hysem_assets.core.spreadsheets import restored, separator, write_csv
from hysem_assets.library.exports import ris
from hysem_assets.library.work import strings
from hysem_assets.screening.decisions import (
    DEFAULT_REVIEWER,
    TITLE_ABSTRACT,
    Decision,
    DecisionsError,
    goes_on,
)

#: Label columns ASReview reads, in its order of preference.
LABEL_COLUMNS = (
    "asreview_label", "included", "label", "final_included", "label_included",
    "included_label", "included_final", "included_flag", "include",
)  # fmt: skip
RIS_LABELS = {"ASReview_relevant": 1, "ASReview_irrelevant": 0, "ASReview_not_seen": None}
#: The labels as a note may spell them, in any case.
_LABEL_OF = {note.lower(): label for note, label in RIS_LABELS.items()}
LABEL_PREFIX = "asreview_"  # a note starting so is meant as a label
REASON_NOTE = "exclusion_reason: "
#: The columns hysem adds beside the label, each also a RIS note ``<column>: <value>``.
DECISION_COLUMNS = ("decision", "note", "reviewer", "stage", "resolution")
FORMATS = {".csv": "csv", ".tsv": "csv", ".ris": "ris", ".txt": "ris"}


def file_format(path: Path) -> str:
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise DecisionsError(
            f"{path}: unknown format {path.suffix!r}; decisions are read and written as CSV (.csv, .tsv) or RIS "
            "(.ris, .txt)"
        ) from None


def export_decisions(corpus: pd.DataFrame, decisions: dict[str, Decision], path: Path) -> int:
    """Write every work of ``corpus`` with its decision (undecided ones unlabelled); returns the rows."""
    label = {record: int(goes_on(d)) for record, d in decisions.items()}
    reason = {record: d.reason for record, d in decisions.items() if d.action == "excluded"}
    added = {record: _added(d) for record, d in decisions.items()}
    ids = corpus["cluster_id"].astype(str)
    path.parent.mkdir(parents=True, exist_ok=True)
    if file_format(path) == "ris":
        notes = {
            record: [next(k for k, v in RIS_LABELS.items() if v == label.get(record))]
            + ([REASON_NOTE + reason[record]] if record in reason else [])
            + [f"{column}: {' '.join(value.split())}" for column, value in added.get(record, {}).items() if value]
            for record in ids
        }
        path.write_text(ris(corpus, notes), encoding="utf-8")
        return len(corpus)
    table = pd.DataFrame(
        {
            "record_id": ids,
            "title": corpus["title"],
            "abstract": corpus["abstract"],
            "authors": corpus["authors"].map(lambda names: "; ".join(strings(names))),
            "year": corpus["year"],
            "doi": corpus["doi"],
            "included": pd.array([label.get(record) for record in ids], dtype="Int64"),
            "exclusion_reason": [reason.get(record) for record in ids],
            **{column: [added.get(record, {}).get(column) for record in ids] for column in DECISION_COLUMNS},
        }
    )
    write_csv(table, path, sep=separator(path))
    return len(table)


def _added(decision: Decision) -> dict[str, str | None]:
    return {
        "decision": decision.action,
        "note": decision.note,
        "reviewer": decision.reviewer,
        "stage": decision.stage,
        "resolution": "1" if decision.resolution else None,
    }


def read_decisions_file(
    path: Path, corpus: pd.DataFrame, *, reviewer: str = DEFAULT_REVIEWER, stage: str = TITLE_ABSTRACT
) -> list[Decision]:
    """The decisions of an exported file, matched to ``corpus``'s works; unlabelled rows are skipped, and
    rows naming no reviewer or stage are ``reviewer``'s at ``stage``.

    They come in an order shuffled by the file's content: a file's rows (often sorted by label)
    do not say in which order they were decided, and the stopping rule reads the log's order as
    the order of screening, so a sorted block of exclusions must not pass for a late run of them.

    Raises :class:`DecisionsError` naming the row for a label that is not 0 or 1, a row that
    matches no work, or two rows that decide one work differently; for a RIS record without its
    ``ER`` line or with a label ASReview does not write, and for a RIS file with no label at all.
    """
    rows = _read_ris(path) if file_format(path) == "ris" else _read_csv(path)
    match = _Matcher(corpus)
    source = f"import:{path.name}"
    decided: dict[tuple, tuple[str, Decision]] = {}
    unknown = []
    for where, row in rows:
        action = _action(row, where, path)
        if action is None:
            continue
        record = match(row)
        if record is None:
            unknown.append(where)
            continue
        reason = (row.get("reason") or f"excluded in {path.name}") if action == "excluded" else None
        try:
            decision = Decision(
                record,
                action,
                reason,
                source=source,
                reviewer=row.get("reviewer") or reviewer,
                stage=row.get("stage") or stage,
                note=row.get("note"),
                resolution=_label(row.get("resolution"), where, path) == 1,
            )
        except DecisionsError as exc:
            raise DecisionsError(f"{path}: {where}: {exc}; nothing was imported") from None
        key = (record, decision.reviewer, decision.stage, decision.resolution)
        if key in decided and decided[key][1].action != action:
            raise DecisionsError(
                f"{path}: {decided[key][0]} and {where} decide work {record!r} differently "
                f"({decided[key][1].action} and {action}); keep one of them and import again"
            )
        decided.setdefault(key, (where, decision))
    if unknown:
        raise DecisionsError(
            f"{path}: {len(unknown)} labelled row(s) match no work of this query by id, DOI or title, or a title "
            f"several works share (first: "
            f"{', '.join(unknown[:3])}); nothing was imported. Export from a screening of the same query, or "
            "remove those rows"
        )
    decisions = [decision for _, decision in decided.values()]
    order = np.random.default_rng(zlib.crc32(path.read_bytes())).permutation(len(decisions))
    return [decisions[k] for k in order]


class _Matcher:
    def __init__(self, corpus: pd.DataFrame) -> None:
        ids = corpus["cluster_id"].astype(str)
        self.ids = set(ids)
        self.dois = {doi: record for doi, record in zip(corpus["doi"], ids) if isinstance(doi, str)}
        keys = corpus["title"].map(_title_key)
        unique = keys[(keys != "") & ~keys.duplicated(keep=False)]
        self.titles = dict(zip(unique, ids[unique.index]))  # a title several works share identifies none

    def __call__(self, row: dict) -> str | None:
        if row.get("id") and str(row["id"]) in self.ids:
            return str(row["id"])
        doi = normalize_doi(row.get("doi")) if isinstance(row.get("doi"), str) else None
        if doi and doi in self.dois:
            return self.dois[doi]
        return self.titles.get(_title_key(row.get("title")))


def _action(row: dict, where: str, path: Path) -> str | None:
    """The row's decision: its label, told apart as included or "maybe" by the ``decision`` hysem wrote
    (a label edited since wins over it); the ``decision`` alone where the label is empty."""
    named = (row.get("decision") or "").strip().lower()
    if named and named not in ("included", "maybe", "excluded"):
        raise DecisionsError(f"{path}: {where} has decision {named!r}; decisions are included, maybe or excluded")
    label = row["label"]
    if named and (label is None or label == int(named != "excluded")):
        return named
    return None if label is None else ("included" if label == 1 else "excluded")


def _title_key(title: object) -> str:
    return " ".join(re.findall(r"\w+", title.lower())) if isinstance(title, str) else ""


def _label(value: object, where: str, path: Path) -> int | None:
    if value is None or (isinstance(value, float) and pd.isna(value)) or str(value).strip() in ("", "-1"):
        return None  # ASReview writes -1 or nothing for records not yet seen
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "yes", "y"):
        return 1
    if text in ("0", "0.0", "false", "no", "n"):
        return 0
    raise DecisionsError(f"{path}: {where} has label {value!r}; labels are 1 (included), 0 (excluded) or empty")


def _read_csv(path: Path) -> list[tuple[str, dict]]:
    try:
        frame = pd.read_csv(path, sep=separator(path), dtype=str, keep_default_na=False).map(restored)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DecisionsError(f"{path}: not a readable CSV file ({exc})") from None
    columns = {column.lower(): column for column in frame.columns}
    label_column = next((columns[name] for name in LABEL_COLUMNS if name in columns), None)
    if label_column is None:
        raise DecisionsError(f"{path}: no label column; name one {', '.join(LABEL_COLUMNS[:2])} or label_included")
    rows = []
    for number, row in enumerate(frame.to_dict("records"), start=2):
        values = {key.lower(): value or None for key, value in row.items()}
        where = f"row {number}" + (f" (record_id {values['record_id']})" if values.get("record_id") else "")
        rows.append(
            (
                where,
                {
                    "id": values.get("record_id"),
                    "doi": values.get("doi"),
                    "title": values.get("title") or values.get("primary_title"),
                    "label": _label(row[label_column], where, path),
                    "reason": values.get("exclusion_reason"),
                    **{column: values.get(column) for column in DECISION_COLUMNS},
                },
            )
        )
    return rows


def _read_ris(path: Path) -> list[tuple[str, dict]]:
    """The records of a RIS file; a record without its ``ER`` line, a label note ASReview does not
    write, or a file whose records carry no label at all is refused (it would import nothing)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
        unended = _unended_record(text)
        entries = rispy.loads(text, skip_unknown_tags=True)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DecisionsError(f"{path}: not a readable RIS file ({exc})") from None
    if unended is not None:
        raise DecisionsError(
            f"{path}: line {unended} opens a record with no 'ER  - ' line before the next record or the end; "
            "nothing was imported. End each record with 'ER  - ' and import again"
        )
    rows, labelled = [], False
    for number, entry in enumerate(entries, start=1):
        notes = [str(note).strip() for note in entry.get("notes") or []]
        where = f"record {number}" + (f" (ID {entry['id']})" if entry.get("id") else "")
        unknown = next(
            (note for note in notes if note.lower().startswith(LABEL_PREFIX) and note.lower() not in _LABEL_OF), None
        )
        if unknown is not None:
            raise DecisionsError(
                f"{path}: {where} has the note {unknown!r}, which is no label; label notes are "
                f"{', '.join(RIS_LABELS)}. Correct it and import again"
            )
        labels = [_LABEL_OF[note.lower()] for note in notes if note.lower() in _LABEL_OF]
        labelled = labelled or bool(labels)
        reason = _noted(notes, REASON_NOTE)
        title = entry.get("title") or entry.get("primary_title")
        rows.append(
            (
                where,
                {
                    "id": entry.get("id"),
                    "doi": entry.get("doi"),
                    "title": title,
                    "label": labels[0] if labels else None,
                    "reason": reason,
                    **{column: _noted(notes, f"{column}: ") for column in DECISION_COLUMNS},
                },
            )
        )
    if not labelled:
        raise DecisionsError(
            f"{path}: no record has a label note (N1 {', '.join(RIS_LABELS)}), so there is nothing to import; "
            "export the file with its labels"
        )
    return rows


def _noted(notes: list[str], prefix: str) -> str | None:
    return next((note[len(prefix) :].strip() for note in notes if note.startswith(prefix)), None)


def _unended_record(text: str) -> int | None:
    """The line of the first ``TY`` whose record has no ``ER`` before the next ``TY`` or the end (rispy
    would merge it into the next record, or drop it)."""
    opened = None
    for number, line in enumerate(text.splitlines(), start=1):
        tag = line[:2] if line[2:6] in ("  - ", "  -") else None
        if tag == "TY":
            if opened is not None:
                return opened
            opened = number
        elif tag == "ER":
            opened = None
    return opened
