"""Media as the inline `data:` URIs Inspect sends to providers."""

from __future__ import annotations

import base64


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def decode_data_uri(uri: str) -> bytes:
    _, _, payload = uri.partition(",")
    return base64.b64decode(payload)
