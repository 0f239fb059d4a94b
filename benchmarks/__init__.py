"""Benchmarks: each script runs the real shape of the work side by side with the alternative
and prints its figures as JSON (`python -m benchmarks.<name> --json FILE` keeps them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def print_and_keep(result: dict[str, Any], path: Path | None) -> None:
    """Print a benchmark's figures, and write them to `path` when one was given."""
    text = json.dumps(result, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n")
