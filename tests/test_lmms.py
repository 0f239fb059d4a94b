"""HSS inside lmms-eval (the `lmms` extra, docs/lmms-eval.md): the real `lmms-eval` command
line and the real `inspect eval` run against one scripted OpenAI-compatible server, which
answers each request from its content; the two must send the same frames (count, times,
the JPEG bytes themselves, a clip at the 500-frame cap among them), get the same verdicts
and the same pass@1.

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
import pickle
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageOps

from hss_inspect.lmms.__main__ import tasks_folder
from tests.support.fixture_repo import (
    EXPECTED_ATTEMPTS,
    TASKS,
    FixtureTask,
    build_repo,
    write_video,
)
from tests.support.runs import CANDIDATE, run_eval
from tests.support.servers import scripted_models

HAS_LMMS = importlib.util.find_spec("lmms_eval") is not None
needs_lmms = pytest.mark.skipif(not HAS_LMMS, reason="lmms-eval: pip install '.[lmms]'")
pytestmark = pytest.mark.lmms

LMMS_EVAL = str(Path(sys.executable).with_name("lmms-eval"))
# A 300 s clip at the protocol's 2 fps: 600 frames planned, thinned to the 500-frame cap.
LONG_CLIP = FixtureTask(
    "vid-long",
    "PASS",
    "Temporal & Causal Dynamics",
    "Extrapolation",
    "video",
    "media/vid_long.mp4",
    ({"id": "c1", "title": "States the key fact"},),
)
LONG_SIZE, FRAME_CAP = (320, 180), 500
# The fixture's tasks whose grades do not depend on what the server saw before (ONCE counts
# the server's calls, which two harnesses on one server would share), and the long clip.
SIDE_BY_SIDE = (*(t for t in TASKS if t.behaviour != "ONCE"), LONG_CLIP)
# lmms-eval's quality for an image it encodes as JPEG itself (LMMS_IMAGE_JPEG_QUALITY unset)
LMMS_JPEG_QUALITY = 85
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


# ---- the pictures lmms-eval's models are handed -------------------------------------


def jpeg_of(pixels: Image.Image, quality: int = 90, orientation: int | None = None) -> bytes:
    buffer = io.BytesIO()
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    pixels.save(buffer, format="JPEG", quality=quality, exif=exif.tobytes())
    return buffer.getvalue()


def upright_pixels(data: bytes) -> tuple[tuple[int, int], bytes]:
    """The picture in `data` as a viewer shows it, decoded by Pillow here."""
    with Image.open(io.BytesIO(data)) as opened:
        upright = ImageOps.exif_transpose(opened).convert("RGB")
        return upright.size, upright.tobytes()


def noise(size: tuple[int, int], seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))


@pytest.mark.parametrize("orientation", [None, 6])
def test_a_picture_saved_as_jpeg_writes_the_protocols_bytes(
    tmp_path: Path, orientation: int | None
) -> None:
    from hss_inspect.lmms.pictures import EncodedPicture

    data = jpeg_of(noise((64, 48)), orientation=orientation)
    picture = EncodedPicture.decode(data)
    # a local model sees the decoded picture, turned upright
    assert (picture.size, picture.convert("RGB").tobytes()) == upright_pixels(data)
    # saved as JPEG in the ways lmms-eval's models save (a buffer and a quality, a .jpeg
    # file, JPG), it is the protocol's bytes
    for name in ("JPEG", "jpg"):
        buffer = io.BytesIO()
        picture.save(buffer, format=name, quality=LMMS_JPEG_QUALITY)
        assert buffer.getvalue() == data
    picture.save(tmp_path / "frame.jpeg")
    assert (tmp_path / "frame.jpeg").read_bytes() == data
    # as PNG it is the decoded pixels, losslessly
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    assert upright_pixels(buffer.getvalue()) == upright_pixels(data)
    # a copy (a model's resize or conversion) is new pixels: encoded anew
    buffer = io.BytesIO()
    picture.copy().save(buffer, format="JPEG", quality=LMMS_JPEG_QUALITY)
    assert buffer.getvalue() != data
    # and a copy through pickling keeps the bytes
    again = pickle.loads(pickle.dumps(picture))
    assert again.encoded == data and again.tobytes() == picture.tobytes()


def test_local_models_get_the_decoded_picture_of_the_inspect_turn() -> None:
    """The demo's first image (lmms-eval's own task objects hand a clip's frames over the
    same way: test_a_local_lmms_eval_model_gets_the_decoded_pictures)."""
    from inspect_ai.model import ContentImage

    from hss_inspect.lmms import turn
    from hss_inspect.lmms.docs import task_docs
    from hss_inspect.lmms.options import run_options

    options = run_options({"dataset": "demo", "media": "image"}, {})
    doc = task_docs(options)[0]
    (sent,) = [
        base64.b64decode(part.image.partition(",")[2])
        for part in turn.turn_content(doc, options)
        if isinstance(part, ContentImage)
    ]
    (message,) = turn.chat_messages(doc, options)
    (picture,) = [p["url"] for p in message["content"] if p["type"] == "image"]
    assert isinstance(picture, Image.Image)
    assert (picture.size, picture.convert("RGB").tobytes()) == upright_pixels(sent)
    (visual,) = turn.visuals(doc, options)
    assert visual.tobytes() == picture.tobytes()


@pytest.mark.parametrize(
    ("declared", "environ"),
    [
        # a model the YAML does not name: lmms-eval hands the task the whole table
        ({"openai": {"writes_images_as": "PNG"}}, {}),
        (None, {}),
        ({"writes_images_as": "LMMS_IMAGE_ENCODE_FORMAT"}, {"LMMS_IMAGE_ENCODE_FORMAT": "JPEG"}),
        ({"writes_images_as": "LMMS_IMAGE_ENCODE_FORMAT"}, {"LMMS_IMAGE_ENCODE_FORMAT": "jpg"}),
    ],
)
def test_a_model_that_writes_jpeg_or_reads_the_pixels_runs(
    declared: dict[str, Any] | None, environ: dict[str, str]
) -> None:
    from hss_inspect.lmms.pictures import check_images_go_as_jpeg

    check_images_go_as_jpeg(declared, environ)


def test_a_model_that_would_write_the_frames_as_png_says_which_variable_to_set() -> None:
    from hss_inspect.core.errors import SetupError
    from hss_inspect.lmms.pictures import check_images_go_as_jpeg

    declared = {"writes_images_as": "LMMS_IMAGE_ENCODE_FORMAT"}
    with pytest.raises(SetupError, match="set LMMS_IMAGE_ENCODE_FORMAT=JPEG") as raised:
        check_images_go_as_jpeg(declared, {})
    assert "\n" not in str(raised.value)


# ---- the two harnesses' requests, reduced to what a model receives ---------------------


def sent_images(request: dict[str, Any]) -> list[bytes]:
    """The bytes of each image of a request's user turn, in order."""
    (message,) = [m for m in request["messages"] if m["role"] == "user"]
    urls = [p["image_url"]["url"] for p in message["content"] if p["type"] == "image_url"]
    return [base64.b64decode(url.partition(",")[2]) for url in urls]


