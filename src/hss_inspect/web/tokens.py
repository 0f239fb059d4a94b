"""Private links: each carries a random token of 192 bits, and a request's token is
compared with every holder's in constant time, so its text cannot be found by timing."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TypeVar

# 24 random bytes: a 192-bit secret in each link (URL-safe base64, 32 characters).
TOKEN_BYTES = 24
K = TypeVar("K")


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def holder_of(tokens: Mapping[K, str], given: str) -> K | None:
    """Whose token `given` is (None: nobody's); every token is compared, in constant time."""
    found: K | None = None
    for holder, token in tokens.items():
        if secrets.compare_digest(token, given):
            found = holder
    return found
