"""Where steps run: GPU requests on Kubernetes, and one writer at a time on the graph store.

The ``dagster-k8s/config`` tags of the GPU assets live in deploy/k8s/gpu-step-tags.yaml
(only dagster-k8s's executor reads them). Steps that open the graph store carry a tag
that the executor limits to one at a time, because the embedded database allows one
process at a time.
"""

from functools import cache

import yaml

from hysem_assets.settings.environment import BUNDLED

STEP_TAGS_FILE = BUNDLED / "k8s" / "gpu-step-tags.yaml"
GRAPH_STORE_TAG = {"hysem/graph_store": "open"}
#: Executor config: steps tagged GRAPH_STORE_TAG never overlap.
TAG_CONCURRENCY_LIMITS = [{"key": "hysem/graph_store", "value": "open", "limit": 1}]


@cache
def _step_tags() -> dict[str, dict]:
    return yaml.safe_load(STEP_TAGS_FILE.read_text(encoding="utf-8"))["assets"]


def gpu_step_tags(asset: str) -> dict:
    """``dagster-k8s/config`` for one GPU asset's step (GPU, CPU and memory requests)."""
    return _step_tags()[asset]
