"""A name the user typed, matched against the names that exist: an option, a flag, a
recipe, a model of Table 5, a domain, a sample id. An unknown one is refused with the
closest known name and where the full list is, before anything is sent."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hss_inspect.core.errors import SetupError

# How alike a typed name and a known one must be to be suggested (difflib's ratio): a
# dropped, doubled or swapped letter passes, an unrelated word does not.
CLOSE_ENOUGH = 0.6


def closest(name: str, known: Iterable[str], cutoff: float = CLOSE_ENOUGH) -> str | None:
    """The known name most like `name`, if any is close enough (case ignored)."""
    by_folded = {k.lower(): k for k in known}
    found = difflib.get_close_matches(name.lower(), list(by_folded), n=1, cutoff=cutoff)
    return by_folded[found[0]] if found else None


def suggestion(name: str, known: Iterable[str], form: str = "{}") -> str:
    """'did you mean X?' for the closest known name written as `form`, else ''."""
    found = closest(name, known)
    return "" if found is None else f"did you mean {form.format(found)}?"


def aside(name: str, known: Iterable[str], form: str = "{}") -> str:
    """' (did you mean X?)' for the closest known name, else '': to follow a name."""
    hint = suggestion(name, known, form)
    return f" ({hint})" if hint else ""


def unknown_text(name: str, what: str, known: Iterable[str], listed: str, form: str = "{}") -> str:
    """`name` is not `what`: the closest known name, and `listed`, where every known name is
    (a command, a file, or the names themselves)."""
    hint = suggestion(name, known, form)
    return f"{form.format(name)} is not {what}{': ' + hint if hint else ''} ({listed})"


def unknown_name(
    name: str, what: str, known: Iterable[str], listed: str, form: str = "{}"
) -> SetupError:
    """`unknown_text` as the error a user fixes."""
    # Imported here: the errors module loads Inspect, which the light commands start without.
    from hss_inspect.core.errors import SetupError

    return SetupError(unknown_text(name, what, known, listed, form))
