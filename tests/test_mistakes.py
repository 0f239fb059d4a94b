"""A user's mistake costs nothing: each one below, typed on the real command line (`inspect
eval` of the package's tasks, and `hss-inspect`), stops at once with one line naming the
mistyped value and the closest valid one, exits non-zero, prints no traceback, and runs no
sample and calls no model. Every task option and every command flag is covered: a new one
is checked the moment it is declared."""

from __future__ import annotations

import argparse
import inspect as pyinspect
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hss_inspect import task as tasks
from hss_inspect.commands.cli import COMMANDS, command_parser, main
from hss_inspect.core.errors import SetupError
from hss_inspect.core.options import TASKS_OPTIONS
from tests.support.runs import CANDIDATE, INSPECT, JUDGE, lines_after_banner

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
# `hss-inspect estimate` of the scripted model on the demo set, before the mistake
ESTIMATE_DEMO = (HSS_INSPECT, "estimate", "--model", "hss/scripted", "--dataset", "demo")
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mistake:
    """What a user typed (`{log}` stands for a real log of the demo set), and the words the
    one line must hold: the mistyped value and the closest valid one."""

    name: str
    argv: tuple[str, ...]
    says: tuple[str, ...]


EVAL = (INSPECT, "eval")
GRADED = ("--model", CANDIDATE, "--model-role", f"grader={JUDGE}")
DEMO = ("hss_inspect/hss", "-T", "dataset=demo")

EVAL_MISTAKES = [
    Mistake(
        "misspelt option",
        (*EVAL, *DEMO, "-T", "medai=video", *GRADED),
        ("-T medai is not an option of hss_inspect/hss", "did you mean -T media?"),
    ),
    Mistake(
        "misspelt option of a preset",
        (*EVAL, "hss_inspect/hss_demo", "-T", "medai=video", *GRADED),
        ("-T medai is not an option", "did you mean -T media?", "hss-inspect options"),
    ),
    Mistake(
        "misspelt option of the audit",
        (*EVAL, "hss_inspect/hss_judge_audit", "-T", "dataset=demo", "-T", "kind=vague", *GRADED),
        ("-T kind is not an option of hss_inspect/hss_judge_audit", "did you mean -T kinds?"),
    ),
    Mistake(
        "misspelt choice",
        (*EVAL, *DEMO, "-T", "media=vidoe", *GRADED),
        ("-T media='vidoe' is not valid", "did you mean video?"),
    ),
    Mistake(
        "misspelt domain",
        (*EVAL, *DEMO, "-T", "domains=temporl", *GRADED),
        ("unknown domain 'temporl'", "did you mean 'temporal'?"),
    ),
    Mistake(
        "misspelt audit kind",
        (*EVAL, "hss_inspect/hss_judge_audit", "-T", "dataset=demo", "-T", "kinds=vauge", *GRADED),
        ("vauge unknown", "did you mean 'vague'?"),
    ),
    Mistake(
        "no judge bound",
        (*EVAL, *DEMO, "--model", CANDIDATE),
        ("no model is bound to the role 'grader'", "--model-role grader=<provider/model>"),
    ),
    Mistake(
        "misspelt role",
        (*EVAL, *DEMO, *GRADED, "--model-role", f"graderr={JUDGE}"),
        ("--model-role graderr is not a role of HSS", "did you mean --model-role grader?"),
    ),
    Mistake(
        "labeller asked for, none bound",
        (*EVAL, *DEMO, "-T", "labeler=true", *GRADED),
        ("needs a model bound to the role 'labeler'",),
    ),
]

