"""The manual and its pages name only what exists: links and anchors, `-T` options,
metrics, `hss-inspect` commands and their flags, task and scorer names, and files."""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import pytest
import yaml

from hss_inspect import _registry
from hss_inspect.commands.cli import COMMANDS
from hss_inspect.core.options import OPTIONS
from hss_inspect.core.taxonomy import DOMAINS, MEDIA_TYPES
from hss_inspect.grading.metrics import TaskOutcome, summarize

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# docs/mistakes.md types wrong names on purpose (tests/test_mistakes.py checks its lines)
NAMING_PAGES = [page for page in PAGES if page.name != "mistakes.md"]
REPO_FOLDERS = ("src/", "tests/", "task_configs/", "scorers/", "benchmarks/", "docs/", ".ci/")


def text_of(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    body = re.sub(r"```.*?```", "", text_of(page), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", body, flags=re.MULTILINE)}


def code_spans(page: Path) -> list[str]:
    """Inline code and every line of the fenced blocks."""
    text = text_of(page)
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.DOTALL)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    lines = [line for block in fenced for line in _joined(block).splitlines()]
    return inline + lines


def _joined(block: str) -> str:
    return block.replace("\\\n", " ")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_and_anchors_resolve(page: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", text_of(page)):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: link to missing {target}"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name}: no heading for {target}"


@pytest.mark.parametrize("page", NAMING_PAGES, ids=lambda p: p.name)
def test_every_task_option_named_exists(page: Path) -> None:
    named = set(re.findall(r"-T '?(\w+)=", text_of(page))) - {"name"}  # -T name=value
    assert named <= set(OPTIONS), f"{page.name}: unknown -T options {named - set(OPTIONS)}"


def metric_names() -> set[str]:
    first = DOMAINS[0]
    outcome = TaskOutcome(
        1.0, 1.0, media_type="image", domain=first.name, subdomain=first.subdomains[0].name
    )
    return set(summarize([outcome]))


def documented_metrics() -> set[str]:
    readme = text_of(ROOT / "README.md")
    table = readme.split("| metric | meaning |", 1)[1].split("\n\n", 1)[0]
    return {
        name for row in table.splitlines()[2:] for name in re.findall(r"`(\w+)`", row.split("|")[1])
    }


def test_the_metrics_table_names_the_metric_keys() -> None:
    groups = set(MEDIA_TYPES) | {d.label for d in DOMAINS}
    subdomains = {s.label for d in DOMAINS for s in d.subdomains}
    produced = metric_names() - subdomains  # subdomain labels are listed apart, below the table
    assert documented_metrics() == produced | groups
    assert not math.isnan(summarize([TaskOutcome(1.0, 1.0)])["pass_at_1"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_rate_named_is_a_metric(page: Path) -> None:
    rates = set(re.findall(r"`(\w+_rate)`", text_of(page)))
    assert rates <= metric_names(), f"{page.name}: {rates - metric_names()}"


def flags_of(command: str) -> set[str]:
    """The flags `hss-inspect COMMAND --help` lists (older hidden spellings are not)."""
    parser = argparse.ArgumentParser(prog=f"hss-inspect {command}")
    COMMANDS[command].function(COMMANDS[command].add_arguments)(parser)
    helps = [parser.format_help()] + [  # and each action's (`human new`)
        own.format_help()
        for a in parser._actions
        if isinstance(a, argparse._SubParsersAction)
        for own in a.choices.values()
    ]
    return set(re.findall(r"--[a-z][\w-]*", "".join(helps)))


def command_lines(page: Path) -> list[list[str]]:
    found = []
    for span in code_spans(page):
        for part in re.split(r"&&|;|\|", span):
            words = part.replace("[", " ").replace("]", " ").split()
            # `hss-inspect report: ...` is a line the command printed, not a command
            command = len(words) >= 2 and words[0] == "hss-inspect"
            if command and not words[1].startswith("-") and not words[1].endswith(":"):
                found.append(words[1:])
    return found


@pytest.mark.parametrize("page", NAMING_PAGES, ids=lambda p: p.name)
def test_every_command_and_flag_named_exists(page: Path) -> None:
    for words in command_lines(page):
        command = words[0]
        assert command in COMMANDS, f"{page.name}: no command hss-inspect {command}"
        flags = {w.split("=")[0] for w in words[1:] if w.startswith("--")}
        unknown = flags - flags_of(command)
        assert not unknown, f"{page.name}: hss-inspect {command} has no {sorted(unknown)}"


def registered_names() -> set[str]:
    listed = yaml.safe_load(text_of(ROOT / "src/hss_inspect/eval.yaml"))["tasks"]
    return {t["name"] for t in listed} | set(_registry.__all__)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_task_and_scorer_named_exists(page: Path) -> None:
    named = set(re.findall(r"hss_inspect/(\w+)(?![\w/.])", text_of(page)))
    folders = {p.name for p in (ROOT / "src/hss_inspect").iterdir() if p.is_dir()}
    unknown = named - registered_names() - folders
    assert not unknown, f"{page.name}: no task or component {sorted(unknown)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_file_named_exists(page: Path) -> None:
    for span in code_spans(page):
        for word in span.split():
            word = word.strip("`'\",;:()")
            if word.startswith(REPO_FOLDERS):
                path = word.split("::")[0].split("@")[0].rstrip(".")  # file@task: the file
                matches = list(ROOT.glob(path)) if "*" in path else [ROOT / path]
                assert any(m.exists() for m in matches), f"{page.name}: no file {path}"
