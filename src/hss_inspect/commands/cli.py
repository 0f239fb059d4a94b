"""The `hss-inspect` command: debugging aids and analyses around the eval.

Each subcommand lives in its own module, imported only when that subcommand runs, so
`hss-inspect --help`, `cache` and `frames` start without loading Inspect.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from hss_inspect.core.settings import NO_EVAL_ENV


@dataclass(frozen=True)
class Command:
    """A subcommand: the module holding it, its one-line help, and the names in that
    module of the function adding its arguments and of the function running it."""

    module: str
    help: str
    add_arguments: str = "add_arguments"
    run: str = "run"
    runs_evals: bool = False

    def function(self, name: str) -> Any:
        return getattr(import_module(f"hss_inspect.commands.{self.module}"), name)


COMMANDS: dict[str, Command] = {
    "frames": Command("frames", "write the exact frames a model receives for a video"),
    "prepare": Command("prepare", "download the selected media and fill the cache"),
    "cache": Command("cache", "show where the media cache is and its size"),
    "estimate": Command(
        "estimate", "requests, images, payload MB and image tokens of a run, before sending"
    ),
    "report": Command(
        "report",
        "the paper's tables and plots from Inspect logs (files or folders)",
        "add_report_arguments",
        "report_command",
    ),
    "agreement": Command(
        "report",
        "agreement of judges that graded the same answers",
        "add_agreement_arguments",
        "agreement_command",
    ),
    "compare": Command(
        "report",
        "paired comparison of two logs on shared tasks, first attempts",
        "add_compare_arguments",
        "compare_command",
    ),
    "failures": Command(
        "report",
        "failure causes (needs failure_cause labels) and agentic against single-call",
        "add_failures_arguments",
        "failures_command",
    ),
    "recipe": Command(
        "recipe", "run one of the paper's experiments as an eval set", runs_evals=True
    ),
    "rebuild-frames": Command(
        "rebuild", "rebuild the frames (or image) a logged sample was sent and check them"
    ),
}


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand is listed; only `chosen` gets its arguments (and its imports)."""
    parser = argparse.ArgumentParser(prog="hss-inspect", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, command in COMMANDS.items():
        sub = commands.add_parser(name, help=command.help, description=command.help)
        if name == chosen:
            command.function(command.add_arguments)(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command; run as the program (no `argv`), this process is the command's own."""
    as_program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    args = build_parser(chosen).parse_args(argv)
    command = COMMANDS[args.command]
    if as_program and not command.runs_evals:
        # The package's Inspect hook is then not registered, so Inspect prints no banner
        # of hooks before the command's own lines (hooks.registration).
        os.environ[NO_EVAL_ENV] = command.module
    try:
        return int(command.function(command.run)(args))
    except Exception as exc:
        if not is_user_error(exc):
            raise
        print(f"hss-inspect {args.command}: {exc}", file=sys.stderr)
        return 1


def is_user_error(exc: Exception) -> bool:
    """An error the user fixes (printed as one line), not a bug (shown with its traceback):
    a ValueError or KeyError from our own code is a bug, and keeps its traceback.

    Whatever raised a SetupError or MediaError has imported its module already, so these
    imports cost nothing here."""
    from hss_inspect.core.errors import SetupError
    from hss_inspect.media.errors import MediaError

    return isinstance(exc, SetupError | MediaError | FileNotFoundError)


if __name__ == "__main__":
    sys.exit(main())
