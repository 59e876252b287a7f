"""The one error every source parser raises for a response it cannot read, and a probe's for a reply in no API's format."""

from __future__ import annotations

import json
from typing import Any

from hysem_assets.settings.redaction import redact


class SourceFormatError(ValueError):
    """A response body that cannot be parsed into records.

    The message names the source, the request or page (``where``) and what the
    user can do about it, because these errors surface in Dagster logs far away
    from the HTTP call that caused them.
    """

    def __init__(self, source: str, where: str, problem: str, hint: str) -> None:
        self.source = source
        self.where = where
        self.problem = redact(problem)  # it may quote the body, and a body may echo the request
        self.hint = hint
        super().__init__(f"{source} response to {where}: {self.problem}; {hint}")

    @classmethod
    def unreadable(cls, source: str, where: str, body: bytes, expected: str, detail: str) -> SourceFormatError:
        """Explain why ``body`` is not ``expected`` (XML, JSON) in the likeliest terms.

        Empty bodies, HTML error pages from proxies or wrong base URLs, and
        truncated transfers each call for a different remedy, so tell them apart.
        """
        head = body.lstrip()[:200].lower()
        if not head:
            return cls(source, where, "the body is empty", "retry the request")
        if head.startswith(b"<!doctype html") or b"<html" in head:
            return cls(
                source,
                where,
                f"the server returned an HTML page instead of {expected}",
                "check the base URL, the API key and any proxy in between",
            )
        snippet = redact(body.lstrip()[:4096].decode("utf-8", errors="replace"))[:60]  # masked before it is cut
        return cls(
            source,
            where,
            f"the body is not valid {expected} ({detail}); it starts with {snippet!r}",
            "the transfer may have been cut off; retry the request",
        )


class UnexpectedReply(ValueError):
    """A service answered a probe, but not in its API's format (a wrong base URL, a proxy's page)."""


def reply_json(body: bytes) -> Any:
    """A probe's reply as JSON, or :class:`UnexpectedReply`."""
    try:
        return json.loads(body)
    except ValueError:
        raise UnexpectedReply("answered, but not with JSON") from None
