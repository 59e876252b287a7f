"""No model downloads at run time: models come from ``artifacts_path`` or not at all.

Docling already refuses to download when ``artifacts_path`` is set (a missing model is an
error naming the folder); the Hugging Face switches make any other library call fail the
same way. They are read when ``huggingface_hub`` is imported, so worker processes set them
first thing.
"""

from __future__ import annotations

import os

DOWNLOAD_HINT = "download the models once with `docling-tools models download -o DIR` and set artifacts_path to DIR"


def go_offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
