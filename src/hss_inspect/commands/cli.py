"""The `hss-inspect` command: debugging aids and analyses around the eval.

Each subcommand lives in its own module, imported only when that subcommand runs, so
`hss-inspect --help`, `cache` and `frames` start without loading Inspect.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any, NoReturn

from hss_inspect.core.settings import NO_EVAL_ENV, OPTIONS_AS_FLAGS_ENV


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
    "options": Command("options", "the options of a task (-T name=value): defaults, meaning"),
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
    "register": Command(
        "register", "the Inspect Evals register's entry for HSS, with results from logs"
    ),
    "recipe": Command(
        "recipe", "run one of the paper's experiments as an eval set", runs_evals=True
    ),
    "human": Command("human", "a study of people answering HSS tasks: new, serve, status, export"),
    "build": Command(
        "build", "HSS tasks built as the paper built them: authoring, three review rounds, export"
    ),
    "release": Command(
        "release",
        "what changed between two releases, and a log carried to the new one (diff, carry)",
        runs_evals=True,
    ),
    "rebuild-frames": Command(
        "rebuild", "rebuild the frames (or image) a logged sample was sent and check them"
    ),
}


# argparse's words for the two mistakes a person makes most: a flag it does not know, and
# a value outside an argument's choices (quoted or not, by Python version).
_UNKNOWN = re.compile(r"unrecognized arguments: (\S+)")
_NUMBER = re.compile(r"^-\d")
_NOT_A_CHOICE = re.compile(r"argument ([^:]+): invalid choice: '?(.*?)'? \(choose from (.*)\)$")


class Parser(argparse.ArgumentParser):
    """argparse, where a mistyped flag or choice is one line naming the closest one, and
    flags may come before or after the positional arguments."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {self.explained(message)}\n")

    def parse_any_order(self, words: list[str]) -> argparse.Namespace:
        """The arguments, flags anywhere; a flag this command does not have is refused
        first (argparse would otherwise complain of a required one it hides). A command
        with actions of its own (`human new`) takes its flags after the action."""
        if self._subparsers is not None:
            return self.parse_action(words)
        flags = [name for action in self._actions for name in action.option_strings]
        for at, word in enumerate(words):
            flag = word.split("=", 1)[0]
            if flag.startswith("-") and not _NUMBER.match(flag) and not _known(flag, flags):
                value = words[at + 1] if at + 1 < len(words) else ""
                self.exit(2, f"{self.prog}: {self.misplaced(word, value, flags)}\n")
        return self.parse_intermixed_args(words)

    def misplaced(self, word: str, value: str, flags: list[str]) -> str:
        """A flag this command does not have, with the one it takes instead: a task
        option given as `-T name=value` where the command takes `--name value`, a role's
        model given as `--model-role role=model` where it takes `--role model`; else the
        closest flag."""
        flag = word.split("=", 1)[0]
        given = word[len("-T") :] if flag.startswith("-T") and len(flag) > 2 else value
        name, sep, setting = given.partition("=")
        taken = "--" + name.strip().replace("_", "-")
        typed = word if len(flag) > 2 else f"-T {given}"
        if flag.startswith("-T") and sep and taken in flags:
            return (
                f"{typed} is not a flag of {self.prog}: it takes the task options as flags: "
                f"use {taken} {setting}"
            )
        if flag.startswith("-T") and sep and "--dataset" in flags:
            from hss_inspect.core.names import aside

            return (
                f"{typed} is not a flag of {self.prog}: it takes the task options as flags, "
                f"and has no {taken}{aside(taken, flags)} (`{self.prog} --help` lists them)"
            )
        if flag == "--model-role" and sep and taken in flags:
            return f"{flag} {given} is not a flag of {self.prog}: use {taken} {setting}"
        return self.explained(f"unrecognized arguments: {flag}")

    def parse_action(self, words: list[str]) -> argparse.Namespace:
        """A command with actions (`human new`): the action's own parser takes the rest."""
        # argparse keeps the actions only on this private-looking but stable attribute
        (actions,) = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
        name = next((word for word in words if word in actions.choices), None)
        if name is None:
            return self.parse_args(words)  # the one line naming the closest action
        rest = [word for n, word in enumerate(words) if n != words.index(name)]
        own = actions.choices[name]
        assert isinstance(own, Parser)  # add_subparsers makes its parsers of this class
        parsed = own.parse_any_order(rest)
        setattr(parsed, actions.dest, name)
        return parsed

    def explained(self, message: str) -> str:
        from hss_inspect.core.names import aside, unknown_text

        unknown, choice = _UNKNOWN.match(message), _NOT_A_CHOICE.match(message)
        if unknown and unknown.group(1).startswith("-"):
            flag = unknown.group(1).split("=", 1)[0]
            flags = [name for action in self._actions for name in action.option_strings]
            listed = f"`{self.prog} --help` lists them"
            return unknown_text(flag, f"a flag of {self.prog}", flags, listed)
        if unknown:
            return f"unexpected argument {unknown.group(1)!r} (`{self.prog} --help`)"
        if choice:
            where, value = choice.group(1), choice.group(2)
            choices = [c.strip(" '\"") for c in choice.group(3).split(",")]
            hint = aside(value, choices, "'{}'")
            if where == "command":
                listed = "`hss-inspect --help` lists them"
                return unknown_text(value, "a command of hss-inspect", choices, listed, "'{}'")
            return f"{where} '{value}' is not one of {', '.join(choices)}{hint}"
        return message


