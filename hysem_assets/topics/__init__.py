"""Topics of a corpus: LDA models chosen by c_v coherence, as tables and an intertopic map.

``build_topics`` preprocesses documents (tokens, lemmas, phrases, filtered dictionaries),
grid-searches scikit-learn LDA models in a process pool and keeps the most coherent;
``update_topics`` does so on a re-run only when the corpus moved, else places the new
works in the kept model; ``write_intertopic_view`` draws the winner as an interactive page and a PNG.
"""

from hysem_assets.topics.config import TopicSettings, TopicSettingsError, load_topic_settings
from hysem_assets.topics.grid import TopicModelError
from hysem_assets.topics.incremental import TopicsRun, TopicsState, read_state, update_topics, write_state
from hysem_assets.topics.labels import TopicLabeller, label_from_top_words
from hysem_assets.topics.model import STATUSES, TopicModel, build_topics
from hysem_assets.topics.view import IntertopicView, write_intertopic_view

__all__ = [
    "STATUSES",
    "IntertopicView",
    "TopicLabeller",
    "TopicModel",
    "TopicModelError",
    "TopicSettings",
    "TopicSettingsError",
    "TopicsRun",
    "TopicsState",
    "build_topics",
    "label_from_top_words",
    "load_topic_settings",
    "read_state",
    "update_topics",
    "write_intertopic_view",
    "write_state",
]
