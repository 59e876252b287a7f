"""Which parses a re-run can skip: a PDF's row is kept by its bytes and the settings that shape it.

The key holds the PDF's SHA-256, every option that changes the output (pipeline, model
artifacts, OCR, layout corrections, page ranges, and Docling's document timeout, which can
cut a document short), the parser's name with Docling's version, and :data:`PARSE_CODE`.
Devices, workers and threads change only the speed, so they are not in it. A JATS XML full text
(no PDF, no Docling) is kept by its own SHA-256 and the JATS parser's name instead, whatever the
Docling options.

What is kept depends on how the document ended:

- parsed (``native``, ``ocr``): kept whatever the limits, which guard cost, not content;
- set aside (``too_large``, ``resource_limit``): kept under a key that adds the limits, so
  the document is tried again only when a limit changes, not to meet the same limit again
  after minutes of work;
- ``failed``: not kept. Failures range from a damaged file, which fails fast, to a worker
  that crashed, which may pass next time, so every run tries again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict

from hysem_assets.parsing.jats import PARSER as JATS_PARSER
from hysem_assets.parsing.limits import RESOURCE_LIMIT, TOO_LARGE, WorkerLimits
from hysem_assets.parsing.options import ParseOptions
from hysem_assets.parsing.result import ParsedDocument
from hysem_assets.stores.work_cache import CachedRun, Row, WorkCache, content_key

#: Change when hysem's parsing code changes what it writes, so rows of the older code are parsed again.
PARSE_CODE = "parse-2"
SET_ASIDE = (TOO_LARGE, RESOURCE_LIMIT)
#: Options that change how fast a document is parsed, or when it is set aside, but not what a parse gives.
_NOT_OUTPUT = ("device", "num_threads", "max_pages", "max_page_content_mb")


def parse_key(sha256: str, options: ParseOptions) -> str:
    settings = {name: value for name, value in asdict(options).items() if name not in _NOT_OUTPUT}
    return content_key("parsed_docs", PARSE_CODE, sha256, options.parser, settings)


def jats_key(sha256: str) -> str:
    """The key of a JATS full text's row: its bytes and the JATS parser, not Docling's options."""
    return content_key("parsed_docs", PARSE_CODE, "jats", sha256, JATS_PARSER)


def set_aside_key(key: str, options: ParseOptions, limits: WorkerLimits) -> str:
    return content_key(key, options.max_pages, options.max_page_content_mb, limits.memory_mb, limits.seconds)


def reuse_or_parse(
    cache: WorkCache,
    partition: str,
    saved: Sequence[tuple[str, str, str]],
    options: ParseOptions,
    limits: WorkerLimits,
    parse: Callable[[list[str]], list[ParsedDocument]],
    jats: Collection[str] = (),
) -> CachedRun:
    """The parsed rows of ``saved`` (work id, path, file SHA-256), parsing only what the cache lacks.

    ``parse`` takes the paths to parse and returns their documents in order; ``jats`` names the
    paths that are JATS full texts, not PDFs. A row read from the cache takes the path of this
    run's file.
    """
    keys = [jats_key(sha256) if path in jats else parse_key(sha256, options) for _, path, sha256 in saved]
    aside = [set_aside_key(key, options, limits) for key in keys]

    def compute(positions: list[int]) -> list[Row]:
        return [d.to_record() for d in parse([saved[p][1] for p in positions])]

    def store_under(position: int, row: Row) -> str | None:
        if row["status"] in SET_ASIDE:
            return aside[position]
        return keys[position] if row["error"] is None else None

    run = cache.reuse_or_compute(
        partition, [work for work, _, _ in saved], list(zip(keys, aside)), compute, store_under
    )
    for row, (_, path, _) in zip(run.rows, saved, strict=True):
        row["path"] = path
    return run