def as_lmms_eval_writes(data: bytes) -> bytes:
    """What lmms-eval's `openai` model sends (LMMS_IMAGE_ENCODE_FORMAT=JPEG) for an image
    the Inspect task sent as `data`: a JPEG as it is; another image (a PNG of the release,
    sent untouched by Inspect) as Pillow's JPEG of its upright pixels at lmms-eval's
    quality, computed here."""
    with Image.open(io.BytesIO(data)) as opened:
        if opened.format == "JPEG":
            return data
        upright = ImageOps.exif_transpose(opened)
    buffer = io.BytesIO()
    upright.convert("RGB").save(buffer, format="JPEG", quality=LMMS_JPEG_QUALITY)
    return buffer.getvalue()


def received(
    request: dict[str, Any], written: Callable[[bytes], bytes] = lambda data: data
) -> dict[str, Any]:
    """What one candidate request carries: its texts in order, its frames' times and the
    digests of its images' bytes (each as `written` turns it)."""
    (message,) = [m for m in request["messages"] if m["role"] == "user"]
    texts = [p["text"] for p in message["content"] if p["type"] == "text"]
    times = [float(m.group(1)) for t in texts if (m := _FRAME_LABEL.match(t.strip()))]
    system = [m for m in request["messages"] if m["role"] == "system"]
    return {
        "texts": texts,
        "frame_times": times,
        "images": [hashlib.sha256(written(data)).hexdigest() for data in sent_images(request)],
        "system": [m["content"] for m in system],
    }


