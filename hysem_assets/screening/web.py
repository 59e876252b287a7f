"""The screening page: one record at a time, decided from the keyboard, served on loopback.

A small aiohttp application over a :class:`Screening` and the query's :class:`DecisionLog`.
Every decision is on disk before the page hears back, and the log is read again on each
request, so two pages (or two servers) on one query see each other's decisions and a killed
server loses nothing it acknowledged. The ranking is retrained whenever the log has grown.

Only the page itself may decide: requests must name the address and port they reached the
server on (no DNS rebinding, no Host naming loopback on another interface), come from no
other origin, and post JSON or a PDF as the bare body (which a foreign page cannot send without
asking first, unlike a form upload). Served beyond loopback, the page has no other guard than
a random token, printed in its URL at start: a request must carry it, in the URL or in the
cookie the first tokened page load sets.

    GET  /                       the page
    GET  /api/state?reviewer=R   progress, the stopping rule's estimate, R's next record, the
                                 conflicts and the reviewers' agreement (Cohen's kappa)
    POST /api/decide             {"record_id", "action": "included" | "maybe" | "excluded",
                                  "reason", "note", "reviewer", "resolution": bool}
    POST /api/undo               {"reviewer"}: takes back R's latest decision still standing
    POST /api/attach?record_id=W&reviewer=R
                                 the PDF as the body (application/pdf), its file name in
                                 X-Filename (URL-encoded): attaches it to the record W

One server screens one stage: title and abstract, or full text (the works that went on from
title and abstract whose full text is in hand, shown beside the record).
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import signal
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import pandas as pd
from aiohttp import web

from hysem_assets.library.work import strings
from hysem_assets.screening.agreement import stage_agreement
from hysem_assets.screening.decisions import (
    DEFAULT_REVIEWER,
    TITLE_ABSTRACT,
    Decision,
    DecisionLog,
    DecisionsError,
    checked_reviewer,
    goes_on,
    last_decided,
)
from hysem_assets.screening.rules import STAGE_ACTIONS, StageRules
from hysem_assets.screening.session import Screening, Standing
from hysem_assets.sources.registry import label

ABSTRACT_CHARACTERS = 6000
FULLTEXT_CHARACTERS = 300_000
#: The conflicts the page lists at once (the oldest first); the rest follow as these are resolved.
CONFLICTS_SHOWN = 100
#: The pieces in which an attached PDF is read, so that one over the size cap is refused early.
PDF_CHUNK = 2**16


@dataclass(frozen=True)
class PdfAttaching:
    """How the page attaches a PDF the reviewer obtained to the record on screen: ``attach`` (record id,
    bytes, file name -> the line to show; a ``ValueError`` with the reason refuses it, nothing written),
    ``attached`` (record id -> the file name attached to it) and ``max_bytes``, the largest PDF taken."""

    attach: Callable[[str, bytes, str], str]
    attached: Callable[[], dict[str, str]]
    max_bytes: int

    def too_large(self, filename: str) -> str:
        """Why ``filename`` is refused before it is read whole."""
        return (
            f"{filename} is over the {self.max_bytes / 2**20:.1f} MB limit on PDFs (the profile's "
            "pdfs.max_megabytes); nothing was attached"
        )


class ScreeningPage:
    """The state behind the page: the records, the log, the standing computed from it, and the stage's
    rules; ``fulltexts`` (full text stage): cluster id -> parsed Markdown; ``attaching``: how a PDF is attached to
    a record (None: the page offers none)."""

    def __init__(
        self,
        screening: Screening,
        corpus: pd.DataFrame,
        decisions: DecisionLog,
        target: float,
        rules: StageRules,
        reviewer: str = DEFAULT_REVIEWER,
        fulltexts: dict[str, str] | None = None,
        attaching: PdfAttaching | None = None,
    ):
        self.screening, self.log, self.target, self.rules = screening, decisions, target, rules
        self.slug, self.stage, self.reviewer = rules.slug, rules.stage, checked_reviewer(reviewer)
        self.fulltexts, self.attaching = fulltexts or {}, attaching
        self.corpus = corpus.set_index(corpus["cluster_id"].astype(str))
        self._entries: list[Decision] = []
        self._standing: Standing | None = None
        self._lock = asyncio.Lock()

    async def standing(self) -> tuple[list[Decision], Standing]:
        """The log as it is on disk now and the standing it gives (recomputed only when it grew)."""
        async with self._lock:
            entries = await asyncio.to_thread(self.log.read)
            if self._standing is None or len(entries) != len(self._entries):
                self._standing = await asyncio.to_thread(self.screening.standing, entries, self.target)
                self._entries = entries
            return self._entries, self._standing

    def record(self, position: int, standing: Standing, attached: dict[str, str]) -> dict[str, Any]:
        record_id = self.screening.ids[position]
        row = self.corpus.loc[record_id]
        rank = int((standing.ranking.order == position).nonzero()[0][0]) + 1
        found = [label(source) for source in strings(row.get("sources"))]
        return {
            "id": record_id,
            "title": _text(row.get("title")) or "(no title)",
            "abstract": _text(row.get("abstract"))[:ABSTRACT_CHARACTERS],
            "year": None if pd.isna(row.get("year")) else int(row["year"]),
            "journal": _text(row.get("journal")),
            "doi": _text(row.get("doi")),
            "found": "found in " + ", ".join(found) if found else "",
            "authors": _authors(strings(row.get("authors"))),
            "rank": rank,
            "fulltext": self.fulltexts.get(record_id, "")[:FULLTEXT_CHARACTERS] or None,
            "pdf": attached.get(record_id),
        }

    def pool(self, standing: Standing) -> list[str]:
        """The works this stage screens: every work, or at full text those that went on from title and
        abstract and whose full text is in hand."""
        if self.stage == TITLE_ABSTRACT:
            return self.screening.ids
        return [r for r in self.screening.ids if r in self.fulltexts and _went_on(standing, r)]

    async def state(self, reviewer: object = None, message: str = "") -> dict[str, Any]:
        name = self.reviewer if reviewer is None else checked_reviewer(reviewer)
        entries, standing = await self.standing()
        attached, unknown = await self.attached()
        pool = self.pool(standing)
        resolved = standing.resolved(self.stage)
        decided = [resolved[record].action for record in pool if record in resolved]
        upcoming = self.screening.next_for(standing, name, self.stage, None if self.stage == TITLE_ABSTRACT else pool)
        votes = standing.votes[self.stage]
        conflicts = [(record, found) for record, found in votes.conflicts.items() if record in self.screening.position]
        agreement = stage_agreement(votes)
        criteria = self.screening.criteria
        return {
            "query": self.slug,
            "stage": self.stage,
            "reviewer": name,
            "actions": list(STAGE_ACTIONS[self.stage]),
            "total": len(pool),
            "decided": len(decided),
            **{action: decided.count(action) for action in ("included", "maybe", "excluded")},
            "ranked_by": standing.ranking.ranked_by,
            "estimate": standing.estimate.as_dict() if self.stage == TITLE_ABSTRACT else None,
            "record": None if upcoming is None else self.record(upcoming, standing, attached),
            "can_attach": self.attaching is not None,
            "reasons": list(self.rules.reasons),
            "key_terms": criteria.key_terms,
            "note": criteria.note,
            "can_undo": last_decided(entries, name, self.stage) is not None,
            "conflicts": [
                {"id": record, "title": _text(self.corpus.loc[record].get("title")), "votes": [_vote(v) for v in found]}
                for record, found in conflicts[:CONFLICTS_SHOWN]
            ],
            "conflict_count": len(conflicts),
            "agreement": None if agreement is None else agreement.as_dict(),
            "message": message or unknown,
        }

    async def decide(self, payload: dict[str, Any]) -> dict[str, Any]:
        decision = self.rules.decision(
            payload.get("record_id"),
            payload.get("action"),
            reason=payload.get("reason"),
            note=payload.get("note"),
            reviewer=payload.get("reviewer", self.reviewer),
            resolution=payload.get("resolution") is True,
        )
        await asyncio.to_thread(self.log.append, [decision])
        done = "resolved as " if decision.resolution else ""
        return await self.state(decision.reviewer, f"{done}{decision.action} {decision.record_id}")

    async def attached(self) -> tuple[dict[str, str], str]:
        """Record id -> the PDF attached to it, and why that is unknown when the register cannot be read
        (screening goes on meanwhile)."""
        if self.attaching is None:
            return {}, ""
        try:
            return await asyncio.to_thread(self.attaching.attached), ""
        except ValueError as exc:
            return {}, str(exc)

    async def attach(self, record_id: str, data: bytes, filename: str, reviewer: object) -> dict[str, Any]:
        """Attach the PDF ``data`` to ``record_id``; the state with the line saying so (refused: ValueError)."""
        name = self.reviewer if reviewer is None else checked_reviewer(reviewer)
        message = await asyncio.to_thread(self.attaching.attach, record_id, data, filename)
        return await self.state(name, message)

    async def undo(self, payload: dict[str, Any]) -> dict[str, Any]:
        name = checked_reviewer(payload.get("reviewer", self.reviewer))
        record_id = await asyncio.to_thread(self.log.undo_latest, name, self.stage)
        return await self.state(name, "nothing to undo" if record_id is None else f"undid {record_id}")


async def _body_within(request: web.Request, limit: int) -> bytes | None:
    """The request's body, or None once it is known to exceed ``limit`` bytes (from its length, else as it
    streams in): an oversized file is never held whole."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = bytearray()
    async for chunk in request.content.iter_chunked(PDF_CHUNK):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def _went_on(standing: Standing, record: str) -> bool:
    decision = standing.decisions.get(record)
    return decision is not None and goes_on(decision)


