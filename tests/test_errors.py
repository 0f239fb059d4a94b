"""Wrong options and missing roles are one clear line: Inspect prints a PrerequisiteError
as its message alone. The class lives in a private module of Inspect, so this pins it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hss_inspect.core import options as opt
from hss_inspect.core.errors import SetupError
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
