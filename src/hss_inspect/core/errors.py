"""Errors the user fixes before a run: Inspect prints them as one line, without a traceback."""

from __future__ import annotations

import sys

if "inspect_ai" in sys.modules:
    # Inspect prints a PrerequisiteError as its message alone, without a traceback; the
    # class has no public home in inspect-ai, so tests/test_errors.py pins this import.
    from inspect_ai._util.error import (
        PrerequisiteError,  # inspect-evals-lint: ignore[private_api_imports] -- no public home; pinned by tests/test_errors.py
    )
else:
    # A process that has not loaded Inspect (`hss-inspect build status`) is not made to
    # load it (1-3 s) for this base: the hss-inspect command prints a SetupError as one
    # line itself (commands.cli), and `inspect eval` has loaded Inspect before any task.
    PrerequisiteError = Exception  # type: ignore[misc,assignment]


class SetupError(PrerequisiteError):
    """A wrong option, dataset or missing role: the message names it and the remedy."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        # PrerequisiteError keeps the message only as an attribute (set here too, for the
        # base without Inspect); str(error) needs args too.
        self.message, self.args = message, (message,)

    def __str__(self) -> str:
        return str(self.message)


class OptionError(SetupError):
    """A value an option does not accept; `expected` says what it does accept."""

    def __init__(self, name: str, value: object, expected: str) -> None:
        from hss_inspect.core.options import spell

        super().__init__(f"{spell(name, repr(value))} is not valid: {expected}.")
        self.expected = expected


class InputError(SetupError, ValueError):
    """Something the user gave that cannot be used (a value, a file's content, a log): one
    line naming it, and still a ValueError for code that catches those."""
