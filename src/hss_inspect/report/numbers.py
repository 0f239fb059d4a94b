"""How the reports print numbers: rates as percent, differences signed, gaps as a dash."""

from __future__ import annotations

import math

MISSING = "—"


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
