"""The GraphQL client that launches backfills gives up on a webserver that drips its answer."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from hysem_assets.runs.backfill import GraphQLError, graphql


class _Dripping(http.server.BaseHTTPRequestHandler):
    """Answers every POST with a JSON body one byte every 0.2 s: no socket read ever waits long."""

    def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"data": {"ok": true}}' + b" " * 200
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for byte in body:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.2)

    def log_message(self, *args) -> None:
        pass


def test_a_webserver_that_drips_its_answer_is_cut_at_the_deadline():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Dripping)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        started = time.monotonic()
        with pytest.raises(GraphQLError, match=f"No Dagster webserver answered at {url} .*Start it with `hysem ui`"):
            graphql(url, "{ ok }", timeout=1.0)
        assert time.monotonic() - started < 3
    finally:
        server.shutdown()
