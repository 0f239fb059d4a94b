"""A hub stand-in for a gated dataset: answers file requests as the Hugging Face hub does.

The hub marks its refusals with `X-Error-Code` / `X-Error-Message` headers, which the hub
client turns into its error types. Tokens: none -> 401 GatedRepo; `hf_granted` -> the
file; `hf_not_granted` -> 403 GatedRepo; anything else -> 401 invalid credentials.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GRANTED, NOT_GRANTED = "hf_granted", "hf_not_granted"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
BODY = b"{}\n"


class _Handler(BaseHTTPRequestHandler):
    def _answer(self, with_body: bool) -> None:
        token = self.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if token == GRANTED:
            self.send_response(200)
            self.send_header("x-repo-commit", COMMIT)
            self.send_header("etag", '"fixture-etag"')
            self.send_header("content-length", str(len(BODY)))
            self.end_headers()
            if with_body:
                self.wfile.write(BODY)
            return
        if not token:
            status, code, text = 401, "GatedRepo", "Access to this dataset is restricted."
        elif token == NOT_GRANTED:
            status, code, text = 403, "GatedRepo", "You are not in the authorized list."
        else:
            status, code, text = 401, None, "Invalid credentials in Authorization header"
        self.send_response(status)
        if code:
            self.send_header("x-error-code", code)
        self.send_header("x-error-message", text)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def gated_hub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
