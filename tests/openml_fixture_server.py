"""A loopback HTTP server that answers OpenML API v1 calls from recorded XML fixtures.

Used by tests/test_openml_*.py: the real ``openml`` package talks HTTP to it (no mocks).
Routes come from ``tests/fixtures/openml/routes.json`` (endpoint after ``/api/v1/xml/`` ->
fixture file, or ``error:<http status>:<OpenML code>``).  Tests can inject behaviours for one
endpoint, consumed one per request: ``"500"`` (an HTML 500 page, as a proxy under load
sends), ``"412:107"`` (OpenML's database-connection error), ``"sleep:<s>"`` (answer late).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "openml"
PREFIX = "/api/v1/xml/"
#: Seconds between serve_forever's checks for shutdown().
_POLL = 0.01


def _error_xml(code: int, message: str) -> str:
    return (f'<oml:error xmlns:oml="http://openml.org/openml">\n  <oml:code>{code}</oml:code>\n'
            f"  <oml:message>{message}</oml:message>\n</oml:error>\n")


class FixtureServer:
    """Serve the fixtures on 127.0.0.1:<random port>; ``url`` is the API base for openml.config.server."""

    def __init__(self) -> None:
        self.routes: dict[str, str] = json.loads((FIXTURES / "routes.json").read_text())
        self.hits: list[str] = []
        self.unknown: list[str] = []
        self._inject: dict[str, deque] = defaultdict(deque)
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802 - http.server API
                owner._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/api/v1/xml"
        # serve_forever checks for shutdown() every poll_interval: the default 0.5 s made every test's
        # teardown wait up to half a second (about 7 s over the suite)
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": _POLL}, daemon=True)
        self._thread.start()

    def inject(self, endpoint: str, *behaviours: str) -> None:
        """Queue behaviours for ``endpoint`` (consumed one per request, then normal answers)."""
        with self._lock:
            self._inject[endpoint].extend(behaviours)

    def count(self, endpoint_prefix: str) -> int:
        """Number of requests whose endpoint starts with ``endpoint_prefix``."""
        return sum(1 for h in self.hits if h.startswith(endpoint_prefix))

    def close(self) -> None:
        """Stop serving (within one poll interval), close the listening socket and join the thread."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)

    def _send(self, h, status: int, body: str, *, ctype: str = "text/xml; charset=utf-8") -> None:
        data = gzip.compress(body.encode("utf-8"))
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _handle(self, h) -> None:
        path = urlsplit(h.path).path
        endpoint = path[len(PREFIX):] if path.startswith(PREFIX) else path
        with self._lock:
            self.hits.append(endpoint)
            behaviour = self._inject[endpoint].popleft() if self._inject.get(endpoint) else None
        if behaviour == "500":
            return self._send(h, 500, ("<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head>"
                                        "<body><h1>Internal Server Error</h1><hr><p>nginx</p></body></html>"), ctype="text/html")
        if behaviour and behaviour.startswith("412:"):
            return self._send(h, 412, _error_xml(int(behaviour[4:]), "Database connection error"))
        if behaviour and behaviour.startswith("sleep:"):
            time.sleep(float(behaviour[6:]))
        target = self.routes.get(endpoint)
        if target is None:
            with self._lock:
                self.unknown.append(endpoint)
            return self._send(h, 404, f"404 page not found (no fixture for {endpoint})", ctype="text/plain")
        if target.startswith("error:"):
            _, status, code = target.split(":")
            return self._send(h, int(status), _error_xml(int(code), "No results"))
        self._send(h, 200, (FIXTURES / target).read_text(encoding="utf-8"))


def closed_port_url() -> str:
    """An API URL on a loopback port nobody listens on (connection refused at once)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/api/v1/xml"
