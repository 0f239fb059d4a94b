"""Wrong options and missing roles are one clear line: Inspect prints a PrerequisiteError
as its message alone. The class lives in a private module of Inspect, so this pins it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hss_inspect.core import options as opt
from hss_inspect.core.errors import InputError, SetupError
from hss_inspect.task import hss
from tests.support.runs import INSPECT, lines_after_banner

pytestmark = pytest.mark.inspect_api


def test_inspect_still_has_prerequisite_error_where_we_import_it() -> None:
    from inspect_ai._util.error import PrerequisiteError

    assert issubclass(SetupError, PrerequisiteError)
    error = SetupError("-T media='videos' is not valid")
    assert error.message == str(error) == "-T media='videos' is not valid"


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("media", "videos", "use one of all, image, video (did you mean video?)"),
        ("condition", "sighted", "use one of standard, blind, oracle, agentic"),
        ("fps", 0, "use a number greater than 0"),
        ("fps", "fast", "use a number greater than 0"),
        ("max_frames", 0, "use a whole number of at least 1"),
        ("max_images", "many", "use a whole number of at least 1"),
        ("native_video", "maybe", "use one of auto, true, false"),
        ("judge_retries", -1, "use a whole number of at least 0"),
    ],
)
def test_each_bad_option_names_itself_and_the_valid_values(
    option: str, value: object, expected: str, hss_repo: Path
) -> None:
    with pytest.raises(SetupError) as raised:
        hss(dataset=str(hss_repo), **{option: value})
    assert str(raised.value) == f"-T {option}={value!r} is not valid: {expected}."


def test_an_unknown_domain_lists_the_known_labels(hss_repo: Path) -> None:
    with pytest.raises(SetupError, match=r"unknown domain 'spatial'.*physical"):
        hss(dataset=str(hss_repo), domains="spatial")


def test_option_checks_accept_what_a_command_line_can_type() -> None:
    assert opt.positive_number("fps", "2.5") == 2.5
    assert opt.whole_number("max_frames", "10", 1) == 10
    assert opt.optional_whole_number("max_images", "none", 1) is None
    assert opt.choice("media", " Video ", ["all", "image", "video"]) == "video"


@pytest.mark.slow
def test_the_command_line_prints_one_line_not_a_traceback(hss_repo: Path, tmp_path: Path) -> None:
    command = [INSPECT, "eval", "hss_inspect/hss", "--model", "mockllm/model"]
    command += ["-T", "media=videos", "-T", f"dataset={hss_repo}", "--log-dir", str(tmp_path)]
    done = subprocess.run(
        [*command, "--display", "plain"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "300", "PATH": str(Path(INSPECT).parent)},
    )
    output = done.stdout + done.stderr
    said = "-T media='videos' is not valid: use one of all, image, video (did you mean video?)."
    assert said in output
    assert "Traceback" not in output and done.returncode == 1
    # Inspect's banner (its version and the package's hooks) precedes the message
    assert len(lines_after_banner(output)) <= 1, output


def test_a_selection_with_no_tasks_is_a_setup_error_naming_the_filters(hss_repo: Path) -> None:
    from hss_inspect.core.taxonomy import subdomain_label
    from tests.support.fixture_repo import TASKS

    present = {(t.media_type, t.subdomain) for t in TASKS}
    media, subdomain = min(
        (m, s) for m in ("image", "video") for _, s in present if (m, s) not in present
    )
    # by its label: some full names hold a comma, which a list option splits on
    with pytest.raises(SetupError, match=r"no HSS tasks .* loosen the filters"):
        hss(dataset=str(hss_repo), media=media, subdomains=subdomain_label(subdomain))


# What `inspect eval` printed, as written by Inspect 0.3.285 (its banner, then the message
# of a PrerequisiteError; or a traceback ending in the error).
BANNER = (
    "inspect_ai v0.3.285\n- hooks enabled: 2\n  hss_inspect/hss_log_size: Warns before an "
    "HSS run that would log >1 GB of \nimages\n  hss_inspect/hss_run_pace: Measures\n\n"
)
NO_KEY = (
    "\nERROR: Unable to initialise Anthropic client\n\n"
    "No ANTHROPIC_API_KEY defined in the environment.\n"
)
TRACEBACK = (
    'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
    "    raise ValueError(\n  + Exception Group Traceback (most recent call last):\n"
    "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
    "\nDuring handling of the above exception, another exception occurred:\n\n"
    'Traceback (most recent call last):\n  File "y.py", line 2, in f\n'
    "openai.AuthenticationError: Error code: 401 - invalid api key\n"
)


def test_why_inspect_failed_is_its_own_message_without_the_banner() -> None:
    from hss_inspect.core.errors import inspect_said

    said = "Unable to initialise Anthropic client: No ANTHROPIC_API_KEY defined in the environment."
    assert inspect_said(BANNER + NO_KEY) == said
    assert inspect_said(NO_KEY + "Monitor from another shell: inspect ctl task list\n") == said
    refused = "AuthenticationError: Error code: 401 - invalid api key"
    assert inspect_said(BANNER + TRACEBACK) == refused
    assert inspect_said(BANNER) == ""


def test_inspects_own_prerequisite_error_is_one_plain_line() -> None:
    from inspect_ai._util.error import PrerequisiteError

    from hss_inspect.core.errors import error_said

    error = PrerequisiteError("ERROR: No [bold][blue]OPENAI_API_KEY[/blue][/bold]\n\ndefined.")
    assert error_said(error) == "No OPENAI_API_KEY: defined."
    assert error_said(SetupError("rubric [id: c1] is [bold]")) == "rubric [id: c1] is [bold]"
    assert error_said(KeyError("x")) == "KeyError: 'x'"


def test_a_pilot_with_no_finished_sample_says_the_error_inspect_recorded(
    tmp_path: Path,
) -> None:
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log

    from hss_inspect.report.pilot import read_pilot
    from tests.support.logs import Item, Try, write_log

    failed = "ProviderFailed('task t1: openai/gpt-test failed after Inspect's retries')"
    path = write_log(tmp_path / "pilot.eval", [Item("t1", "retrodiction", "image", (Try(False),))])
    log = read_eval_log(path)
    for sample in log.samples or []:
        sample.error = EvalError(message=failed, traceback="", traceback_ansi="")
    write_eval_log(log, path)
    with pytest.raises(InputError) as raised:
        read_pilot(path, "openai/gpt-test")
    assert str(raised.value) == (
        f"--pilot {path}: no finished sample of openai/gpt-test to measure; 1 sample(s) ended "
        f"in an error, the first: {failed}"
    )
    log.status, log.error = (
        "error",
        EvalError(
            message="No [bold]OPENAI_API_KEY[/bold] defined", traceback="", traceback_ansi=""
        ),
    )
    write_eval_log(log, path)
    with pytest.raises(InputError, match=r"; the run ended in an error: No \[bold\]OPENAI"):
        read_pilot(path, "openai/gpt-test")
