"""Compare the asset tables of two hysem homes, e.g. the demo before and after a change.

    python scripts/compare_outputs.py HOME_A HOME_B [--allow-additions]

Every ``assets/**/*.parquet`` present in either home is compared row for row, after
dropping the columns that measure the run rather than the data (seconds, timings, log
times) and writing the mirror's random loopback port and each home's own folder the
same way. Prints one line per table and exits 1 when a table differs; with
``--allow-additions``, tables and columns found only in the second home are listed as
additions and the columns both have must agree.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

#: Columns that differ between two runs on the same data.
VOLATILE = ("seconds", "logged_at", "created_at", "timestamp", "run_id")
_PORT = re.compile(r"127\.0\.0\.1:\d+")


def _volatile(key: str) -> bool:
    return key in VOLATILE or key.endswith("_seconds")


def _steady(value: object) -> object:
    """A JSON document without the keys that measure the run, at any depth."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not _volatile(k)}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _steady_text(value: object) -> object:
    """JSON text (an answer's trace, a record's provenance) compared without its timings."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.dumps(_steady(json.loads(value)), sort_keys=True)
        except ValueError:
            return value
    return value


def comparable(frame: pd.DataFrame, home: Path) -> pd.DataFrame:
    kept = frame.drop(columns=[c for c in frame.columns if _volatile(c)])
    text = kept.map(_steady_text).astype(str).reset_index(drop=True)
    return text.apply(
        lambda column: column.str.replace(str(home), "$HOME", regex=False).str.replace(
            _PORT, "127.0.0.1:PORT", regex=True
        )
    )


def compare(first: Path, second: Path, allow_additions: bool = False) -> list[str]:
    homes = (first, second)
    tables = sorted({p.relative_to(home / "assets") for home in homes for p in (home / "assets").rglob("*.parquet")})
    differences = []
    for table in tables:
        a, b = first / "assets" / table, second / "assets" / table
        if allow_additions and b.is_file() and not a.is_file():
            print(f"{table}: added")
            continue
        if not (a.is_file() and b.is_file()):
            differences.append(f"{table}: only in {first if a.is_file() else second}")
            continue
        left, right = comparable(pd.read_parquet(a), first), comparable(pd.read_parquet(b), second)
        added = [c for c in right.columns if c not in left.columns]
        if allow_additions and added and set(left.columns) <= set(right.columns):
            print(f"{table}: columns added: {', '.join(added)}")
            right = right[list(left.columns)]
        if list(left.columns) != list(right.columns):
            differences.append(f"{table}: columns differ ({sorted(set(left.columns) ^ set(right.columns))})")
        elif len(left) != len(right):
            differences.append(f"{table}: {len(left)} rows, then {len(right)}")
        elif not left.equals(right):
            changed = [c for c in left.columns if not left[c].equals(right[c])]
            rows = int((left != right).any(axis=1).sum())
            differences.append(f"{table}: {rows} of {len(left)} rows differ (columns: {', '.join(changed)})")
        else:
            print(f"{table}: identical ({len(left)} rows)")
    return differences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--allow-additions", action="store_true", help="New tables and columns are not differences.")
    args = parser.parse_args()
    differences = compare(args.first, args.second, args.allow_additions)
    for line in differences:
        print(f"DIFFERENT {line}")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
