"""A Zotero Web API v3 look-alike on 127.0.0.1 (aiohttp, real HTTP) for pyzotero to talk to.

Shapes follow the real API: item objects as in the recorded ``items_doc.json`` (key, version,
library, links, meta, data), the multi-object write response (``successful``, ``success``,
``unchanged``, ``failed`` with code and message), Atom entries for ``content=bib|citation``
as in ``citation_doc.xml``, the ``/items/new`` templates, and the four-step file upload
(register the attachment, get an upload authorization with ``params=1``, POST the file to the
storage URL, register the upload). It keeps a log of every request for tests to assert on.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from aiohttp import web

from hysem_assets_tests.local_server import ThreadedServer

KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
BODY = web.RequestKey("body", object)
COMMON_FIELDS = {
    "itemType",
    "creators",
    "tags",
    "collections",
    "relations",
    "key",
    "version",
    "dateAdded",
    "dateModified",
    "deleted",
}
SHARED_FIELDS = {
    "title",
    "abstractNote",
    "date",
    "language",
    "shortTitle",
    "url",
    "accessDate",
    "archive",
    "archiveLocation",
    "libraryCatalog",
    "callNumber",
    "rights",
    "extra",
}
# Valid fields per item type (Zotero schema), beyond the ones every type has.
TYPE_FIELDS = {
    "journalArticle": {
        "publicationTitle",
        "volume",
        "issue",
        "pages",
        "series",
        "seriesTitle",
        "seriesText",
        "journalAbbreviation",
        "DOI",
        "ISSN",
    },
    "bookSection": {
        "bookTitle",
        "series",
        "seriesNumber",
        "volume",
        "numberOfVolumes",
        "edition",
        "place",
        "publisher",
        "pages",
        "ISBN",
    },
    "book": {
        "series",
        "seriesNumber",
        "volume",
        "numberOfVolumes",
        "edition",
        "place",
        "publisher",
        "numPages",
        "ISBN",
    },
    "conferencePaper": {
        "proceedingsTitle",
        "conferenceName",
        "place",
        "publisher",
        "volume",
        "pages",
        "series",
        "DOI",
        "ISBN",
    },
    "preprint": {"genre", "repository", "archiveID", "place", "series", "seriesNumber", "DOI", "citationKey"},
    "thesis": {"thesisType", "university", "place", "numPages"},
    "report": {"reportNumber", "reportType", "seriesTitle", "place", "institution", "pages"},
    "dataset": {"identifier", "type", "versionNumber", "repository", "place", "format", "size", "DOI", "citationKey"},
    "document": {"publisher"},
    "attachment": {"parentItem", "linkMode", "note", "contentType", "charset", "filename", "md5", "mtime", "path"},
}
ATTACHMENT_TEMPLATE = {
    "itemType": "attachment",
    "linkMode": "imported_file",
    "title": "",
    "accessDate": "",
    "note": "",
    "tags": [],
    "relations": {},
    "contentType": "",
    "charset": "",
    "filename": "",
    "md5": None,
    "mtime": None,
}


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


class ZoteroServer:
    """In-memory Zotero library behind the Web API v3 routes pyzotero uses."""

    def __init__(self, api_key: str, library_id: int = 475425, library_type: str = "users"):
        self.api_key = api_key
        self.library_id = library_id
        self.library_type = library_type
        self.version = 0
        self.items: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.requests: list[Recorded] = []
        #: Per-object rejection: return (HTTP code, message) to fail that object in a write.
        self.reject: Callable[[dict[str, Any]], tuple[int, str] | None] | None = None
        #: (method, path regex, status): the next matching request fails with that status and a
        #: body that echoes the request headers, as a careless error page would.
        self.failures: list[tuple[str, str, int]] = []
        #: Seconds the storage upload takes, and the most uploads seen in flight at once.
        self.upload_delay = 0.0
        self.max_parallel_uploads = 0
        self._uploads_in_flight = 0
        self._keys = random.Random(20240601)
        self._uploads: dict[str, dict[str, Any]] = {}
        self._upload_counter = itertools.count(1)
        self._write_tokens: set[str] = set()
        self._server: ThreadedServer | None = None

    # lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> ZoteroServer:
        self._server = ThreadedServer(self._app())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return self._server.url

    @property
    def prefix(self) -> str:
        return f"/{self.library_type}/{self.library_id}"

    def posts_to_items(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.path == f"{self.prefix}/items"]

    # routing -------------------------------------------------------------------------------
    def _app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        lib = r"/{kind:users|groups}/{library:\d+}"
        app.router.add_get("/items/new", self._template)
        app.router.add_get(lib + "/items", self._list)
        app.router.add_get(lib + "/items/top", self._list)
        app.router.add_post(lib + "/items", self._create)
        app.router.add_get(lib + "/items/{key}", self._item)
        app.router.add_get(lib + "/items/{key}/children", self._children)
        app.router.add_post(lib + "/items/{key}/file", self._file)
        app.router.add_post("/storage/upload", self._storage)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler):
        if request.path.startswith("/storage"):  # multipart: the storage handler records it
            return await handler(request)
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if request.content_type == "application/json" else dict(await request.post())
        request[BODY] = body
        self.requests.append(Recorded(request.method, request.path, dict(request.query), dict(request.headers), body))
        for index, (method, pattern, status) in enumerate(self.failures):
            if method == request.method and re.fullmatch(pattern, request.path):
                del self.failures[index]
                return web.Response(status=status, text=f"Internal error; request headers: {dict(request.headers)}")
        if request.path != "/items/new":
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
            if (request.headers.get("Zotero-API-Key") or bearer) != self.api_key:
                return web.Response(status=403, text="Forbidden")
            if request.match_info.get("library") != str(self.library_id):
                return web.Response(status=403, text="Forbidden")
        return await handler(request)

    # reads ---------------------------------------------------------------------------------
    async def _template(self, request: web.Request) -> web.Response:
        if request.query.get("itemType") != "attachment" or request.query.get("linkMode") != "imported_file":
            return web.Response(status=400, text="Only imported_file attachment templates are served here")
        return web.json_response(ATTACHMENT_TEMPLATE)

    async def _list(self, request: web.Request) -> web.Response:
        top = request.path.endswith("/top")
        hits = [item for item in self.items.values() if not (top and item["data"].get("parentItem"))]
        if query := request.query.get("q"):
            everything = request.query.get("qmode") == "everything"
            hits = [item for item in hits if _matches(item["data"], query.lower(), everything)]
        start, limit = int(request.query.get("start", 0)), int(request.query.get("limit", 25))
        page = hits[start : start + limit]
        headers = {"Total-Results": str(len(hits)), "Last-Modified-Version": str(self.version)}
        if start + limit < len(hits):
            query = {**request.query, "start": str(start + limit)}
            headers["Link"] = f'<{self.url}{request.path}?{"&".join(f"{k}={v}" for k, v in query.items())}>; rel="next"'
        return web.json_response(page, headers=headers)

    async def _item(self, request: web.Request) -> web.Response:
        item = self.items.get(request.match_info["key"])
        if item is None:
            return web.Response(status=404, text="Item not found")
        content = request.query.get("content")
        if content in ("bib", "citation"):
            return web.Response(body=self._atom(item, content), content_type="application/atom+xml", charset="utf-8")
        return web.json_response(item, headers={"Last-Modified-Version": str(item["version"])})

    async def _children(self, request: web.Request) -> web.Response:
        key = request.match_info["key"]
        if key not in self.items:
            return web.Response(status=404, text="Item not found")
        children = [item for item in self.items.values() if item["data"].get("parentItem") == key]
        return web.json_response(children, headers={"Total-Results": str(len(children))})

    # writes --------------------------------------------------------------------------------
    async def _create(self, request: web.Request) -> web.Response:
        token = request.headers.get("Zotero-Write-Token")
        if token in self._write_tokens:
            return web.Response(status=412, text="Write token already used")
        self._write_tokens.add(token)
        objects = request[BODY]
        if not isinstance(objects, list):
            return web.Response(status=400, text="Uploaded data must be a JSON array")
        if len(objects) > 50:
            return web.Response(status=413, text="Only 50 objects can be submitted at a time")
        result: dict[str, dict[str, Any]] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        version = self.version + 1
        for index, data in enumerate(objects):
            problem = self._invalid(data) or (self.reject(data) if self.reject else None)
            if problem:
                result["failed"][str(index)] = {"key": data.get("key", ""), "code": problem[0], "message": problem[1]}
                continue
            item = self._store(dict(data), version)
            result["successful"][str(index)] = item
            result["success"][str(index)] = item["key"]
        if result["success"]:
            self.version = version
        return web.json_response(result, headers={"Last-Modified-Version": str(self.version)})

    def _invalid(self, data: dict[str, Any]) -> tuple[int, str] | None:
        item_type = data.get("itemType")
        if item_type not in TYPE_FIELDS:
            return 400, f"'{item_type}' is not a valid itemType"
        for name in data:
            if name not in COMMON_FIELDS | TYPE_FIELDS[item_type] | (
                SHARED_FIELDS if item_type != "attachment" else {"title", "url", "accessDate"}
            ):
                return 400, f"'{name}' is not a valid field for type '{item_type}'"
        for creator in data.get("creators", []):
            if "creatorType" not in creator or not ("name" in creator or "lastName" in creator):
                return 400, "Creator must contain 'creatorType' and either 'name' or 'lastName'"
        parent = data.get("parentItem")
        if parent and parent not in self.items:
            return 400, f"Parent item {parent} not found"
        if parent and data.get("collections"):
            return 400, "Child items cannot be assigned to collections"
        return None

    def _store(self, data: dict[str, Any], version: int) -> dict[str, Any]:
        key = "".join(self._keys.choice(KEY_CHARS) for _ in range(8))
        stamp = f"2024-06-01T00:{len(self.items) // 60 % 60:02d}:{len(self.items) % 60:02d}Z"
        data.update(key=key, version=version, dateAdded=stamp, dateModified=stamp)
        data.setdefault("tags", [])
        data.setdefault("relations", {})
        if not data.get("parentItem"):
            data.setdefault("collections", [])
        base = f"https://api.zotero.org{self.prefix}/items/{key}"
        item = {
            "key": key,
            "version": version,
            "library": {
                "type": self.library_type.rstrip("s"),
                "id": self.library_id,
                "name": "test library",
                "links": {"alternate": {"href": "https://www.zotero.org/test", "type": "text/html"}},
            },
            "links": {
                "self": {"href": base, "type": "application/json"},
                "alternate": {"href": f"https://www.zotero.org/test/items/{key}", "type": "text/html"},
            },
            "meta": {"numChildren": 0},
            "data": data,
        }
        if parent := data.get("parentItem"):
            item["links"]["up"] = {
                "href": f"https://api.zotero.org{self.prefix}/items/{parent}",
                "type": "application/json",
            }
            self.items[parent]["meta"]["numChildren"] += 1
        self.items[key] = item
        return item

    async def _file(self, request: web.Request) -> web.Response:
        item = self.items.get(request.match_info["key"])
        if item is None:
            return web.Response(status=404, text="Item not found")
        data = item["data"]
        if data.get("itemType") != "attachment" or data.get("linkMode") != "imported_file":
            return web.Response(status=400, text="Item is not an imported file attachment")
        form = request[BODY] or {}
        if_match, if_none_match = request.headers.get("If-Match"), request.headers.get("If-None-Match")
        if not (if_match or if_none_match == "*"):
            return web.Response(status=428, text="If-Match/If-None-Match header not provided")
        if if_none_match == "*" and data.get("md5") and "upload" not in form:
            return web.Response(status=412, text="If-None-Match: * set but file exists")
        if if_match and if_match != data.get("md5"):
            return web.Response(status=412, text="ETag does not match current version of file")
        if "upload" in form:
            return self._register(item, form["upload"])
        if form.get("params") != "1":
            return web.Response(status=400, text="this server only authorizes uploads with params=1")
        if data.get("md5") == form["md5"]:
            return web.json_response({"exists": 1})
        upload_key = f"upload{next(self._upload_counter):04d}"
        params = {
            "key": f"{form['md5']}/{upload_key}",
            "acl": "bucket-owner-full-control",
            "Content-Type": form.get("contentType", ""),
            "success_action_status": "201",
            "policy": "eyJleHBpcmF0aW9uIjoidGVzdCJ9",
            "x-amz-algorithm": "AWS4-HMAC-SHA256",
        }
        self._uploads[upload_key] = {"item": item["key"], "form": form, "params": params, "received": None}
        return web.json_response({"url": f"{self.url}/storage/upload", "params": params, "uploadKey": upload_key})

    async def _storage(self, request: web.Request) -> web.Response:
        fields: dict[str, Any] = {}
        reader = await request.multipart()
        async for part in reader:
            fields[part.name] = bytes(await part.read()) if part.name == "file" else await part.text()
        self._uploads_in_flight += 1
        self.max_parallel_uploads = max(self.max_parallel_uploads, self._uploads_in_flight)
        await asyncio.sleep(self.upload_delay)
        self._uploads_in_flight -= 1
        self.requests.append(
            Recorded("POST", request.path, {}, dict(request.headers), {k: v for k, v in fields.items() if k != "file"})
        )
        upload = next((u for u in self._uploads.values() if u["params"]["key"] == fields.get("key")), None)
        if upload is None or any(fields.get(k) != v for k, v in upload["params"].items()):
            return web.Response(status=403, text="<Error><Code>AccessDenied</Code></Error>")
        content = fields.get("file", b"")
        if hashlib.md5(content).hexdigest() != upload["form"]["md5"] or len(content) != int(upload["form"]["filesize"]):
            return web.Response(status=400, text="<Error><Code>BadDigest</Code></Error>")
        upload["received"] = content
        return web.Response(status=201)

    def _register(self, item: dict[str, Any], upload_key: str) -> web.Response:
        upload = self._uploads.get(upload_key)
        if upload is None or upload["item"] != item["key"] or upload["received"] is None:
            return web.Response(status=400, text="Upload not found or file not received")
        self.version += 1
        form = upload["form"]
        item["data"].update(md5=form["md5"], filename=form["filename"], mtime=int(form["mtime"]), version=self.version)
        item["version"] = self.version
        self.files[item["key"]] = upload["received"]
        return web.Response(status=204, headers={"Last-Modified-Version": str(self.version)})

    # rendering -----------------------------------------------------------------------------
    def rendered(self, key: str, content: str) -> str:
        """What this server's citation processor makes of an item (an APA-like sketch)."""
        data = self.items[key]["data"]
        creators = data.get("creators", [])
        names = [c.get("name") or f"{c['lastName']}, {c['firstName'][:1]}." for c in creators]
        if content == "citation":
            first = (creators[0].get("name") or creators[0]["lastName"]) if creators else data["title"]
            return f"({first}{' et al.' if len(creators) > 2 else ''}, {data.get('date', 'n.d.')})"
        container = data.get("publicationTitle") or data.get("bookTitle") or ""
        return f"{', '.join(names)} ({data.get('date', 'n.d.')}). {data['title']}. <i>{container}</i>."

    def _atom(self, item: dict[str, Any], content: str) -> str:
        key, base = item["key"], f"https://api.zotero.org{self.prefix}"
        wrapper = (
            '<div xmlns="http://www.w3.org/1999/xhtml" class="csl-bib-body" style="line-height: 2; '
            'padding-left: 1em; text-indent:-1em;"><div class="csl-entry">{}</div></div>'
            if content == "bib"
            else '<span xmlns="http://www.w3.org/1999/xhtml">{}</span>'
        )
        rendered = re.sub(r"&lt;(/?i)&gt;", r"<\1>", escape(self.rendered(key, content)))
        return f"""<?xml version="1.0" encoding="UTF-8"?>
<entry xmlns="http://www.w3.org/2005/Atom" xmlns:zapi="http://zotero.org/ns/api">
  <title>{escape(item["data"].get("title", ""))}</title>
  <author>
    <name>test library</name>
    <uri>http://zotero.org{self.prefix}</uri>
  </author>
  <id>http://zotero.org{self.prefix}/items/{key}</id>
  <published>{item["data"]["dateAdded"]}</published>
  <updated>{item["data"]["dateAdded"]}</updated>
  <link rel="self" type="application/atom+xml" href="{base}/items/{key}?content={content}"/>
  <link rel="alternate" type="text/html" href="https://www.zotero.org/test/items/{key}"/>
  <zapi:key>{key}</zapi:key>
  <zapi:version>{item["version"]}</zapi:version>
  <zapi:itemType>{item["data"]["itemType"]}</zapi:itemType>
  <zapi:numChildren>{item["meta"]["numChildren"]}</zapi:numChildren>
  <content zapi:type="{content}" type="xhtml">
    {wrapper.format(rendered)}
  </content>
</entry>
"""


def _matches(data: dict[str, Any], query: str, everything: bool) -> bool:
    """Zotero quick search: title, creators and year by default; every field with qmode=everything."""
    if everything:
        values = [str(v) for k, v in data.items() if isinstance(v, str | int) and k not in ("key", "version")]
    else:
        values = [data.get("title", ""), data.get("date", "")]
    values += [" ".join(str(part) for part in creator.values()) for creator in data.get("creators", [])]
    return any(query in value.lower() for value in values)
