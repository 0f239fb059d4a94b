"""What `hss-inspect --version` and each command's `--help` tell a newcomer: the version,
every argument described, every task `options` takes."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from hss_inspect.commands.cli import COMMANDS, command_parser, main
from hss_inspect.core.options import TASKS_OPTIONS

ROOT = Path(__file__).resolve().parents[1]
HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))


def test_version_names_the_package_and_the_task_version() -> None:
    done = subprocess.run([HSS_INSPECT, "--version"], capture_output=True, text=True, timeout=60)
    entry = yaml.safe_load((ROOT / "src/hss_inspect/eval.yaml").read_text(encoding="utf-8"))
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout == f"hss-inspect {version('hss-inspect')} (task version {entry['version']})\n"
    )


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Each command's parser, or each of its actions' (`human serve`)."""
    found = []
    for name in COMMANDS:
        parser = command_parser(name)
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        own = actions[0].choices.items() if actions else [("", parser)]
        found += [(f"{name} {action}".strip(), sub) for action, sub in own]
    return found


@pytest.mark.parametrize(("words", "parser"), parsers(), ids=[w for w, _ in parsers()])
def test_every_argument_of_every_command_is_described(
    words: str, parser: argparse.ArgumentParser
) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        shown = action.option_strings or [action.dest]
        assert action.help and action.help.strip(" []0123456789"), (words, shown)


def test_options_help_names_every_task_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["options", "--help"])
    text = re.sub(r"\s+", " ", capsys.readouterr().out)
    described = text[text.index("positional arguments") :]
    for task in TASKS_OPTIONS:
        assert re.search(rf"\b{task}\b", described.split("{", 1)[-1].split("}", 1)[-1]), task
