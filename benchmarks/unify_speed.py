"""Speed of canonical-term mapping: 100,000 raw terms against a 2,000-entry dictionary.

Generates a dictionary (2,000 canonical terms, each with an abbreviation and a hyphenated
variant) and raw terms as extraction yields them: spellings from the dictionary, spelling
variants of them, and terms the dictionary lacks, repeated across documents. Prints the
batched ``map_terms`` rate (cold: dictionary embedded; warm: dictionary from the cache),
and the same three steps run one term at a time on a sample (exact lookup, normalized
lookup, embedding the term alone against the cached dictionary), with the ratio.

    python benchmarks/unify_speed.py [--terms 100000] [--entries 2000] [--one-at-a-time 300] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.settings.dictionaries import build_dictionary
from hysem_assets.terms.embeddings import dictionary_embeddings
from hysem_assets.terms.mapping import map_terms

WORDS = """
air ambient annual arterial atrial bayesian black blood boosted carbon cardiac cardiovascular causal chronic
coarse convolutional coronary daily deep dioxide distributed ensemble exposure failure fine forest gradient
graph heart hospital hourly indoor infarction kernel lag learning long machine matter model monoxide mortality
network neural nitrogen outdoor ozone particulate personal pollution pressure random recurrent regression
residential risk satellite short smoke spatial stroke sulfur support survival temporal term traffic tree
ultrafine urban variability vector wildfire admissions emergency exposure-response forecasting hypertension
arrhythmia atherosclerosis biomarker cohort panel time-series case-crossover lasso elastic ridge boosting
""".split()
FIELD = "ml_methods_used"


def generated_dictionary(entries: int, rng: np.random.Generator) -> dict[str, list[str]]:
    """Canonical terms of 2-3 words, each word set used once, so no two entries share a spelling."""
    canonicals: dict[str, list[str]] = {}
    used: set[frozenset[str]] = set()
    while len(canonicals) < entries:
        words = rng.choice(WORDS, size=rng.integers(2, 4), replace=False)
        if frozenset(words) in used:
            continue
        used.add(frozenset(words))
        abbreviation = "".join(word[0] for word in words).upper() + str(len(canonicals))
        canonicals[" ".join(words)] = [abbreviation, "-".join(words[::-1])]
    return canonicals


def generated_terms(dictionary: dict[str, list[str]], count: int, rng: np.random.Generator) -> pd.DataFrame:
    spellings = [s for canonical, synonyms in dictionary.items() for s in [canonical, *synonyms]]
    variants = [s.upper().replace(" ", "-") + "s" for s in dictionary]
    novel_pool = list(dict.fromkeys(" ".join(rng.choice(WORDS, size=rng.integers(2, 5))) for _ in range(12_000)))
    novel_pool = [term for term in novel_pool if term not in dictionary]
    kinds = rng.choice(3, size=count, p=[0.4, 0.2, 0.4])
    pools = (spellings, variants, novel_pool)
    terms = [pools[k][rng.integers(len(pools[k]))] for k in kinds]
    return pd.DataFrame(
        {"doc_id": rng.integers(0, count // 10, size=count).astype(str), "field": FIELD, "raw_term": terms}
    )


def one_at_a_time(terms: list[str], dictionary, encoder: Encoder, cache_dir: Path) -> float:
    """Seconds for the three matching steps on each term separately, dictionary already embedded."""
    matrix, _ = dictionary_embeddings(encoder, dictionary, cache_dir)
    spellings = dictionary.spellings
    exact, matcher = dict(spellings), dictionary.matcher
    canonicals = [c for _, c in spellings]
    started = time.perf_counter()
    for term in terms:
        if term in exact or matcher.lookup(term):
            continue
        canonicals[int(np.argmax(matrix @ encoder.encode([term])[0]))]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--terms", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=2_000)
    parser.add_argument("--one-at-a-time", type=int, default=300, help="sample size of the per-term baseline")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    mapping = generated_dictionary(args.entries, rng)
    dictionary = build_dictionary(FIELD, mapping)
    raw = generated_terms(mapping, args.terms, rng)
    distinct = raw["raw_term"].nunique()
    print(
        f"dictionary: {len(dictionary.entries):,} entries, {len(dictionary.spellings):,} spellings; "
        f"raw terms: {len(raw):,} rows, {distinct:,} distinct; device {args.device}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )

    encoder = Encoder(device=args.device, batch_size=256)
    encoder.encode(["warm up the model"])
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for run in ("cold", "warm"):
            before = encoder.encoded
            started = time.perf_counter()
            result = map_terms(raw, {FIELD: dictionary}, cache_dir=Path(cache), encoder=encoder)
            seconds = time.perf_counter() - started
            rows.append([f"batched ({run} cache)", seconds, len(raw) / seconds, encoder.encoded - before])
        sample = raw["raw_term"].sample(args.one_at_a_time, random_state=0).tolist()
        before = encoder.encoded
        seconds = one_at_a_time(sample, dictionary, encoder, Path(cache))
        rows.append(
            [
                f"one at a time ({len(sample)} sampled)",
                seconds * len(raw) / len(sample),
                len(sample) / seconds,
                (encoder.encoded - before) * len(raw) // len(sample),
            ]
        )
    print(
        tabulate(
            rows,
            headers=["method", "seconds (for all rows)", "terms/s", "texts embedded"],
            floatfmt=("", ".1f", ",.0f", ","),
        )
    )
    methods = result.fields.iloc[0]
    print(f"\nwarm batched vs one at a time: {rows[1][2] / rows[2][2]:,.0f}x terms/s")
    print(
        f"matches: exact {methods['exact']:,}, normalized {methods['normalized']:,}, embedding "
        f"{methods['embedding']:,}, unmatched {methods['unmatched']:,} (distinct terms)"
    )


if __name__ == "__main__":
    main()
