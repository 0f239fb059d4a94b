"""HSS inside lmms-eval (the `lmms` extra, docs/lmms-eval.md): the real `lmms-eval` command
line and the real `inspect eval` run against one scripted OpenAI-compatible server, which
answers each request from its content; the two must send the same frames (count, times,
decoded pixels), get the same verdicts and the same pass@1.

Run in the extra's own venv (`.ci/run` builds it): `pytest -m lmms`. Where lmms_eval is not
installed the tests that need it are skipped; the import check runs everywhere.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageOps

from hss_inspect.lmms.__main__ import tasks_folder
from tests.support.fixture_repo import EXPECTED_ATTEMPTS, TASKS, build_repo
from tests.support.runs import CANDIDATE, run_eval
from tests.support.servers import scripted_models

HAS_LMMS = importlib.util.find_spec("lmms_eval") is not None
needs_lmms = pytest.mark.skipif(not HAS_LMMS, reason="lmms-eval: pip install '.[lmms]'")
pytestmark = pytest.mark.lmms

LMMS_EVAL = str(Path(sys.executable).with_name("lmms-eval"))
# The fixture's tasks whose grades do not depend on what the server saw before (ONCE counts
# the server's calls, which two harnesses on one server would share).
SIDE_BY_SIDE = tuple(t for t in TASKS if t.behaviour != "ONCE")
_FRAME_LABEL = re.compile(r"^Frame at ([0-9.]+) s:$")


def test_importing_the_package_never_imports_torch_or_lmms_eval() -> None:
    code = (
        "import sys, hss_inspect, hss_inspect.task, hss_inspect.lmms.turn, "
        "hss_inspect.lmms.results, hss_inspect.lmms.judge, hss_inspect.lmms.docs\n"
        "import importlib.util as u\n"
        "spec = u.spec_from_file_location('utils', hss_inspect.lmms.__path__[0] + "
        "'/tasks/utils.py')\n"
        "spec.loader.exec_module(u.module_from_spec(spec))\n"
        "print(sorted(m for m in ('torch', 'lmms_eval') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_options_come_from_the_preset_then_hss_task_args() -> None:
    from hss_inspect.lmms.options import run_options

    options = run_options({"media": "image"}, {"HSS_TASK_ARGS": '{"media": "video", "fps": 1}'})
    assert options.values["media"] == "video" and options.media.frames.fps == 1.0
    # the clip always goes as frames: lmms-eval's models would decode it with their own
    assert options.media.native_video == "false"
    assert run_options({"dataset": "demo"}, {}).values["dataset"] == "demo"


@pytest.mark.parametrize(
    ("task_args", "message"),
    [
        ('{"fsp": 1}', "fps"),
        ('{"condition": "blind"}', "HSS_TASK_ARGS"),
        ("fps=1", "not JSON"),
        ('{"native_video": "true"}', "native_video=true cannot be honoured"),
        ('{"fps": -1}', "fps"),
    ],
)
def test_a_wrong_hss_task_args_says_what_to_change(task_args: str, message: str) -> None:
    from hss_inspect.lmms.options import run_options

    with pytest.raises(Exception, match=message) as raised:
        run_options({}, {"HSS_TASK_ARGS": task_args})
    assert "\n" not in str(raised.value)


def test_a_run_without_a_judge_model_says_which_variable_to_set() -> None:
    from hss_inspect.core.errors import SetupError
    from hss_inspect.lmms.judge import judge_server_reply

    with pytest.raises(SetupError, match="set MODEL_VERSION"):
        judge_server_reply({})


# ---- the two harnesses' requests, reduced to what a model receives ---------------------


def decoded_pixels(url: str) -> str:
    """A digest of the image as a viewer shows it (upright), whatever its encoding."""
    data = base64.b64decode(url.partition(",")[2])
    with Image.open(io.BytesIO(data)) as image:
        upright = ImageOps.exif_transpose(image).convert("RGB")
        return hashlib.sha256(f"{upright.size}".encode() + upright.tobytes()).hexdigest()


def received(request: dict[str, Any]) -> dict[str, Any]:
    """What one candidate request carries: its texts in order, its frames' times and the
    digests of its images' decoded pixels."""
    (message,) = [m for m in request["messages"] if m["role"] == "user"]
    texts = [p["text"] for p in message["content"] if p["type"] == "text"]
    images = [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
    times = [float(m.group(1)) for t in texts if (m := _FRAME_LABEL.match(t.strip()))]
    system = [m for m in request["messages"] if m["role"] == "system"]
    return {
        "texts": texts,
        "frame_times": times,
        "pixels": [decoded_pixels(url) for url in images],
        "system": [m["content"] for m in system],
    }


def turns(requests: list[dict[str, Any]]) -> Counter[str]:
    """The candidate's requests as a multiset of what each carried."""
    sent = [received(r) for r in requests if r.get("model") == "candidate"]
    return Counter(json.dumps(turn, sort_keys=True) for turn in sent)


def judge_conversations(requests: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """Every judge conversation as (role, text) pairs, sorted (the order of calls differs)."""
    talks = [
        [(m["role"], m["content"]) for m in r["messages"]]
        for r in requests
        if r.get("model") == "judge"
    ]
    return sorted(talks)


# ---- running lmms-eval --------------------------------------------------------------


def lmms_env(base_url: str, task_args: dict[str, Any], cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HSS_TASK_ARGS": json.dumps(task_args),
        "HSS_MODEL": CANDIDATE,
        "HSS_INSPECT_CACHE": str(cache),
        "API_TYPE": "openai",
        "MODEL_VERSION": "judge",
        "OPENAI_API_KEY": "test-key",
        "OPENAI_API_URL": base_url,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "WANDB_MODE": "disabled",
        "COLUMNS": "400",
    }


def run_lmms(
    task: str, out: Path, base_url: str, task_args: dict[str, Any], cache: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], list[dict[str, Any]]]:
    """`lmms-eval --model openai --tasks TASK` against the scripted server; the process,
    its results file and its logged samples."""
    command = [
        LMMS_EVAL,
        "--model",
        "openai",
        "--model_args",
        f"model_version=candidate,base_url={base_url},api_key=test-key,num_concurrent=4",
        "--tasks",
        task,
        "--include_path",
        str(tasks_folder()),
        "--output_path",
        str(out),
        "--log_samples",
    ]
    env = lmms_env(base_url, task_args, cache)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    (results_file,) = out.rglob("*_results.json")
    (samples_file,) = out.rglob(f"*_samples_{task}.jsonl")
    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    return done, json.loads(results_file.read_text()), samples


def printed_table(stdout: str) -> str:
    return "\n".join(line for line in stdout.splitlines() if line.startswith("|"))


# ---- the side-by-side run -------------------------------------------------------------


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both harnesses on one fixture release and one scripted server."""
    repo = build_repo(tmp_path_factory.mktemp("release"), SIDE_BY_SIDE)
    with scripted_models(tmp_path_factory.mktemp("server")) as (base_url, request_log):
        cache = tmp_path_factory.mktemp("cache")
        log, _ = run_eval(
            "hss_inspect/hss",
            tmp_path_factory.mktemp("inspect-logs"),
            base_url,
            env={"HSS_INSPECT_CACHE": str(cache)},
            task_args={"dataset": repo},
        )
        inspect_requests = [json.loads(line) for line in request_log.read_text().splitlines()]
        done, results, samples = run_lmms(
            "hss", tmp_path_factory.mktemp("lmms-out"), base_url, {"dataset": str(repo)}, cache
        )
        every = [json.loads(line) for line in request_log.read_text().splitlines()]
    return {
        "inspect_log": log,
        "inspect_requests": inspect_requests,
        "lmms_requests": every[len(inspect_requests) :],
        "lmms_results": results,
        "lmms_samples": samples,
        "lmms_stdout": done.stdout,
    }


def inspect_tasks(log: Any) -> dict[str, dict[str, Any]]:
    """Per task: its attempts' (pass, rubric) as Inspect scored them, None when ungraded."""
    tasks: dict[str, dict[str, Any]] = defaultdict(lambda: {"attempts": []})
    for sample in log.samples:
        value = sample.scores["rubric_judge"].value
        graded = not math.isnan(value["pass"])
        tasks[sample.id]["attempts"].append((value["pass"], value["rubric"]) if graded else None)
    return dict(tasks)


def lmms_tasks(samples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task: its outcome as the lmms-eval run recorded it."""
    return {s["pass_at_1"]["task_id"]: s["pass_at_1"] for s in samples}


def mean_or_none(attempts: list[tuple[float, float] | None], index: int) -> float | None:
    graded = [a[index] for a in attempts if a is not None]
    return sum(graded) / len(graded) if graded else None


@needs_lmms
@pytest.mark.slow
def test_both_harnesses_send_the_same_frames_and_images(side_by_side: dict[str, Any]) -> None:
    ours, theirs = turns(side_by_side["inspect_requests"]), turns(side_by_side["lmms_requests"])
    # three attempts of every task, each the same turn in both harnesses
    assert sum(ours.values()) == sum(theirs.values()) == 3 * len(SIDE_BY_SIDE)
    assert theirs == ours
    lines = ["question | requests Inspect/lmms-eval | images | frame times"]
    for key, count in sorted(ours.items()):
        turn = json.loads(key)
        times = turn["frame_times"]
        lines.append(
            f"{turn['texts'][-1]} | {count}/{theirs[key]} | {len(turn['pixels'])} | {times}"
        )
    print("\n".join(lines))


@needs_lmms
@pytest.mark.slow
def test_both_harnesses_ask_the_judge_the_same_and_get_the_same_verdicts(
    side_by_side: dict[str, Any],
) -> None:
    assert judge_conversations(side_by_side["inspect_requests"]) == judge_conversations(
        side_by_side["lmms_requests"]
    )
    ours = inspect_tasks(side_by_side["inspect_log"])
    theirs = lmms_tasks(side_by_side["lmms_samples"])
    assert sorted(ours) == sorted(theirs) == sorted(t.task_id for t in SIDE_BY_SIDE)
    lines = ["task | expected pass | Inspect pass, rubric | lmms-eval pass, rubric, failures"]
    for fixture in SIDE_BY_SIDE:
        expected = EXPECTED_ATTEMPTS[fixture.behaviour]
        inspect_attempts = ours[fixture.task_id]["attempts"]
        assert inspect_attempts == expected
        record = theirs[fixture.task_id]
        assert record["pass_"] == mean_or_none(expected, 0)
        assert record["rubric"] == mean_or_none(expected, 1)
        assert record["grading_failure"] == (1.0 if fixture.behaviour == "GARBLE" else 0.0)
        assert record["no_answer"] == (1.0 if fixture.behaviour == "EMPTY" else 0.0)
        lines.append(
            f"{fixture.task_id} | {mean_or_none(expected, 0)} | "
            f"{mean_or_none(inspect_attempts, 0)}, {mean_or_none(inspect_attempts, 1)} | "
            f"{record['pass_']}, {record['rubric']}, {record['grading_failure']}"
        )
    print("\n".join(lines))


@needs_lmms
@pytest.mark.slow
def test_both_harnesses_report_the_same_pass_at_1(side_by_side: dict[str, Any]) -> None:
    inspect_metrics = side_by_side["inspect_log"].results.scores[0].metrics
    lmms_metrics = side_by_side["lmms_results"]["results"]["hss"]
    # seven tasks; GARBLE is left out (a grading failure in every attempt), and of the six
    # graded the three PASS and FLAKY pass, FAIL and EMPTY do not: 4 of 6
    expected = {"pass_at_1": 4 / 6, "ungraded_tasks": 1.0, "grading_failure_rate": 1 / 7}
    # every number of Inspect's `hss` metric (the breakdowns the selection has, the counts)
    lines = ["metric | Inspect | lmms-eval"]
    for key, value in inspect_metrics.items():
        ours, theirs = value.value, lmms_metrics[f"{key},all_attempts"]
        assert theirs == pytest.approx(ours, abs=1e-12), key
        lines.append(f"{key} | {ours:.4f} | {theirs:.4f}")
    for key, value in expected.items():
        assert inspect_metrics[key].value == pytest.approx(value)
        assert lmms_metrics[f"{key},all_attempts"] == pytest.approx(value)
    print("\n".join(lines))
    print(printed_table(side_by_side["lmms_stdout"]))


@needs_lmms
@pytest.mark.slow
def test_the_demo_runs_in_lmms_eval_and_prints_its_table(tmp_path: Path) -> None:
    with scripted_models(tmp_path / "server") as (base_url, request_log):
        done, results, samples = run_lmms("hss_demo", tmp_path / "out", base_url, {}, tmp_path)
        requests = [json.loads(line) for line in request_log.read_text().splitlines()]
    table = printed_table(done.stdout)
    print(table)
    assert "hss_demo" in table and "pass_at_1" in table
    demo = results["results"]["hss_demo"]
    # eight tasks, three attempts each, one judge call per attempt (the scripted judge
    # always answers readably); its candidate answers FAIL to a question with no behaviour
    # word, which the judge marks unmet on the first criterion: pass@1 is 0
    assert len(samples) == 8 and demo["tasks,all_attempts"] == 8
    assert sum(r["model"] == "candidate" for r in requests) == 24
    assert sum(r["model"] == "judge" for r in requests) == 24
    assert demo["pass_at_1,all_attempts"] == 0.0
    assert demo["grading_failure_rate,all_attempts"] == 0.0
