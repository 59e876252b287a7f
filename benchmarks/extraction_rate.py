"""Abstracts per second of the generic extraction of whichever hysem is first on the path.

``benchmarks/pico_tagging.py`` runs it with a checkout of the previous release first on
``PYTHONPATH``, so that release's own code is timed in the same benchmark run as this one.
It reads documents as JSON (``[{"id": ..., "text": ...}]``), extracts every field of the
``generic`` protocol with the default embedded backend (no cache, two documents at a time,
the model loaded before the clock starts) and prints ``{"rate": abstracts per second}``.

    python benchmarks/extraction_rate.py DOCUMENTS.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from hysem_assets.extraction.documents import Document, extract_documents_sync

try:
    from hysem_assets.extraction.backends import build_backend
    from hysem_assets.settings.protocols import load_protocol
except ImportError:  # the layout of releases before the span tagger
    from hysem_assets.llm.registry import build_backend
    from hysem_assets.protocols import load_protocol


def main() -> None:
    documents = [Document(d["id"], d["text"]) for d in json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))]
    protocol = load_protocol("generic")
    backend = build_backend({"backend": "extractive", "cache": False}, protocol=protocol)
    fields = protocol.extraction_fields()
    extract_documents_sync(documents[:2], fields, backend)
    started = time.monotonic()
    extract_documents_sync(documents, fields, backend, concurrency=2)
    print(json.dumps({"rate": len(documents) / (time.monotonic() - started)}))


if __name__ == "__main__":
    main()
