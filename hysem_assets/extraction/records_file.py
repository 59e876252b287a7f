"""``hysem extract``: a protocol's fields read from records a reviewer already has, without the graph.

Each record goes through :mod:`hysem_assets.extraction.rows` as a work of ``extracted_fields``
does, with the profile's backend, so a value is the same either way.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pandas as pd

from hysem_assets.core.progress import Progress, StderrLines
from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.inputs import Problem, read_records
from hysem_assets.extraction.rows import all_failed, documents_to_extract, extracted_rows
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.profile import load_settings
from hysem_assets.settings.protocols import Protocol


class RecordsFileError(ValueError):
    """A records file that cannot be read at all; the message names it and what is wrong."""


@dataclass(frozen=True)
class FileExtraction:
    """What one file gave: records extracted, their statuses, the lines that could not be read, and the
    first reasons when every record failed (:func:`~hysem_assets.extraction.rows.all_failed`)."""

    records: int
    statuses: dict[str, int]
    problems: list[Problem]
    all_failed: str | None = None


def extract_file(
    input_path: Path,
    protocol: Protocol,
    open_output: Callable[[], contextlib.AbstractContextManager[TextIO]],
    warn: Callable[[Problem], None],
) -> FileExtraction:
    """Extract ``protocol``'s fields from each record of ``input_path`` (JSON Lines or CSV) into the JSON Lines
    file ``open_output()`` opens once all are extracted (so a run that fails early leaves an earlier output
    as it was); a line that cannot be read goes to ``warn`` and is skipped."""
    try:
        records, problems = read_records(input_path)
    except ValueError as error:
        raise RecordsFileError(str(error)) from None
    for problem in problems:
        warn(problem)
    settings = load_settings().profile.assets.extracted_fields
    backend = build_backend(settings.llm, cache_dir=hysem_home() / "llm_cache" / "extracted_fields", protocol=protocol)
    corpus = records.rename(columns={"id": "cluster_id"})
    full_texts = pd.DataFrame({"cluster_id": corpus["cluster_id"], "markdown": corpus["text"], "error": None})
    documents = documents_to_extract(corpus, full_texts)
    progress = Progress(StderrLines(), "extract", unit="records")
    try:
        rows = extracted_rows(documents, protocol, backend, settings, progress)
    finally:
        progress.close()
    names = [spec.name for spec in protocol.fields]
    with open_output() as handle:
        for document, row in zip(documents, rows, strict=True):
            result = {"id": document.doc_id, "text_source": document.metadata["text_source"]}
            result |= {name: row[name] for name in names}
            result |= {"evidence": json.loads(row["evidence"]), "status": row["status"], "error": row["error"]}
            handle.write(json.dumps(result, ensure_ascii=False) + "\n")
    statuses = pd.Series([row["status"] for row in rows], dtype="object").value_counts().to_dict()
    return FileExtraction(len(rows), statuses, problems, all_failed(rows, "records"))
