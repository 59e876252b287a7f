"""A scripted model server on 127.0.0.1: real HTTP, real response formats, every request checked.

It speaks OpenAI's ``/v1/chat/completions`` and Ollama's native ``/api/chat``. Checks
that apply to every request (model, message shape, how the schema is sent, the API key)
run first, then the step's own check; a failed check is recorded in ``failures`` and
answered with HTTP 400, which the client does not retry, so a test sees it at once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hysem_assets_tests.local_server import ThreadedServer

Body = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    content: str
    prompt_tokens: int = 100
    completion_tokens: int = 20
    #: Seconds to wait before answering, to make the client time out.
    stall_s: float = 0.0
    #: Seconds between the bytes of the body: a server that is never silent long enough for a read timeout.
    drip_s: float = 0.0


@dataclass(frozen=True)
class Step:
    reply: Reply
    check: Callable[[Body], None] | None = None


def json_reply(values: dict[str, Any], **kwargs: Any) -> Reply:
    return Reply(json.dumps(values), **kwargs)


@dataclass
class ScriptedLLMServer:
    """Answers requests from ``script`` (steps in order, or a function of the request body)."""

    script: list[Step] | Callable[[Body], Step]
    model: str
    schema: dict[str, Any] | None = None
    api_key: str | None = None
    dialect: str = "openai"
    requests: list[Body] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    _ids: itertools.count = field(default_factory=itertools.count)

    def __enter__(self) -> ScriptedLLMServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/api/chat", self._handle)
        self._server = ThreadedServer(app)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.close()

    @property
    def url(self) -> str:
        """The root URL; OpenAI-style clients take ``url + "/v1"``."""
        return self._server.url

    def _next_step(self, body: Body) -> Step:
        if callable(self.script):
            return self.script(body)
        assert self.script, f"unexpected request number {len(self.requests)}"
        return self.script.pop(0)

    def _check_common(self, request: web.Request, body: Body) -> None:
        assert body.get("model") == self.model, f"model {body.get('model')!r}"
        messages = body.get("messages")
        assert messages and all(set(m) == {"role", "content"} and isinstance(m["content"], str) for m in messages), (
            messages
        )
        assert messages[0]["role"] == "system" and messages[-1]["role"] == "user", [m["role"] for m in messages]
        expected_auth = f"Bearer {self.api_key}" if self.api_key else None
        assert request.headers.get("Authorization") == expected_auth, "Authorization header"
        assert "guided_json" not in body, "the removed guided_json field was sent"
        if self.dialect == "ollama":
            assert request.path == "/api/chat" and body.get("stream") is False, (request.path, body.get("stream"))
            assert "response_format" not in body and body.get("format") == self.schema, "Ollama format"
        elif self.schema is not None:
            assert request.path == "/v1/chat/completions", request.path
            assert body.get("response_format") == {
                "type": "json_schema",
                "json_schema": {"name": self.schema["title"], "schema": self.schema, "strict": True},
            }, f"response_format {json.dumps(body.get('response_format'))[:300]}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        try:
            self._check_common(request, body)
            step = self._next_step(body)
            if step.check:
                step.check(body)
        except AssertionError as exc:
            self.failures.append(f"request {len(self.requests)}: {exc}")
            return web.json_response({"error": {"message": str(exc), "type": "invalid_request_error"}}, status=400)
        if step.reply.stall_s:
            await asyncio.sleep(step.reply.stall_s)
        if step.reply.drip_s:
            return await self._drip(request, json.dumps(self._answer(step.reply)).encode(), step.reply.drip_s)
        return web.json_response(self._answer(step.reply))

    @staticmethod
    async def _drip(request: web.Request, body: bytes, every_s: float) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json", "Content-Length": str(len(body))})
        await response.prepare(request)
        for byte in body:
            await response.write(bytes([byte]))
            await asyncio.sleep(every_s)
        return response

    def _answer(self, reply: Reply) -> Body:
        if self.dialect == "ollama":
            return {
                "model": self.model,
                "created_at": "2025-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": reply.content},
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": reply.prompt_tokens,
                "eval_count": reply.completion_tokens,
            }
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            },
        }
