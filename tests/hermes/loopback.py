"""Real HTTP services on loopback for the seal tests: what only this machine can reach."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Served:
    """A server running on its own thread until :meth:`close`."""

    def __init__(self, server: Any) -> None:
        self.server = server
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, a second a test with two.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def service(body: bytes, hits: list[str], content_type: str = "image/png") -> Served:
    """Answers every GET with ``body``, recording each path asked for in ``hits``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return Served(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
