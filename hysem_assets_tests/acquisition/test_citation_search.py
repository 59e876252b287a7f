"""Citation searching on the sample: the included studies' references and citing works enter screening as
records identified via other methods, once, and a second run chases only studies not chased before."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml
from dagster import AssetSelection, materialize

from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.review.flow import identified_by_source
from hysem_assets.runs.instance import get_instance
from hysem_assets.screening.outcome import included_ids
from hysem_assets.settings.environment import asset_file
from hysem_assets.sources.registry import other_methods, record_sources
from hysem_assets_tests.acquisition.helpers import SAMPLE

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))
CHASED = "raw_metadata/citations"


def _with_citation_search(config: Path, **settings) -> None:
    path = config / "queries.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in document["queries"]:
        if entry["slug"] == SAMPLE:
            entry["citations"] = settings
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def _run(selection: str):
    instance = get_instance()
    instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
    partitioned = [a for a in defs.assets if a.partitions_def is not None]
    result = materialize(
        partitioned,
        selection=AssetSelection.from_string(selection),
        instance=instance,
        partition_key=SAMPLE,
        resources=defs.resources,
    )
    return {tuple(e.asset_key.path): e.materialization.metadata for e in result.get_asset_materialization_events()}


def _table(asset: str) -> pd.DataFrame:
    return pd.read_parquet(asset_file(asset, SAMPLE))


def test_chased_works_are_screened_and_counted_as_other_methods(config: Path):
    _with_citation_search(config, per_study=50)
    first = _run('key:"raw_metadata/*" or key:deduped_corpus or key:screening')
    assert "nothing to chase yet" in first[("raw_metadata", "citations")]["skipped"].value
    corpus = _table("deduped_corpus")
    searched = set(corpus["cluster_id"])
    included = included_ids(_table("screening"))
    seeds = set(corpus.loc[corpus["cluster_id"].isin(included), "openalex_id"].dropna())
    assert seeds

    chased = _run(f'key:"{CHASED}"')[("raw_metadata", "citations")]
    frame = _table(CHASED)
    routes = {source_id: json.loads(found) for source_id, found in zip(frame["source_id"], frame["found_via"])}
    assert routes and all(route.split(":", 1)[1] in seeds for found in routes.values() for route in found)
    cited_only = {record["source_id"] for work in TRUTH["cited_only_works"] for record in work["records"]} & set(routes)
    assert cited_only, "the works only citations reach are found"
    assert chased["studies_chased_now"].value == len(seeds) and chased["records_found_now"].value == len(frame)
    assert not set(routes) & set(corpus["openalex_id"].dropna()), "a work the query holds gets no record"
    assert chased["held_works_found_now"].value > 0

    again = _run(f'key:"{CHASED}"')[("raw_metadata", "citations")]
    assert again["studies_chased_now"].value == 0 and again["records_found_now"].value == 0
    assert len(_table(CHASED)) == len(frame), "a study is chased once; what it gave is kept"

    _run("key:deduped_corpus or key:screening")
    corpus = _table("deduped_corpus")
    new = corpus[~corpus["cluster_id"].isin(searched)]
    assert set(new["openalex_id"]) == cited_only
    assert all("citations" in sources for sources in new["sources"])
    screened = set(_table("screening")["cluster_id"])
    assert set(new["cluster_id"]) <= screened

    raw = {name: _table(f"raw_metadata/{name}") for name in record_sources()}
    counts = identified_by_source(raw, ["pubmed", "openalex", "scopus"])
    assert other_methods(counts) == {"citations"} and counts["citations"] == len(frame)


def test_citation_search_is_off_unless_the_query_asks_for_it(config: Path):
    metadata = _run(f'key:"{CHASED}"')[("raw_metadata", "citations")]
    assert "off for this query" in metadata["skipped"].value and metadata["dagster/row_count"].value == 0
