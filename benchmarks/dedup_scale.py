"""Scale benchmark for ``cluster_records`` on synthetic records with planted duplicates.

Generates (seeded, so every run sees the same data) distinct works, copies some of
them with the distortions real exports show (title typos, case and punctuation
changes, missing DOI, another author format, year off by one, abbreviated journal),
adds look-alikes that must stay apart (errata, the same title years later, a "part 2"),
then prints
records per second and pairwise precision/recall against the planted truth.

    python benchmarks/dedup_scale.py [--records 100000] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import string
import time
from collections import Counter
from collections.abc import Callable

import pandas as pd

from hysem_assets.dedup.cluster import cluster_records

OPENINGS = (
    "the effect of", "a randomized trial of", "association between", "impact of",
    "outcomes of", "a systematic review of", "risk factors for", "the role of",
    "efficacy and safety of", "long term follow up of",
)  # fmt: skip
TYPES = ("journal-article",)
SOURCES = ("pubmed", "scopus", "openalex")


def _word(rng: random.Random, syllables: int) -> str:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables))


class Corpus:
    """Word, name and journal pools with a skewed (Zipf-like) word distribution."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.words = list(dict.fromkeys(_word(rng, rng.randint(2, 5)) for _ in range(8000)))
        self.weights = [1 / (rank + 1) ** 0.8 for rank in range(len(self.words))]
        surnames = (_word(rng, rng.randint(2, 4)).title() for _ in range(6000))
        self.surnames = list(dict.fromkeys(surnames))
        self.given = [_word(rng, 2).title() for _ in range(400)]
        self.journals = [
            " ".join(_word(rng, rng.randint(3, 4)).title() for _ in range(rng.randint(2, 4))) for _ in range(600)
        ]

    def title(self) -> str:
        words = self.rng.choices(self.words, self.weights, k=self.rng.randint(7, 15))
        opening = self.rng.choice(OPENINGS) + " " if self.rng.random() < 0.4 else ""
        return (opening + " ".join(words)).capitalize()

    def work(self, work_id: int) -> dict:
        rng = self.rng
        start = rng.randint(1, 3000)
        authors = [f"{rng.choice(self.surnames)}, {rng.choice(self.given)}" for _ in range(rng.randint(1, 8))]
        return {
            "work": work_id,
            "title": self.title(),
            "authors": authors,
            "year": rng.randint(1990, 2024),
            "journal": rng.choice(self.journals),
            "volume": str(rng.randint(1, 200)),
            "pages": f"{start}-{start + rng.randint(2, 14)}",
            "doi": f"10.{rng.randint(1000, 9999)}/{work_id:x}{rng.randint(0, 99999)}" if rng.random() < 0.7 else None,
            "item_type": rng.choice(TYPES),
            "source": rng.choice(SOURCES),
        }


def _typo(rng: random.Random, record: dict) -> None:
    title = record["title"]
    at = rng.randint(1, len(title) - 2)
    record["title"] = title[:at] + rng.choice(string.ascii_lowercase) + title[at + 1 :]


def _case_punctuation(rng: random.Random, record: dict) -> None:
    title = record["title"].upper() if rng.random() < 0.5 else record["title"].lower()
    record["title"] = title.replace(" ", ": ", 1) + "."


def _drop_doi(rng: random.Random, record: dict) -> None:
    record["doi"] = None


def _author_format(rng: random.Random, record: dict) -> None:
    def initials(name: str) -> tuple[str, str]:
        surname, given = name.split(", ")
        return surname, given[0]

    style = rng.choice(("{g}. {s}", "{s} {g}", "{s}, {g}."))
    record["authors"] = [style.format(s=s, g=g) for s, g in map(initials, record["authors"])]


def _year_shift(rng: random.Random, record: dict) -> None:
    record["year"] += 1  # the print year of an online-first paper
    record["doi"] = None


def _abbreviate_journal(rng: random.Random, record: dict) -> None:
    record["journal"] = " ".join(word[:4] for word in record["journal"].split())


DISTORTIONS: tuple[Callable[[random.Random, dict], None], ...] = (
    _typo, _case_punctuation, _drop_doi, _author_format, _year_shift, _abbreviate_journal,
)  # fmt: skip


def generate(total: int, seed: int) -> pd.DataFrame:
    """``total`` records: about 72% originals, 25% planted duplicates, 3% look-alikes."""
    rng = random.Random(seed)
    corpus = Corpus(rng)
    records: list[dict] = []
    works = 0
    while len(records) < total:
        original = corpus.work(works)
        works += 1
        records.append(original)
        roll = rng.random()
        if roll < 0.3:
            for _ in range(rng.choice((1, 1, 2))):
                copy = dict(original, source=rng.choice(SOURCES))
                for distortion in rng.sample(DISTORTIONS, rng.randint(1, 3)):
                    distortion(rng, copy)
                records.append(copy)
        elif roll < 0.32:
            erratum = {"title": "Erratum: " + original["title"], "item_type": "erratum"}
            records.append({**original, **erratum, "work": works, "doi": None, "pages": "1"})
            works += 1
        elif roll < 0.335:
            records.append({**original, "work": works, "year": original["year"] + 3, "doi": None})
            works += 1
        elif roll < 0.34:
            sequel = {"title": original["title"] + ": part 2", "pages": "1-9", "doi": None}
            records.append({**original, **sequel, "work": works})
            works += 1
    frame = pd.DataFrame(records[:total]).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    frame.insert(0, "record_id", [f"r{i:06d}" for i in range(len(frame))])
    return frame


def _pairs(groups: Counter) -> int:
    return sum(n * (n - 1) // 2 for n in groups.values())


def pairwise_scores(truth: pd.Series, predicted: pd.Series) -> tuple[float, float]:
    """Pairwise precision and recall of a clustering against true groups."""
    both = _pairs(Counter(zip(truth, predicted)))
    found, real = _pairs(Counter(predicted)), _pairs(Counter(truth))
    return both / found if found else 1.0, both / real if real else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    frame = generate(args.records, args.seed)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    result = cluster_records(frame)
    seconds = time.perf_counter() - started
    precision, recall = pairwise_scores(frame["work"], result.cluster_id)
    planted = len(frame) - frame["work"].nunique()
    print(f"records:            {len(frame):,} ({planted:,} planted duplicates)")
    print(f"generation:         {generated:.1f} s")
    print(f"cluster_records:    {seconds:.1f} s  ({len(frame) / seconds:,.0f} records/s)")
    print(f"clusters:           {result.cluster_id.nunique():,}  links: {len(result.pairs):,}")
    print(f"pairwise precision: {precision:.4f}")
    print(f"pairwise recall:    {recall:.4f}")


if __name__ == "__main__":
    main()
