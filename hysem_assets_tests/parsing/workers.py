"""Per-document functions for pool tests; module-level so spawned workers can import them."""

from __future__ import annotations

import os
from pathlib import Path

from hysem_assets.parsing import ParsedDocument, ParseOptions, parse_pdf


def crash_on_marked(path: Path, options: ParseOptions) -> ParsedDocument:
    """Parses normally, except that a file named ``crash*`` kills the worker outright."""
    if path.name.startswith("crash"):
        os._exit(70)
    return parse_pdf(path, options)


def report_pinning(path: Path, options: ParseOptions) -> ParsedDocument:
    """Reports what the worker sees: its visible GPUs and the device it was told to use."""
    return ParsedDocument(path=str(path), markdown=f"{os.environ.get('CUDA_VISIBLE_DEVICES')}|{options.device}")
