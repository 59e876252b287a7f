"""Saved analytical queries: each ``config/reports/<name>.cypher`` is one report.

A report is read-only Cypher that both stores accept, with the partition key as
parameter ``$query``; the file's leading ``//`` lines are its description.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path

import pandas as pd

from hysem_assets.settings.environment import config_dir
from hysem_assets.stores.graph import GraphStore


@dataclass(frozen=True)
class Report:
    name: str
    description: str
    cypher: str


def load_reports(directory: Path | None = None) -> list[Report]:
    """Reports in ``directory`` (default ``config/reports``), sorted by name."""
    directory = directory or config_dir() / "reports"
    reports = []
    for path in sorted(directory.glob("*.cypher")):
        text = path.read_text(encoding="utf-8")
        header = takewhile(lambda line: line.startswith("//"), text.splitlines())
        reports.append(Report(path.stem, " ".join(line.removeprefix("//").strip() for line in header), text))
    return reports


def run_report(store: GraphStore, report: Report, query: str) -> pd.DataFrame:
    return store.query(report.cypher, {"query": query})
