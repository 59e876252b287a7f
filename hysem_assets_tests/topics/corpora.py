"""Corpora for topic tests: planted themes with known words, and the bundled sample's abstracts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml

from hysem_assets_tests.paths import PROJECT_ROOT

THEMES = {
    "pollution": "ozone nitrogen dioxide particulate emission traffic smog sulphur monitor station concentration wildfire smoke".split(),
    "cardiology": "infarction arrhythmia hypertension stroke artery cardiac coronary pressure atrial ventricle angina ischaemia".split(),
    "learning": "forest boosting neural network classifier validation feature algorithm tree gradient ensemble regularisation".split(),
}


def planted_corpus(per_theme: int = 20, words: int = 40, noise: int = 6, seed: int = 1) -> pd.DataFrame:
    """Documents drawn from one theme's words each, with a few words of the other themes mixed in."""
    rng = np.random.default_rng(seed)
    every_word = [word for theme in THEMES.values() for word in theme]
    rows = []
    for index in range(per_theme * len(THEMES)):
        theme = list(THEMES)[index % len(THEMES)]
        text = " ".join([*rng.choice(THEMES[theme], words), *rng.choice(every_word, noise)])
        rows.append({"doc_id": f"{theme}-{index}", "text": text})
    return pd.DataFrame(rows)


def sample_abstracts() -> pd.DataFrame:
    """Title and abstract (sections joined) of every article the bundled sample's searches find (not those only
    citation searching reaches)."""
    articles = yaml.safe_load((PROJECT_ROOT / "hysem_assets" / "sample" / "articles.yaml").read_text(encoding="utf-8"))[
        "articles"
    ]
    articles = [article for article in articles if not article.get("cited_only")]

    def text(article: dict) -> str:
        abstract = article.get("abstract") or ""
        if isinstance(abstract, dict):
            abstract = " ".join(abstract.values())
        return f"{article['title']}. {abstract}"

    return pd.DataFrame({"doc_id": [a["id"] for a in articles], "text": [text(a) for a in articles]})
