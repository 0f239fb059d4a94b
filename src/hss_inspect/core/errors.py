"""Errors the user fixes before a run: Inspect prints them as one line, without a traceback."""

from __future__ import annotations

import re
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


def prerequisite(error: BaseException) -> bool:
    """Whether an error is one the user fixes before a run: ours (SetupError), or Inspect's
    own (a missing key, a missing package), which Inspect prints without a traceback."""
    return isinstance(error, prerequisite_types())


def prerequisite_types() -> tuple[type[BaseException], ...]:
    """Ours, and Inspect's PrerequisiteError once Inspect is loaded (before, none of its
    can have been raised; its class is then looked up, not imported)."""
    loaded = sys.modules.get("inspect_ai._util.error")
    return (SetupError,) if loaded is None else (SetupError, loaded.PrerequisiteError)


def one_line(text: str) -> str:
    """A message as one line: a paragraph's lines joined by spaces and its paragraphs by
    colons, a leading "ERROR:" gone."""
    paragraphs = [" ".join(part.split()) for part in re.split(r"\n\s*\n", text)]
    return ": ".join(p for p in paragraphs if p).removeprefix("ERROR:").strip()


def plain(message: object) -> str:
    """A message Inspect wrote for its console, without its rich markup
    (`[bold]ANTHROPIC_API_KEY[/bold]`)."""
    from rich.errors import MarkupError
    from rich.text import Text

    if isinstance(message, Text):
        return message.plain
    try:
        return Text.from_markup(str(message)).plain
    except MarkupError:  # brackets that are not markup: the message as written
        return str(message)


def error_said(error: BaseException) -> str:
    """What an error says, in one line: ours as written; Inspect's PrerequisiteError's
    message (a missing key); else the error's type and first line."""
    if isinstance(error, SetupError):
        return str(error)
    if isinstance(error, prerequisite_types()):
        return one_line(plain(getattr(error, "message", error)))
    first = (str(error).strip().splitlines() or [""])[0]
    return f"{type(error).__name__}: {first}"


# The first line of a Python traceback; of the paragraph Inspect prints before an eval (its
# version and hooks); of the line it prints beside one (where to monitor it from).
_TRACEBACK = "Traceback (most recent call last):"
_BANNER = "inspect_ai v"
_MONITOR = "Monitor from another shell"
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception|Group)): ")


def inspect_said(output: str) -> str:
    """Why an `inspect` command failed, in one line, from what it printed: the exception
    that ended a traceback (the last one, the innermost), else what it printed after its
    banner (a PrerequisiteError's message: a missing key, a refused option). '' if none."""
    lines = output.splitlines()
    if any(line.strip() == _TRACEBACK for line in lines):
        for at in range(len(lines) - 1, -1, -1):
            found = _EXCEPTION_LINE.match(lines[at])
            if found:
                rest = [lines[at][found.end() :], *lines[at + 1 :]]
                return f"{found.group(1)}: {one_line(plain(chr(10).join(rest)))}"
    kept = "\n".join(line for line in lines if not line.startswith(_MONITOR))
    paragraphs = re.split(r"\n\s*\n", kept.strip())
    return one_line("\n\n".join(p for p in paragraphs if not p.startswith(_BANNER)))
