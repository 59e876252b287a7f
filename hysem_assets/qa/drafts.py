"""Structured answers and verdicts, their JSON schemas, and how they read as text.

Generator and auditor exchange these objects whatever runs them (a model behind an HTTP
server or the embedded rules), so the revise loop, the citation audit and the preference
log never depend on which one answered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hysem_assets.qa.sources import ABSTRACT_EVIDENCE, METADATA_KEYS, ContextChunk

_METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "PDF_DocIndex": {"type": "string"},
        "PDF_ChunkIndex": {"type": ["integer", "null"]},
        "DOI": {"type": ["string", "null"]},
        "ZoteroKey": {"type": ["string", "null"]},
        "InTextCitation": {"type": ["string", "null"]},
        "FullCitation": {"type": ["string", "null"]},
        "Evidence": {"type": ["string", "null"]},
    },
    "required": list(METADATA_KEYS),
    "additionalProperties": False,
}
DRAFT_SCHEMA: dict[str, Any] = {
    "title": "CitedAnswer",
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"text": {"type": "string"}, "citations": {"type": "array", "items": _METADATA_SCHEMA}},
                "required": ["text", "citations"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["claims"],
    "additionalProperties": False,
}
VERDICT_SCHEMA: dict[str, Any] = {
    "title": "AuditVerdict",
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "integer"},
                    "supported": {"type": "boolean"},
                    "logical": {"type": "boolean"},
                    "citations_ok": {"type": "boolean"},
                    "note": {"type": "string"},
                },
                "required": ["claim", "supported", "logical", "citations_ok", "note"],
                "additionalProperties": False,
            },
        },
        "feedback": {"type": "string"},
    },
    "required": ["approved", "findings", "feedback"],
    "additionalProperties": False,
}


class MalformedOutput(ValueError):
    """A model's answer that does not have the asked-for structure."""


@dataclass(frozen=True)
class Claim:
    text: str
    citations: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Draft:
    claims: tuple[Claim, ...]

    def as_json(self) -> dict[str, Any]:
        return {"claims": [{"text": c.text, "citations": list(c.citations)} for c in self.claims]}


@dataclass(frozen=True)
class Finding:
    """The auditor's view of claim number ``claim`` (0-based)."""

    claim: int
    supported: bool
    logical: bool
    citations_ok: bool
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.supported and self.logical and self.citations_ok


@dataclass(frozen=True)
class Verdict:
    approved: bool
    findings: tuple[Finding, ...] = ()
    feedback: str = ""
    model: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def failed_claims(self) -> set[int]:
        return {f.claim for f in self.findings if not f.passed}


@dataclass(frozen=True)
class Round:
    number: int
    draft: Draft
    verdict: Verdict


def draft_from_json(value: Any) -> Draft:
    if not isinstance(value, Mapping) or not isinstance(value.get("claims"), list):
        raise MalformedOutput(f"expected an object with a list of claims, got {json.dumps(value)[:200]}")
    claims = []
    for item in value["claims"]:
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
            raise MalformedOutput(f"a claim without text: {json.dumps(item)[:200]}")
        citations = [dict(c) for c in item.get("citations") or [] if isinstance(c, Mapping)]
        claims.append(Claim(item["text"].strip(), tuple(citations)))
    return Draft(tuple(claims))


def verdict_from_json(value: Any, model: str) -> Verdict:
    if not isinstance(value, Mapping) or not isinstance(value.get("approved"), bool):
        raise MalformedOutput(f"expected a verdict with 'approved', got {json.dumps(value)[:200]}")
    findings = tuple(
        Finding(
            int(f["claim"]), bool(f["supported"]), bool(f["logical"]), bool(f["citations_ok"]), str(f.get("note", ""))
        )
        for f in value.get("findings") or []
    )
    return Verdict(value["approved"], findings, str(value.get("feedback", "")), model)


def source_block(context: Sequence[ContextChunk]) -> str:
    """The context as the generator and auditor read it: each source's metadata object, then its text."""
    return "\n\n".join(
        f"SOURCE {json.dumps(chunk.metadata.as_dict(), ensure_ascii=False)}\n{chunk.text}" for chunk in context
    )


def render_prompt(question: str, context: Sequence[ContextChunk]) -> str:
    """The generation prompt: also the ``prompt`` of every preference pair made from it."""
    return f"Question: {question}\n\nSources:\n{source_block(context)}"


def cite(citation: Mapping[str, Any]) -> str:
    """A citation as an answer shows it: the in-text citation, marked when only the abstract stood behind it."""
    shown = str(citation.get("InTextCitation") or citation.get("DOI") or "?")
    return f"{shown} [abstract]" if citation.get("Evidence") == ABSTRACT_EVIDENCE else shown


def render_claims(draft: Draft) -> str:
    """Markdown of an answer: one bullet per claim with its in-text citations."""
    lines = []
    for claim in draft.claims:
        cites = "; ".join(dict.fromkeys(cite(c) for c in claim.citations))
        lines.append(f"- {claim.text} {cites}".rstrip())
    return "\n".join(lines)
