"""The sample's extracted_fields: every value from its work's own text, every design a category."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pandas as pd
from dagster import AssetSelection, DagsterInstance, materialize

from hysem_assets.core.matcher import fold
from hysem_assets.core.text import split_sentences
from hysem_assets.definitions import defs
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.extraction.designs import categories, is_design
from hysem_assets.extraction.own_text import shared_sentences
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.environment import asset_file, config_dir
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.acquisition.helpers import SAMPLE

#: What marks an affiliation line for this check: an institution and a country after the last comma.
AFFILIATION = re.compile(r"\b(?:Department|University|Institute|School|Centre|Center)\b.*,\s*[^,]+$")


def plain(sentence: str) -> str:
    """Copies of one sentence alike: folded, lower case, numbers as 0, words only."""
    return " ".join(re.findall(r"[^\W_]+", re.sub(r"\d+(?:[.,]\d+)*", "0", fold(sentence).lower())))


def test_values_come_from_each_works_own_text_and_designs_are_categories() -> None:
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
        partitioned = [a for a in defs.assets if a.partitions_def is not None]
        selection = AssetSelection.assets("extracted_fields").upstream()
        result = materialize(
            partitioned, instance=instance, resources=defs.resources, partition_key=SAMPLE, selection=selection
        )
    assert result.success
    extracted = pd.read_parquet(asset_file("extracted_fields", SAMPLE))
    parsed = pd.read_parquet(asset_file("parsed_docs", SAMPLE)).dropna(subset=["markdown"])
    protocol = load_protocol("pollution-cardio-ml")
    evidence = {row.cluster_id: json.loads(row.evidence) for row in extracted.itertuples()}

    # the sample's full texts share introduction and methods sentences: the rule has work to do
    holders = defaultdict(set)
    for row in parsed.itertuples():
        for sentence in split_sentences(row.markdown):
            holders[plain(sentence)].add(row.cluster_id)
    assert sum(len(works) >= 3 and len(key.split()) >= 6 for key, works in holders.items()) >= 10

    # no evidence sentence stands in 3 or more works, as written or near-verbatim
    sentences = {
        work: sorted({e["sentence"] for entries in fields.values() for e in entries if e.get("sentence")})
        for work, fields in evidence.items()
    }
    by_form = defaultdict(set)
    for work, found in sentences.items():
        for sentence in found:
            by_form[plain(sentence)].add(work)
    assert max(len(works) for works in by_form.values()) <= 2
    assert not any(shared_sentences(["\n\n".join(found) for found in sentences.values()]))

    # a design column holds one of its categories or nothing, never a sentence; an empty one says why
    for field in filter(is_design, protocol.fields):
        allowed = set(categories(protocol, field))
        assert set(extracted[field.name].dropna()) <= allowed
        assert extracted[field.name].notna().sum() >= len(extracted) // 2
        for work in extracted.loc[extracted[field.name].isna(), "cluster_id"]:
            assert evidence[work][field.name][0]["reason"]

    # a place named only in a work's affiliations is not where its study was
    places = load_dictionary(config_dir() / "dictionaries" / "geography.yaml").matcher
    geography = dict(zip(extracted["cluster_id"], extracted["geography"].map(json.loads), strict=True))
    only_there = 0
    for row in parsed.itertuples():
        lines = row.markdown.splitlines()
        affiliations = [line for line in lines if AFFILIATION.search(line)]
        elsewhere = set(places.find("\n".join(line for line in lines if line not in affiliations)))
        for place in set(places.find("\n".join(affiliations))) - elsewhere:
            only_there += 1
            assert place not in geography[row.cluster_id], (row.cluster_id, place)
        for entries in evidence[row.cluster_id].values():
            assert not {e.get("sentence") for e in entries} & set(affiliations)
    assert only_there >= 3
