"""Task options (`-T name=value`) checked one by one: a bad value is one clear line.

Inspect parses `-T` values as YAML, so numbers may arrive as strings or ints and a
value holding a comma arrives as a list; each check accepts what a user can type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hss_inspect.core.errors import SetupError


def option_error(name: str, value: Any, expected: str) -> SetupError:
    return SetupError(f"-T {name}={value!r} is not valid: {expected}.")


def choice(name: str, value: Any, valid: Sequence[str]) -> str:
    text = str(value).strip().lower()
    if text not in valid:
        raise option_error(name, value, "use one of " + ", ".join(valid))
    return text


def positive_number(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number > 0 or number == float("inf"):
        raise option_error(name, value, "use a number greater than 0")
    return number


def whole_number(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool):
        raise option_error(name, value, f"use a whole number of at least {minimum}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise option_error(name, value, f"use a whole number of at least {minimum}") from None
    if number < minimum:
        raise option_error(name, value, f"use a whole number of at least {minimum}")
    return number


def optional_whole_number(name: str, value: Any, minimum: int) -> int | None:
    if value is None or str(value).strip().lower() in ("", "none", "null"):
        return None
    return whole_number(name, value, minimum)
