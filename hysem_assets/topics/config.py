"""The topic model's configuration: grid search space, preprocessing and training, from ``config/topics.yaml``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hysem_assets.settings.environment import config_dir


class TopicSettingsError(ValueError):
    """``config/topics.yaml`` is missing a value or holds one of the wrong shape."""


AtLeastTwo = Annotated[int, Field(ge=2)]
Positive = Annotated[int, Field(ge=1)]
PositiveFloat = Annotated[float, Field(gt=0)]
Share = Annotated[float, Field(gt=0, le=1)]


class SearchSpace(BaseModel):
    """Every combination of these lists is one candidate model; the best mean c_v coherence wins."""

    model_config = ConfigDict(extra="forbid")

    n_topics: list[AtLeastTwo] = Field([4, 6, 8], min_length=1)
    #: Passes over the corpus (scikit-learn's ``max_iter``).
    passes: list[Positive] = Field([10], min_length=1)
    #: E-step iterations per document and pass (scikit-learn's ``max_doc_update_iter``).
    iterations: list[Positive] = Field([100], min_length=1)
    #: gensim ``Phrases`` scores above which two tokens become a bigram / a bigram and a token a trigram.
    bigram_threshold: list[PositiveFloat] = Field([10.0], min_length=1)
    trigram_threshold: list[PositiveFloat] = Field([10.0], min_length=1)
    #: ``Dictionary.filter_extremes``: keep words in at least ``no_below`` documents ...
    no_below: list[Positive] = Field([2], min_length=1)
    #: ... and in at most this share of them.
    no_above: list[Share] = Field([0.5], min_length=1)


class Preprocessing(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: simplemma language code for lemmatization.
    language: str = "en"
    min_token_length: int = Field(3, ge=1)
    #: gensim ``Phrases(min_count=...)``: a pair must occur this often to become a phrase.
    phrase_min_count: int = Field(3, ge=1)
    #: Added to the English and scholarly-boilerplate stopwords.
    extra_stopwords: list[str] = Field(default_factory=list)


class Training(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Words per topic shown in the topic table and scored by c_v.
    top_n: int = Field(10, ge=2)
    random_state: int = 0
    learning_method: str = Field("batch", pattern="^(batch|online)$")
    #: A re-run refits the grid only when more than this share of the works the model was fitted on
    #: are new, changed or dropped; otherwise the fitted model places the new and changed works in its
    #: topics, which keep their numbers and labels. 0: refit every run.
    refit_share: float = Field(0.1, ge=0, le=1)


class TopicSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grid: SearchSpace = Field(default_factory=SearchSpace)
    preprocessing: Preprocessing = Field(default_factory=Preprocessing)
    training: Training = Field(default_factory=Training)


def load_topic_settings(path: Path | None = None) -> TopicSettings:
    """Read ``topics.yaml`` (default: in the config directory); errors name the file and the key."""
    path = path or config_dir() / "topics.yaml"
    if not path.is_file():
        raise TopicSettingsError(f"Topic settings {path} do not exist; copy config/topics.yaml from the project.")
    try:
        return TopicSettings.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except (yaml.YAMLError, ValidationError) as exc:
        raise TopicSettingsError(f"Topic settings {path} are invalid: {exc}") from exc
