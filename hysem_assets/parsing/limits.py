"""What one document may cost before it is set aside, so one bad download cannot take the machine.

A PDF of a few kilobytes can inflate to tens of megabytes of page content, and Docling's
parser turns each megabyte of text operators into about a gigabyte of memory. Limits act
at two moments. Before parsing, from the file alone: the page count and the decompressed
content of each page (streamed through zlib and stopped at the limit, never inflated
whole); a document over either gets status ``too_large``. While parsing, by the OS and the
pool: memory per worker (``RLIMIT_DATA``, which counts what a process allocates rather than
the address space it reserves, so it stays meaningful next to torch's large mappings) and
wall time; a document over either gets status ``resource_limit`` and its worker is replaced.
"""

from __future__ import annotations

import resource
import zlib
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject

TOO_LARGE = "too_large"
RESOURCE_LIMIT = "resource_limit"
#: How a row says that an allocation failed; the pool adds the worker's limit to it.
OUT_OF_MEMORY = "ran out of memory while parsing"
MB = 2**20
_FLATE = ("/FlateDecode", "/Fl")
#: Messages a parser gives when an allocation fails (C++ ``new``, C ``malloc``, Python).
_OUT_OF_MEMORY = ("bad_alloc", "MemoryError", "Cannot allocate memory", "out of memory")


@dataclass(frozen=True)
class WorkerLimits:
    """What the pool enforces on each worker process; None turns a limit off."""

    #: Memory a worker may allocate, in MB (its OS data limit).
    memory_mb: int | None = None
    #: Seconds one document may take, start to finish, before its worker is killed.
    seconds: float | None = None


class LimitExceeded(Exception):
    """A document over a limit; ``status`` is ``too_large`` or ``resource_limit``."""

    def __init__(self, status: str, reason: str, pages: int = 0) -> None:
        super().__init__(reason)
        self.status = status
        self.pages = pages


def cap_memory(megabytes: int | None) -> None:
    """Make allocations past ``megabytes`` fail in this process (Linux and macOS; a no-op elsewhere)."""
    if megabytes is None or not hasattr(resource, "RLIMIT_DATA"):
        return
    limit = megabytes * MB
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def out_of_memory(message: str) -> bool:
    """Whether an error message is an allocation failure (the worker's memory limit, or the machine's)."""
    return any(marker in message for marker in _OUT_OF_MEMORY)


def _inflated(stream: StreamObject, stop_at: int) -> int:
    """Bytes ``stream`` decodes to, counting no further than just past ``stop_at``."""
    filters = stream.get("/Filter")
    names = [str(f) for f in filters] if isinstance(filters, ArrayObject) else ([str(filters)] if filters else [])
    raw = stream._data
    if not names:
        return len(raw)
    if len(names) > 1 or names[0] not in _FLATE:
        return len(stream.get_data())  # rare filter chains; pypdf decodes them
    inflater, total, pending = zlib.decompressobj(), 0, raw
    try:
        while pending and total <= stop_at:
            total += len(inflater.decompress(pending, MB))
            pending = inflater.unconsumed_tail
    except zlib.error:
        pass  # a damaged stream: Docling reports it; its size so far is what counts here
    return total


def _streams(value: object) -> list[StreamObject]:
    value = value.get_object() if isinstance(value, IndirectObject) else value
    if isinstance(value, ArrayObject):
        return [s for item in value for s in _streams(item)]
    return [value] if isinstance(value, StreamObject) else []


def _page_content(page: DictionaryObject, stop_at: int) -> int:
    """Decompressed bytes of a page's content streams and of the form XObjects it draws."""
    total, seen, todo = 0, set(), [page]
    while todo and total <= stop_at:
        holder = todo.pop()
        for stream in _streams(holder.get("/Contents")) if holder is page else [holder]:
            total += _inflated(stream, stop_at - total)
        resources = holder.get("/Resources")
        resources = resources.get_object() if resources is not None else None
        xobjects = resources.get("/XObject") if isinstance(resources, DictionaryObject) else None
        xobjects = xobjects.get_object() if xobjects is not None else None
        for reference in (xobjects or {}).values():
            key = reference.idnum if isinstance(reference, IndirectObject) else id(reference)
            form = reference.get_object()
            if key not in seen and isinstance(form, StreamObject) and form.get("/Subtype") == "/Form":
                seen.add(key)
                todo.append(form)
    return total


def check_size(reader: PdfReader, max_pages: int | None, max_page_mb: float | None) -> None:
    """Raise ``LimitExceeded(too_large)`` for a document with too many pages or a page that inflates too far."""
    pages = len(reader.pages)
    if max_pages is not None and pages > max_pages:
        raise LimitExceeded(TOO_LARGE, f"too large: {pages:,} pages, over the limit of {max_pages:,}", pages)
    if max_page_mb is None:
        return
    stop_at = int(max_page_mb * MB)
    for number, page in enumerate(reader.pages, start=1):
        size = _page_content(page, stop_at)
        if size > stop_at:
            raise LimitExceeded(
                TOO_LARGE,
                f"too large: page {number}'s content inflates past {max_page_mb:g} MB "
                "(a decompression bomb, or a page no parser can hold in memory)",
                pages,
            )
