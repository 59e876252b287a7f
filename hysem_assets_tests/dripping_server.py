"""A server on 127.0.0.1 that answers every request one byte every 0.2 s: no read ever waits long, and the
whole answer takes a minute, so only a deadline on the whole request stops a client."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class _Dripping(http.server.BaseHTTPRequestHandler):
    def _drip(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"data": {"ok": true}}' + b" " * 300
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:  # the client gave up, as it should
            pass

    do_GET = do_POST = _drip  # noqa: N815 (the names http.server calls)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def dripping_server() -> Iterator[str]:
    """The server's base URL while the block runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Dripping)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
