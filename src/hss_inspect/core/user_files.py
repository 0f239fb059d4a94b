"""A YAML or JSON file the user gives (prices, image-token rules, answers): read as text,
parsed, and a file that is not text or does not parse refused in one line naming the
file, the line and column the parser stopped at, and what it expected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from hss_inspect.core.errors import InputError


def read_text(path: Path, where: str, expected: str = "a YAML or JSON file") -> str:
    """The file's text; `where` names it as the user gave it (`--model-cost-config FILE`),
    `expected` is what to give instead of a file that is not text."""
    try:
        return path.expanduser().read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where}: not a text file (not UTF-8); give {expected}") from None


def parse_yaml_or_json(text: str, where: str, remedy: str) -> Any:
    """The text read as Inspect reads a config file: JSON when it starts with `{`, else
    YAML (JSON is YAML too, but YAML's messages about it are worse). A text that does not
    parse is an InputError: `where`, the place and the parser's words, then `remedy`."""
    try:
        return json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{where}: {parse_problem(exc)}; {remedy}") from None


def parse_problem(exc: json.JSONDecodeError | yaml.YAMLError) -> str:
    """A parser's complaint in one line: what, and the line and column it stopped at."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
    mark = getattr(exc, "problem_mark", None)
    problem = str(getattr(exc, "problem", None) or exc).replace("\n", " ")
    if mark is None:
        return f"not valid YAML ({problem})"
    found = f"not valid YAML at line {mark.line + 1}, column {mark.column + 1} ({problem}"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None:
        found += f", {context} from line {start.line + 1}, column {start.column + 1}"
    return found + ")"