def _known(flag: str, flags: list[str]) -> bool:
    """A flag the parser has, or (as argparse allows) the start of exactly one of them."""
    return flag in flags or sum(f.startswith(flag) for f in flags if f.startswith("--")) == 1


def top_parser() -> Parser:
    """The command's own parser: it lists the subcommands, each parsed by its own parser."""
    parser = Parser(prog="hss-inspect", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=version_text())
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, command in COMMANDS.items():
        commands.add_parser(name, help=command.help, description=command.help)
    return parser


def version_text() -> str:
    """The package's version and the task version its logs record (`hss_task_version`),
    read from eval.yaml here: the module that reads it for the tasks loads Inspect."""
    from importlib.metadata import version
    from importlib.resources import files

    import yaml

    entry = yaml.safe_load((files("hss_inspect") / "eval.yaml").read_text(encoding="utf-8"))
    return f"hss-inspect {version('hss-inspect')} (task version {entry['version']})"


def command_parser(name: str) -> Parser:
    """One subcommand's parser, with its arguments (importing only its module)."""
    command = COMMANDS[name]
    parser = Parser(prog=f"hss-inspect {name}", description=command.help)
    command.function(command.add_arguments)(parser)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The subcommand (its name may follow flags, which then go to it) and its arguments,
    flags and positional arguments in any order."""
    name = next((word for word in argv if word in COMMANDS), None)
    if name is None or argv[0] in ("-h", "--help", "--version"):
        top_parser().parse_args(argv)  # help, or the one line naming the closest command
        raise AssertionError("argparse exits on help and errors")
    rest = list(argv)
    rest.remove(name)
    args = command_parser(name).parse_any_order(rest)
    args.command = name
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """The command; run as the program (no `argv`), this process is the command's own."""
    as_program = argv is None
    args = parse(list(sys.argv[1:] if argv is None else argv))
    command = COMMANDS[args.command]
    if as_program and not command.runs_evals:
        # The package's Inspect hook is then not registered, so Inspect prints no banner
        # of hooks before the command's own lines (hooks.registration).
        os.environ[NO_EVAL_ENV] = command.module
    with options_as_flags(not command.runs_evals):
        return run_command(command, args)


def run_command(command: Command, args: argparse.Namespace) -> int:
    try:
        return int(command.function(command.run)(args))
    except BrokenPipeError:
        # The reader stopped early (`| head`): the rest goes nowhere, without a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        if not is_user_error(exc):
            raise
        from hss_inspect.core.errors import error_said, prerequisite

        # A media error or a missing file says what it is in its own words, without its type.
        said = error_said(exc) if prerequisite(exc) else str(exc)
        print(f"hss-inspect {args.command}: {said}", file=sys.stderr)
        return 1


@contextlib.contextmanager
def options_as_flags(flags: bool) -> Iterator[None]:
    """While a command that takes the task options as flags runs (its workers inherit it),
    messages name them as flags (`--frame-side`, not `-T frame_side`)."""
    before = os.environ.get(OPTIONS_AS_FLAGS_ENV)
    if flags:
        os.environ[OPTIONS_AS_FLAGS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(OPTIONS_AS_FLAGS_ENV, None)
        else:
            os.environ[OPTIONS_AS_FLAGS_ENV] = before


def is_user_error(exc: Exception) -> bool:
    """An error the user fixes (printed as one line), not a bug (shown with its traceback):
    a ValueError or KeyError from our own code is a bug, and keeps its traceback.

    Whatever raised a SetupError or MediaError has imported its module already, so these
    imports cost nothing here. Inspect's own PrerequisiteError (a missing key, a missing
    package) is one too."""
    from hss_inspect.core.errors import prerequisite
    from hss_inspect.media.errors import MediaError

    return prerequisite(exc) or isinstance(exc, MediaError | FileNotFoundError)


if __name__ == "__main__":
    sys.exit(main())
