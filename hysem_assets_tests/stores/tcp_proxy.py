"""A loopback TCP proxy that can cut every connection at once, as a server that goes away."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class CuttingProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target``; :meth:`cut_after` arms the cut."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.uri = f"bolt://127.0.0.1:{self.port}"
        self._budget: int | None = None
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.cut_done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_after(self, client_bytes: int) -> None:
        """Cut once the clients have sent this many more bytes."""
        with self._lock:
            self._budget = client_bytes

    def cut(self) -> None:
        with self._lock:
            self.cut_done.set()
            for sock in [self.listener, *self._sockets]:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def _accept(self) -> None:
        while not self.cut_done.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client and self._spend(len(data)):
                    self.cut()
                    return
                sink.sendall(data)
        except OSError:
            pass

    def _spend(self, size: int) -> bool:
        with self._lock:
            if self._budget is None:
                return False
            self._budget -= size
            return self._budget <= 0

    def __enter__(self) -> CuttingProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.cut()
