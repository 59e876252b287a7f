"""Wall time of one query's whole graph through the multiprocess executor: steps forked from a fork server
that imported the code location once (hysem's executor) against steps spawned afresh (Dagster's default).

Each variant runs ``dagster job execute`` on the sample query in a home of its own, as a run launched
from the UI or the daemon executes; both must end with the same tables (the home's path, clocks and the
mirror's port taken out). Prints seconds per variant, the speed-up and whether the tables are the same.

    python benchmarks/run_start.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from hysem_assets.definitions import load_definitions

SAMPLE = "air-pollution-cardio-ml"
#: The baseline code location: hysem's definitions with Dagster's default start method.
spawned = load_definitions(start_method="spawn")
VARIANTS = {
    "forkserver (hysem)": ["-m", "hysem_assets.definitions"],
    "spawn (baseline)": ["-f", __file__, "-a", "spawned"],
}


def run(target: list[str], home: Path) -> float:
    env = {**os.environ, "HYSEM_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    env.pop("HYSEM_CONFIG_DIR", None)
    register = f"from hysem_assets.runs.launch import register_partitions; register_partitions([{SAMPLE!r}])"
    subprocess.run([sys.executable, "-c", register], env=env, check=True)
    command = [Path(sys.executable).with_name("dagster"), "job", "execute", *target, "-j", "query_job"]
    started = time.monotonic()
    subprocess.run(
        [*command, "--tags", json.dumps({"dagster/partition": SAMPLE})], env=env, check=True, capture_output=True
    )
    return time.monotonic() - started


#: What differs between any two runs: clocks (a timing, when a row was logged) and the mirror's port.
CLOCK = re.compile(r"(^|_)seconds$|^logged_at$")
TIMINGS = {r'"(\w*seconds)": [-+.e\d]+': r'"\1": null', r"http://127\.0\.0\.1:\d+/": "http://mirror/"}


def tables(home: Path) -> dict[str, pd.DataFrame]:
    """Every parquet asset of the run, with the home's path, the clocks and the mirror's port taken out."""
    found = {str(path.relative_to(home)): pd.read_parquet(path) for path in sorted(home.rglob("assets/**/*.parquet"))}
    return {
        name: table.drop(columns=[c for c in table.columns if CLOCK.search(c)]).replace(
            {re.escape(str(home)): "HOME", **TIMINGS}, regex=True
        )
        for name, table in found.items()
    }


def main() -> None:
    rows, results = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for name, target in VARIANTS.items():
            home = Path(scratch) / name.split()[0]
            rows.append([name, round(run(target, home), 1)])
            results.append(tables(home))
        same = results[0].keys() == results[1].keys()
        for key in results[0].keys() & results[1].keys():
            try:
                pd.testing.assert_frame_equal(results[0][key], results[1][key], check_like=True)
            except AssertionError as difference:
                same = False
                print(f"{key} differs: {str(difference).splitlines()[0]}")
    print(tabulate(rows, headers=["steps", "seconds"]))
    print(f"speed-up: {rows[1][1] / rows[0][1]:.2f}x; same tables: {same}")


if __name__ == "__main__":
    main()