def _vote(decision: Decision) -> dict[str, Any]:
    return {
        "reviewer": decision.reviewer,
        "action": decision.action,
        "reason": decision.reason,
        "note": decision.note,
    }


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _authors(names: list[str]) -> str:
    return "; ".join(names[:3]) + (" et al." if len(names) > 3 else "")


#: Path -> the content type a post to it must have, and the refusal of any other ("": every other path).
POSTED = {
    "/api/attach": ("application/pdf", "PDFs are posted as application/pdf"),
    "": ("application/json", "decisions are posted as JSON"),
}
#: The names a request reaching a loopback address may give as its host.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::")


def is_loopback(host: str) -> bool:
    """Whether a server started for ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any interface


def _address(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    address = ipaddress.ip_address(ip.split("%", 1)[0])
    return getattr(address, "ipv4_mapped", None) or address


def _named(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def host_names(local_ip: str, port: int, started: str) -> set[str]:
    """The ``Host`` values a request that reached ``local_ip``:``port`` may send: that address, loopback's
    names when it is loopback, and the host the server was started for unless that is a wildcard."""
    address = _address(local_ip)
    names = set(LOOPBACK_NAMES) if address.is_loopback else {_named(str(address))}
    if started not in _WILDCARDS:
        names.add(_named(started.strip("[]")))
    return {f"{name}:{port}" for name in names} | (names if port == 80 else set())


def screening_app(page: ScreeningPage, started: str, token: str | None = None) -> web.Application:
    """The page's routes; requests not from the page itself (see the module) are refused. ``started``:
    the host the server was started for; ``token``: what every request must carry (None on loopback)."""
    html = files("hysem_assets.screening").joinpath("page.html").read_text(encoding="utf-8")

    @web.middleware
    async def same_origin(request: web.Request, handler):
        local_ip, port = request.transport.get_extra_info("sockname")[:2]
        hosts = host_names(local_ip, port, started)
        if request.host not in hosts:
            reason = f"this server answers to {' or '.join(sorted(hosts))} on this address, not to {request.host!r}"
            return web.json_response({"error": reason}, status=421)
        origin = request.headers.get("Origin")
        if origin is not None and origin.split("//", 1)[-1] not in hosts:
            return web.json_response({"error": "requests from other sites are refused"}, status=403)
        cookie = f"hysem_screen_{port}"
        given = request.query.get("token") or request.cookies.get(cookie) or ""
        if token is not None and not secrets.compare_digest(given.encode(), token.encode()):
            reason = "this page is served beyond this machine: open it with the ?token= URL `hysem screen` printed"
            return web.json_response({"error": reason}, status=403)
        posted, said = POSTED.get(request.path, POSTED[""])
        if request.method == "POST" and request.content_type != posted:
            return web.json_response({"error": said}, status=415)
        response = await handler(request)
        if token is not None and "token" in request.query:
            response.set_cookie(cookie, token, path="/", httponly=True, samesite="Strict")
        return response

    async def index(_: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    async def answer(work) -> web.Response:
        try:
            return web.json_response(await work())
        except DecisionsError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        except OSError as exc:
            message = f"the decision log could not be written ({exc.strerror or exc}); this decision was not saved"
            return web.json_response({"error": message}, status=503)

    async def state(request: web.Request) -> web.Response:
        return await answer(lambda: page.state(request.query.get("reviewer")))

    def posting(work):
        async def handle(request: web.Request) -> web.Response:
            try:
                payload = await request.json()
            except ValueError:
                return web.json_response({"error": "the request body is not JSON"}, status=400)
            return await answer(lambda: work(payload if isinstance(payload, dict) else {}))

        return handle

    async def attach(request: web.Request) -> web.Response:
        if page.attaching is None:
            return web.json_response({"error": "this page attaches no PDFs; use `hysem pdf attach`"}, status=404)
        filename = urllib.parse.unquote(request.headers.get("X-Filename", "")).strip() or "the file"
        data = await _body_within(request, page.attaching.max_bytes)
        if data is None:
            return web.json_response({"error": page.attaching.too_large(filename)}, status=413)
        try:
            record_id, reviewer = request.query.get("record_id", ""), request.query.get("reviewer")
            return web.json_response(await page.attach(record_id, data, filename, reviewer))
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=400)
        except OSError as exc:
            message = f"{filename} could not be kept ({exc.strerror or exc}); nothing was attached"
            return web.json_response({"error": message}, status=503)

    app = web.Application(middlewares=[same_origin])
    app.add_routes(
        [
            web.get("/", index),
            web.get("/api/state", state),
            web.post("/api/decide", posting(page.decide)),
            web.post("/api/undo", posting(page.undo)),
            web.post("/api/attach", attach),
        ]
    )
    return app


async def serve(page: ScreeningPage, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve the page until cancelled or sent SIGTERM (even by a parent that ignores or blocks it:
    a server must stop when told); ``ready`` gets its URL once it listens, with the token the
    page needs when ``host`` is not loopback."""
    stopped = asyncio.Event()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    token = None if is_loopback(host) else secrets.token_urlsafe(24)
    runner = web.AppRunner(screening_app(page, host, token))
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound_host, bound_port = runner.addresses[0][:2]
        shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bound_host, bound_host) if host in _WILDCARDS else host
        ready(f"http://{_named(shown.strip('[]'))}:{bound_port}/" + (f"?token={token}" if token else ""))
        await stopped.wait()
    finally:
        await runner.cleanup()