COMMAND_MISTAKES = [
    Mistake(
        "misspelt command",
        (HSS_INSPECT, "reprot", "{log}"),
        ("'reprot' is not a command of hss-inspect", "did you mean 'report'?"),
    ),
    Mistake(
        "misspelt flag",
        (HSS_INSPECT, "report", "{log}", "--fromat", "md"),
        ("--fromat is not a flag of hss-inspect report", "did you mean --format?"),
    ),
    Mistake(
        "misspelt flag before a required one",
        (HSS_INSPECT, "estimate", "--modle", "hss/scripted", "--dataset", "demo"),
        ("--modle is not a flag of hss-inspect estimate", "did you mean --model?"),
    ),
    Mistake(
        "misspelt choice of a flag",
        (HSS_INSPECT, "report", "{log}", "--format", "mdd"),
        ("--format 'mdd' is not one of md, csv, json, html, register", "did you mean 'md'?"),
    ),
    Mistake(
        "misspelt recipe",
        (HSS_INSPECT, "recipe", "tabel1", "--dry-run"),
        ("name 'tabel1' is not one of", "did you mean 'table1'?"),
    ),
    Mistake(
        "misspelt model of Table 5",
        (HSS_INSPECT, "recipe", "table1", "--models", "GPT-6-astr", "--dry-run"),
        ("GPT-6-astr is not a model of the paper's Table 5", "did you mean GPT-6-astra?"),
    ),
    Mistake(
        "misspelt model sent elsewhere",
        (HSS_INSPECT, "recipe", "table1", "--as", "GPT-6-astr=openai/x", "--dry-run"),
        ("GPT-6-astr is not a model or judge of the paper's Table 5", "did you mean GPT-6-astra?"),
    ),
    Mistake(
        "misspelt task option of a recipe",
        (HSS_INSPECT, "recipe", "table1", "-T", "medai=video", "--dry-run"),
        ("-T medai is not an option of hss_inspect/hss", "did you mean -T media?"),
    ),
    Mistake(
        "misspelt domain of an estimate",
        (*ESTIMATE_DEMO, "--domains", "temporl"),
        ("unknown domain 'temporl'", "did you mean 'temporal'?"),
    ),
    Mistake(
        "misspelt sample id",
        (HSS_INSPECT, "rebuild-frames", "{log}", "--sample", "demo-dominos", "--out", "out"),
        ("demo-dominos is not a sample of", "did you mean demo-dominoes?"),
    ),
    Mistake(
        "misspelt Table 5 name of a log's model",
        (
            HSS_INSPECT,
            "report",
            "{log}",
            "--format",
            "register",
            "--paper-model",
            "hss/scripted=GPT-6-astr",
        ),
        ("GPT-6-astr is not a model of the paper's Table 5", "did you mean GPT-6-astra?"),
    ),
    Mistake(
        "misspelt task of the options",
        (HSS_INSPECT, "options", "hss_judge_audt"),
        ("task 'hss_judge_audt' is not one of hss, hss_judge_audit", "did you mean"),
    ),
    Mistake(
        "a log that is not there",
        (HSS_INSPECT, "report", "no-such-log.eval"),
        ("no-such-log.eval: no such file or folder",),
    ),
    Mistake(
        "a price file that is not there",
        (*ESTIMATE_DEMO, "--model-cost-config", "no-such-prices.yaml"),
        ("--model-cost-config no-such-prices.yaml: no such file",),
    ),
]


def test_the_page_of_mistakes_lists_every_mistake_tried() -> None:
    assert sorted(documented()) == sorted(m.name for m in EVAL_MISTAKES + COMMAND_MISTAKES)


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real log of one demo task, for the mistakes made about a log."""
    logs = tmp_path_factory.mktemp("demo-log")
    command = [INSPECT, "eval", "hss_inspect/hss_demo", "--model", "hss/scripted"]
    command += ["--model-role", "grader=hss/scripted", "--limit", "1", "--epochs", "1"]
    command += ["--log-dir", str(logs), "--display", "none"]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    (log,) = logs.glob("*.eval")
    return log


def run_mistake(
    mistake: Mistake, workdir: Path, model_server: tuple[str, Path], log: Path
) -> subprocess.CompletedProcess[str]:
    base_url = model_server[0]
    env = {**os.environ, "SCRIPTED_API_KEY": "k", "SCRIPTED_BASE_URL": base_url}
    env["COLUMNS"] = "400"  # keep each line whole
    argv = [word.replace("{log}", str(log)) for word in mistake.argv]
    if argv[:2] == list(EVAL):
        argv += ["--log-dir", str(workdir / "logs"), "--display", "plain"]
    return subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", EVAL_MISTAKES + COMMAND_MISTAKES, ids=lambda m: m.name)
def test_a_mistake_is_one_line_a_nonzero_exit_and_nothing_sent(
    mistake: Mistake, tmp_path: Path, model_server: tuple[str, Path], demo_log: Path
) -> None:
    requests_before = model_server[1].read_text().count("\n")
    done = run_mistake(mistake, tmp_path, model_server, demo_log)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output
    for words in mistake.says:
        assert words in output, output
    # one line, after Inspect's banner of the package's hooks where Inspect prints one
    assert len(lines_after_banner(output)) == 1, output
    assert not list(tmp_path.glob("logs/*.eval")), "a log was written: something ran"
    assert model_server[1].read_text().count("\n") == requests_before, "a model was called"
    assert documented()[mistake.name] == (done.returncode, shown_line(done, demo_log))


def shown_line(done: subprocess.CompletedProcess[str], log: Path) -> str:
    """The one line a mistake printed, with the log's path written LOG."""
    (line,) = lines_after_banner(done.stdout + done.stderr)
    return line.strip().replace(str(log), "LOG")


