"""What every local HTTP stand-in of a model API shares: JSON replies, a silent log, and
serving on a free port that is written to a file for the test to read."""

from __future__ import annotations

import contextlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JsonHandler(BaseHTTPRequestHandler):
    log_file = ""

    def send_json(
        self, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a killed client
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(handler: type[JsonHandler], port_file: str, log_file: str) -> None:
    """Serve on 127.0.0.1 at a free port, written to `port_file`, until killed."""
    handler.log_file = log_file
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(port_file, "w") as handle:
        handle.write(str(server.server_address[1]))
    server.serve_forever()


def serve_configured(handler: type[JsonHandler], argv: list[str]) -> None:
    """`CONFIG PORT_FILE LOG_FILE`: the handler's rules read from the JSON file CONFIG, then
    served as `serve` does (the stand-ins that take rules share this entry point)."""
    config_file, port_file, log_file = argv
    with open(config_file) as handle:
        handler.config = json.load(handle)  # type: ignore[attr-defined]
    serve(handler, port_file, log_file)
