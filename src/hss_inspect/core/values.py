"""Reading a number out of a Score value, whichever reducer or log it comes from."""

from __future__ import annotations

import math
from typing import Any


def finite_number(value: Any) -> float | None:
    """The value as a float, or None when it is not a number or is NaN (an ungraded
    attempt). A bool counts as 1 or 0, as Python and Inspect's reducers treat it."""
    if not isinstance(value, int | float) or is_nan(value):
        return None
    return float(value)


def is_nan(value: Any) -> bool:
    """Whether the value is a float NaN (a score value left undefined)."""
    return isinstance(value, float) and math.isnan(value)