def documented() -> dict[str, tuple[int, str]]:
    """docs/mistakes.md: each mistake's exit status and the line it prints."""
    text = (ROOT / "docs" / "mistakes.md").read_text(encoding="utf-8")
    found = re.findall(r"^# (.+) \(exit (\d+)\)\n\$ .*\n(.*)$", text, flags=re.MULTILINE)
    return {name: (int(status), line) for name, status, line in found}


def misspelt(name: str) -> str:
    """The name with two letters in its middle swapped, as a hurried hand types it."""
    middle = len(name) // 2
    return name[: middle - 1] + name[middle] + name[middle - 1] + name[middle + 1 :]


def task_functions() -> list[object]:
    """Every task the package registers with Inspect."""
    from hss_inspect import _registry

    return [
        value
        for name, value in vars(_registry).items()
        if callable(value)
        and getattr(value, "__module__", "") == tasks.__name__
        and name.startswith("hss")
    ]


@pytest.mark.parametrize("function", task_functions(), ids=lambda f: f.__name__)
def test_every_task_refuses_each_misspelt_option_naming_the_right_one(function: object) -> None:
    parameters = pyinspect.signature(function).parameters  # type: ignore[arg-type]
    assert any(p.kind is p.VAR_KEYWORD for p in parameters.values()), "takes every name"
    task_name = {tasks.hss_judge_audit: "hss_judge_audit", tasks.hss_human: "hss_human"}.get(
        function, "hss"
    )
    for option in TASKS_OPTIONS[task_name]:
        wrong = misspelt(option)
        with pytest.raises(SetupError) as refused:
            function(**{wrong: "1"})  # type: ignore[operator]
        assert f"-T {wrong} is not an option" in str(refused.value), option
        assert f"did you mean -T {option}?" in str(refused.value), option


def parsers_of(command: str) -> list[tuple[list[str], argparse.ArgumentParser]]:
    """The command's parser, or each of its actions' (`human new`), with the words that
    reach it."""
    parser = command_parser(command)
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        return [([command], parser)]
    return [([command, name], own) for name, own in actions[0].choices.items()]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_flag_of_every_command_is_named_when_misspelt(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for words, parser in parsers_of(command):
        flags = [n for a in parser._actions for n in a.option_strings if n.startswith("--")]
        for flag in flags:
            wrong = "--" + misspelt(flag.removeprefix("--"))
            if wrong == flag:
                continue
            with pytest.raises(SystemExit) as exited:
                main([*words, wrong, "x"])
            assert exited.value.code == 2
            said = capsys.readouterr().err
            assert f"{wrong} is not a flag of hss-inspect {' '.join(words)}" in said, said
            assert f"did you mean {flag}?" in said, said


def test_the_prepare_the_estimate_suggests_runs_as_printed_on_the_same_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    estimate = ["estimate", "--model", "hss/scripted", "--dataset", "demo", "--epochs", "1"]
    estimate += ["--frame-side", "96", "--fps", "1", "--media", "video"]
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "first"))
    assert main(estimate) == 0
    said = capsys.readouterr().out
    suggested = re.search(r"\(`(hss-inspect prepare [^`]*)` does it off the clock\)", said)
    assert suggested is not None, said
    words = shlex.split(suggested.group(1))
    assert words[:2] == ["hss-inspect", "prepare"]
    for flag, value in (("--dataset", "demo"), ("--frame-side", "96"), ("--media", "video")):
        assert words[words.index(flag) + 1] == value, words
    # pasted into a fresh cache, it prepares what the run sends: nothing is left to decode
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "pasted"))
    assert main([*words[1:], "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(estimate) == 0
    assert "left to decode:      nothing" in capsys.readouterr().out


def test_flags_go_before_or_after_the_positional_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.logs import Item, Try, write_log

    first = write_log(tmp_path / "a.eval", [Item("t1", "retrodiction", "image", (Try(True),))])
    second = write_log(
        tmp_path / "b.eval", [Item("t2", "theory_of_mind", "video", (Try(False),))], model="x/y"
    )
    a, b = str(first), str(second)
    orders = [
        ["report", a, b, "--format", "json"],
        ["report", "--format", "json", a, b],
        ["report", a, "--format", "json", b],
        ["--format", "json", "report", a, b],
    ]
    printed = []
    for argv in orders:
        assert main(argv) == 0, argv
        printed.append(capsys.readouterr().out)
    assert all(text == printed[0] for text in printed)
    assert '"x/y"' in printed[0] and '"openai/gpt-test"' in printed[0]
