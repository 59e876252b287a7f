"""The screening page: one record at a time, decided from the keyboard, served on loopback.

A small aiohttp application over a :class:`Screening` and the query's :class:`DecisionLog`.
Every decision is on disk before the page hears back, and the log is read again on each
request, so two pages (or two servers) on one query see each other's decisions and a killed
server loses nothing it acknowledged. The ranking is retrained whenever the log has grown.

Only the page itself may decide: requests must name the address and port they reached the
server on (no DNS rebinding, no Host naming loopback on another interface), come from no
other origin, and post JSON (which a foreign page cannot send without asking first). Served
beyond loopback, the page has no other guard than a random token, printed in its URL at
start: a request must carry it, in the URL or in the cookie the first tokened page load sets.

    GET  /             the page
    GET  /api/state    progress, the stopping rule's estimate, the next record
    POST /api/decide   {"record_id", "action": "included" | "excluded", "reason"}
    POST /api/undo     takes back the latest decision still standing
"""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import signal
from collections.abc import Callable
from importlib.resources import files
from typing import Any

import pandas as pd
from aiohttp import web

from hysem_assets.library.work import strings
from hysem_assets.screening.decisions import Decision, DecisionLog, DecisionsError, last_decided
from hysem_assets.screening.session import Screening, Standing

ABSTRACT_CHARACTERS = 6000


class ScreeningPage:
    """The state behind the page: the records, the log, and the standing computed from it."""

    def __init__(self, slug: str, screening: Screening, corpus: pd.DataFrame, decisions: DecisionLog, target: float):
        self.slug, self.screening, self.log, self.target = slug, screening, decisions, target
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

    def record(self, position: int, standing: Standing) -> dict[str, Any]:
        record_id = self.screening.ids[position]
        row = self.corpus.loc[record_id]
        rank = int((standing.ranking.order == position).nonzero()[0][0]) + 1
        return {
            "id": record_id,
            "title": _text(row.get("title")) or "(no title)",
            "abstract": _text(row.get("abstract"))[:ABSTRACT_CHARACTERS],
            "year": None if pd.isna(row.get("year")) else int(row["year"]),
            "journal": _text(row.get("journal")),
            "doi": _text(row.get("doi")),
            "authors": _authors(strings(row.get("authors"))),
            "rank": rank,
        }

    async def state(self, message: str = "") -> dict[str, Any]:
        entries, standing = await self.standing()
        upcoming = self.screening.next_record(standing)
        criteria = self.screening.criteria
        return {
            "query": self.slug,
            "total": len(self.screening),
            "decided": len(standing.decisions),
            "included": standing.included,
            "excluded": standing.excluded,
            "ranked_by": standing.ranking.ranked_by,
            "estimate": standing.estimate.as_dict(),
            "record": None if upcoming is None else self.record(upcoming, standing),
            "reasons": criteria.reasons,
            "key_terms": criteria.key_terms,
            "note": criteria.note,
            "can_undo": last_decided(entries) is not None,
            "message": message,
        }

    async def decide(self, payload: dict[str, Any]) -> dict[str, Any]:
        record_id, action, reason = payload.get("record_id"), payload.get("action"), payload.get("reason")
        if not isinstance(record_id, str) or record_id not in self.screening.position:
            raise DecisionsError(f"record {record_id!r} is not a work of query {self.slug!r}; reload the page")
        if action not in ("included", "excluded"):
            raise DecisionsError(f"record {record_id!r}: decide 'included' or 'excluded', not {action!r}")
        if action == "excluded" and reason not in self.screening.criteria.reasons:
            raise DecisionsError(
                f"record {record_id!r}: exclude with one of the protocol's reasons "
                f"({', '.join(self.screening.criteria.reasons)}), not {reason!r}"
            )
        decision = Decision(record_id, action, reason if action == "excluded" else None)
        await asyncio.to_thread(self.log.append, [decision])
        return await self.state(f"{action} {record_id}")

    async def undo(self) -> dict[str, Any]:
        record_id = await asyncio.to_thread(self.log.undo_latest)
        return await self.state("nothing to undo" if record_id is None else f"undid {record_id}")


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _authors(names: list[str]) -> str:
    return "; ".join(names[:3]) + (" et al." if len(names) > 3 else "")


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
        if request.method == "POST" and request.content_type != "application/json":
            return web.json_response({"error": "decisions are posted as JSON"}, status=415)
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

    async def state(_: web.Request) -> web.Response:
        return await answer(page.state)

    async def decide(request: web.Request) -> web.Response:
        try:
            payload = await request.json()
        except ValueError:
            return web.json_response({"error": "the request body is not JSON"}, status=400)
        return await answer(lambda: page.decide(payload if isinstance(payload, dict) else {}))

    async def undo(_: web.Request) -> web.Response:
        return await answer(page.undo)

    app = web.Application(middlewares=[same_origin])
    app.add_routes(
        [
            web.get("/", index),
            web.get("/api/state", state),
            web.post("/api/decide", decide),
            web.post("/api/undo", undo),
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
