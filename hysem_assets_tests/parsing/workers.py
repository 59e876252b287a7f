"""Per-document functions for pool tests; module-level so spawned workers can import them."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.result import ParsedDocument


def crash_on_marked(path: Path, options: ParseOptions) -> ParsedDocument:
    """Parses normally, except that a file named ``crash*`` kills the worker outright."""
    from hysem_assets.parsing.parse import parse_pdf  # in the worker, after it is pinned

    if path.name.startswith("crash"):
        os._exit(70)
    return parse_pdf(path, options)


def report_pinning(path: Path, options: ParseOptions) -> ParsedDocument:
    """Reports what the worker sees: its visible GPUs, the device it was told to use, and
    whether Docling had been imported before it was pinned (it must not have been)."""
    early = "docling" in sys.modules
    return ParsedDocument(path=str(path), markdown=f"{os.environ.get('CUDA_VISIBLE_DEVICES')}|{options.device}|{early}")


def hang_on_marked(path: Path, options: ParseOptions) -> ParsedDocument:
    """Returns at once, except that a file named ``hang*`` never finishes (a parser stuck on a page)."""
    if path.name.startswith("hang"):
        time.sleep(3600)
    return ParsedDocument(path=str(path), markdown=f"pid {os.getpid()}", status="native")