def candidate_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if r.get("model") == "candidate"]


def turn_key(request: dict[str, Any], written: Callable[[bytes], bytes] = lambda d: d) -> str:
    return json.dumps(received(request, written), sort_keys=True)


def turns(
    requests: list[dict[str, Any]], written: Callable[[bytes], bytes] = lambda data: data
) -> Counter[str]:
    """The candidate's requests as a multiset of what each carried."""
    return Counter(turn_key(r, written) for r in candidate_requests(requests))


def judge_conversations(requests: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """Every judge conversation as (role, text) pairs, sorted (the order of calls differs)."""
    talks = [
        [(m["role"], m["content"]) for m in r["messages"]]
        for r in requests
        if r.get("model") == "judge"
    ]
    return sorted(talks)


# ---- running lmms-eval --------------------------------------------------------------


def lmms_env(
    base_url: str, task_args: dict[str, Any], cache: Path, image_format: str | None = "JPEG"
) -> dict[str, str]:
    env = {
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
    env.pop("LMMS_IMAGE_ENCODE_FORMAT", None)
    env.pop("LMMS_IMAGE_JPEG_QUALITY", None)
    if image_format is not None:
        env["LMMS_IMAGE_ENCODE_FORMAT"] = image_format
    return env


def lmms_command(task: str, out: Path, base_url: str) -> list[str]:
    """`lmms-eval --model openai --tasks TASK` against the scripted server."""
    return [
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


def run_lmms(
    task: str, out: Path, base_url: str, task_args: dict[str, Any], cache: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], list[dict[str, Any]]]:
    """lmms-eval's run of TASK; the process, its results file and its logged samples."""
    env = lmms_env(base_url, task_args, cache)
    done = subprocess.run(
        lmms_command(task, out, base_url), env=env, capture_output=True, text=True, timeout=900
    )
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
    write_video(repo / LONG_CLIP.media_path, fps=2, seconds=300, size=LONG_SIZE)
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
        out = tmp_path_factory.mktemp("lmms-out")
        done, results, samples = run_lmms("hss", out, base_url, {"dataset": str(repo)}, cache)
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
    ours = turns(side_by_side["inspect_requests"], as_lmms_eval_writes)
    theirs = turns(side_by_side["lmms_requests"])
    # three attempts of every task, each the same turn in both harnesses: the same words,
    # frame times and JPEG bytes (a PNG of the release as lmms-eval's JPEG of its pixels)
    assert sum(ours.values()) == sum(theirs.values()) == 3 * len(SIDE_BY_SIDE)
    assert theirs == ours
    lines = ["question | requests Inspect/lmms-eval | images | frame times"]
    for key, count in sorted(ours.items()):
        turn = json.loads(key)
        times = turn["frame_times"]
        shown = f"{times[:3]} ... {times[-1]}" if len(times) > 6 else f"{times}"
        lines.append(
            f"{turn['texts'][-1]} | {count}/{theirs[key]} | {len(turn['images'])} | {shown}"
        )
    print("\n".join(lines))


@needs_lmms
@pytest.mark.slow
def test_lmms_eval_sends_the_inspect_tasks_jpeg_bytes_at_the_frame_cap(
    side_by_side: dict[str, Any],
) -> None:
    """Both harnesses' bytes side by side, per turn: every JPEG the Inspect task sent is
    the JPEG lmms-eval sends, so a clip at the 500-frame cap carries the bytes the Inspect
    task fitted to its budget."""
    lmms_by_turn = {turn_key(r): r for r in candidate_requests(side_by_side["lmms_requests"])}
    lines = ["question | images | image bytes Inspect | lmms-eval | ratio | request body ratio"]
    checked: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for ours in candidate_requests(side_by_side["inspect_requests"]):
        key = turn_key(ours, as_lmms_eval_writes)
        if key in checked:
            continue
        theirs = checked.setdefault(key, (ours, lmms_by_turn[key]))[1]
        sent, got = sent_images(ours), sent_images(theirs)
        # every JPEG the Inspect task sent is carried unchanged
        assert got == [as_lmms_eval_writes(data) for data in sent]
        lines.append(
            f"{received(ours)['texts'][-1]} | {len(sent)} | {sum(map(len, sent)):,} | "
            f"{sum(map(len, got)):,} | {sum(map(len, got)) / sum(map(len, sent)):.2f} | "
            f"{len(json.dumps(theirs)) / len(json.dumps(ours)):.3f}"
        )
    print("\n".join(lines))
    # the long clip: 500 JPEG frames, the same bytes in both requests (whose bodies differ
    # by their JSON alone), within the byte budget the Inspect task recorded for them
    ((ours, theirs),) = [pair for pair in checked.values() if len(sent_images(pair[0])) > 100]
    frames = sent_images(theirs)
    assert len(frames) == FRAME_CAP and frames == sent_images(ours)
    assert all(frame[:3] == b"\xff\xd8\xff" for frame in frames)
    (budget,) = {
        sample.metadata["sent_media"]["byte_budget"]
        for sample in side_by_side["inspect_log"].samples
        if sample.id == LONG_CLIP.task_id
    }
    assert sum(map(len, frames)) <= budget
    assert len(json.dumps(theirs)) < 1.01 * len(json.dumps(ours))
    assert len(checked) == len(SIDE_BY_SIDE)


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
    # eight tasks; GARBLE is left out (a grading failure in every attempt), and of the seven
    # graded the four PASS and FLAKY pass, FAIL and EMPTY do not: 5 of 7
    expected = {"pass_at_1": 5 / 7, "ungraded_tasks": 1.0, "grading_failure_rate": 1 / 8}
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


# ---- lmms-eval's own task objects, as its command line builds them for a model --------


def lmms_eval_task(model: str, monkeypatch: pytest.MonkeyPatch, image_format: str | None) -> Any:
    """The `hss_demo` task as lmms-eval builds it for `--model MODEL` (its TaskManager, told
    the model's name, the chat form): loading it reads the task YAML's entry for the model
    and the first document's words."""
    from lmms_eval.tasks import TaskManager

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("LMMS_IMAGE_JPEG_QUALITY", raising=False)
    if image_format is None:
        monkeypatch.delenv("LMMS_IMAGE_ENCODE_FORMAT", raising=False)
    else:
        monkeypatch.setenv("LMMS_IMAGE_ENCODE_FORMAT", image_format)
    folder = str(tasks_folder())
    manager = TaskManager("ERROR", include_path=folder, include_defaults=False, model_name=model)
    return manager.load_task_or_group(["hss_demo"], task_type="chat")["hss_demo"]


@needs_lmms
@pytest.mark.parametrize(
    ("model", "image_format", "refused"),
    [
        ("openai", None, "(LMMS_IMAGE_ENCODE_FORMAT unset)"),
        ("openai_compatible", "PNG", "(LMMS_IMAGE_ENCODE_FORMAT=PNG)"),
        ("litellm", "WEBP", "as WEBP"),
        ("gemini", "JPEG", "through `--model openai`"),
    ],
)
def test_an_lmms_eval_model_that_would_write_the_frames_as_png_is_refused_as_the_task_loads(
    model: str, image_format: str | None, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hss_inspect.core.errors import SetupError

    with pytest.raises(SetupError, match=re.escape(refused)):
        lmms_eval_task(model, monkeypatch, image_format)


def demo_clip_turn(task: Any) -> tuple[list[bytes], list[Any]]:
    """The demo's first clip: the frames' bytes of the Inspect task's turn, and the message
    lmms-eval's task object gives its model for it."""
    from inspect_ai.model import ContentImage

    from hss_inspect.lmms import turn
    from hss_inspect.lmms.options import run_options

    doc = next(d for d in task.test_docs() if d["media_type"] == "video")
    sent = [
        base64.b64decode(part.image.partition(",")[2])
        for part in turn.turn_content(doc, run_options({}))
        if isinstance(part, ContentImage)
    ]
    return sent, task.doc_to_messages(doc)


@needs_lmms
def test_a_local_lmms_eval_model_gets_the_decoded_pictures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lmms_eval.protocol import ChatMessages

    # with lmms-eval's own PNG setting: a local model encodes nothing
    sent, messages = demo_clip_turn(lmms_eval_task("qwen2_5_vl", monkeypatch, None))
    (message,) = ChatMessages(messages=messages).to_hf_messages()
    pictures = [p["image"] for p in message["content"] if p["type"] == "image"]
    assert len(pictures) == len(sent) > 1
    for picture, data in zip(pictures, sent, strict=True):
        assert isinstance(picture, Image.Image)
        assert (picture.size, picture.convert("RGB").tobytes()) == upright_pixels(data)
