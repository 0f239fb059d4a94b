"""Each task option is declared once (hss_inspect.core.options): the tasks' signatures,
their Args docstrings, the commands' flags and the README's table all follow it."""

from __future__ import annotations

import inspect as pyinspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from hss_inspect import task as tasks
from hss_inspect.commands.cli import main
from hss_inspect.core.errors import SetupError
from hss_inspect.core.options import OPTIONS, TASK_OPTIONS, options_table
from tests.support.fixture_repo import write_video

ROOT = Path(__file__).resolve().parents[1]
OPTION_TASKS = (tasks.hss, tasks.hss_judge_audit)


def documented_args(function: object) -> dict[str, str]:
    """The `Args:` section of a docstring: parameter -> its text on one line."""
    doc = pyinspect.getdoc(function) or ""
    section = doc.split("Args:", 1)[1]
    found: dict[str, str] = {}
    for line in section.splitlines():
        entry = re.match(r"\s{4}(\*{0,2}\w+): (.*)", line)
        if entry:
            name = entry.group(1)
            found[name] = entry.group(2)
        elif line.strip() and found:
            found[name] += " " + line.strip()
    return found


@pytest.mark.parametrize("function", OPTION_TASKS, ids=lambda f: f.__name__)
def test_task_parameters_are_the_declared_options_with_their_defaults(function: object) -> None:
    parameters = named_parameters(function)
    assert set(parameters) <= set(OPTIONS)
    for name, parameter in parameters.items():
        assert parameter.default == OPTIONS[name].default, name


def named_parameters(function: object) -> dict[str, pyinspect.Parameter]:
    """A task's options: its parameters but `**kwargs`, which takes the names it refuses."""
    parameters = pyinspect.signature(function).parameters  # type: ignore[arg-type]
    return {n: p for n, p in parameters.items() if p.kind is not p.VAR_KEYWORD}


@pytest.mark.parametrize("function", OPTION_TASKS, ids=lambda f: f.__name__)
def test_each_task_documents_every_option_with_its_declared_help(function: object) -> None:
    documented = documented_args(function)
    assert set(documented) == {*named_parameters(function), "**kwargs"}
    shared = set(named_parameters(tasks.hss))
    for name, text in documented.items():
        if name == "**kwargs":
            continue
        # the audit's shared options point to hss's, whose text is checked above
        borrowed = function is not tasks.hss and name in shared and text == "as for `hss`."
        assert borrowed or text == OPTIONS[name].help, name


def test_every_preset_documents_its_keyword_arguments() -> None:
    presets = [getattr(tasks, n) for n in ("hss_image", "hss_video", "hss_blind", "hss_agentic")]
    presets += [tasks.hss_demo, tasks.hss_oracle]
    for preset in presets:
        assert set(documented_args(preset)) == {"**kwargs"}, preset.__name__


@pytest.mark.parametrize(
    ("command", "flag", "value", "rule"),
    [
        (["frames", "clip.mp4", "--out", "x"], "--frame-side", "8", "at least 16"),
        (["prepare"], "--max-frames", "0", "at least 1"),
        (["estimate", "--model", "hss/scripted"], "--fps", "-2", "greater than 0"),
        (["estimate", "--model", "hss/scripted"], "--native-video", "maybe", "auto, true, false"),
        (["prepare"], "--media", "audio", "all, image, video"),
    ],
)
def test_a_flag_refuses_what_the_task_option_refuses(
    capsys: pytest.CaptureFixture[str], command: list[str], flag: str, value: str, rule: str
) -> None:
    option = flag.removeprefix("--").replace("-", "_")
    with pytest.raises(SetupError) as refused:
        OPTIONS[option].check(value)
    assert rule in str(refused.value)
    with pytest.raises(SystemExit) as exited:
        main([*command, flag, value])
    assert exited.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err


def test_older_flag_spellings_still_work(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, seconds=2.0, fps=10)
    out = tmp_path / "frames"
    assert main(["frames", str(clip), "--out", str(out), "--frame-side", "64", "--no-cache"]) == 0
    written = sorted(out.glob("*.jpg"))
    assert written
    with Image.open(written[0]) as first:
        assert max(first.size) == 64  # the 96 x 64 clip, its longest side brought to 64


def test_the_readme_options_table_is_the_declared_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert options_table(TASK_OPTIONS) in readme


@pytest.mark.parametrize(
    "command",
    [
        ["--help"],
        ["cache"],
        ["frames", "--help"],
        ["build", "status", "--help"],
        ["build", "funnel", "--help"],
    ],
)
def test_light_commands_start_without_importing_inspect(command: list[str]) -> None:
    probe = (
        "import sys\nfrom hss_inspect.commands.cli import main\n"
        f"try:\n    main({command!r})\nexcept SystemExit:\n    pass\n"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
