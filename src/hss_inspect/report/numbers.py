"""How the reports print numbers: rates as percent, differences signed, gaps as a dash,
tokens not reported as n/r, dollars not known as such (never $0)."""

from __future__ import annotations

import math

from hss_inspect.providers.prices import dollars_text

MISSING = "—"
NOT_REPORTED = "n/r"  # the provider reported no tokens of that kind
NOT_KNOWN = "not known"  # no price, so no dollars


def _absent(value: float | None) -> bool:
    return value is None or math.isnan(value)


def points(value: float | None) -> str:
    """A value already in percentage points, one decimal."""
    return MISSING if value is None or _absent(value) else f"{value:.1f}"


def signed_points(value: float | None) -> str:
    return MISSING if value is None or _absent(value) else f"{value:+.1f}"


def percent(fraction: float | None) -> str:
    """A rate held as a fraction, shown in percent."""
    return points(None if fraction is None else 100 * fraction)


def signed_percent(fraction: float | None) -> str:
    return signed_points(None if fraction is None else 100 * fraction)


def count(tokens: int | None) -> str:
    return NOT_REPORTED if tokens is None else f"{tokens:,}"


def money(amount: float | None) -> str:
    return NOT_KNOWN if amount is None else dollars_text(amount)


def signed_money(amount: float | None) -> str:
    if amount is None:
        return NOT_KNOWN
    return f"-{dollars_text(-amount)}" if amount < 0 else dollars_text(amount)


def times(ratio: float | None) -> str:
    """A ratio as a multiple (1.25x)."""
    return MISSING if ratio is None else f"{ratio:.2f}x"
