"""The edges of `hss-inspect build` a lab meets in its first week, through the real command:
a check whose `inspect eval` fails says Inspect's own reason; the pages do not start without
a package they need; a port in use is one line; an import lists every bad row."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import av
import pytest
from PIL import Image

from tests.support.build_pool import Build, build, new_build, task_row, write_tasks
from tests.support.fixture_repo import write_image
from tests.support.human_study import has_audio, write_video_with_sound
from tests.support.servers import free_port

pytestmark = pytest.mark.slow


def in_review(tmp_path: Path) -> Build:
    b = new_build(tmp_path, "--authors", "ann", "--reviewers", "r1,r2,r3")
    rows = [task_row("one", "street.png"), task_row("two", "clips/ball.mp4", "video")]
    tasks = write_tasks(tmp_path / "tasks.jsonl", rows)
    build("import", str(b.path), str(tasks), "--author", "ann")
    return b


def one_image_build(tmp_path: Path) -> Path:
    """A build of a pool of one image: made in a second."""
    write_image(tmp_path / "pool" / "one.png", (64, 48), "PNG")
    path = tmp_path / "build.sqlite"
    build("new", str(path), "--pool", str(tmp_path / "pool"), "--authors", "1", "--reviewers", "3")
    return path


def test_a_check_without_the_judges_key_says_inspects_reason(tmp_path: Path) -> None:
    b = in_review(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["COLUMNS"] = "400"
    done = build(
        "check", str(b.path), "--model-role", "grader=anthropic/claude-opus-5", env=env, ok=False
    )
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("hss-inspect build: the checks wrote no log to "), line
    assert line.endswith(
        ": the judge's reference check failed: Unable to initialise Anthropic client: "
        "No ANTHROPIC_API_KEY defined in the environment."
    ), line


# ---- the pages' packages, checked before any link is handed out --------------------------

# What python-multipart installs: its distribution's metadata and its two import names.
MULTIPART = ("python_multipart", "multipart")


@pytest.fixture(scope="module")
def venv_without_multipart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding every package of the tests' own but python-multipart, removed as
    `pip uninstall` removes it (its modules and its metadata). The packages are linked,
    not copied: the venv's one `.pth` adds a folder of links to each entry of this
    environment's site-packages but python-multipart's, as a site folder (so the editable
    install's own `.pth` is read too)."""
    root = tmp_path_factory.mktemp("no-multipart")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (own_site,) = [Path(p) for p in sys.path if p.endswith("site-packages") and "lib" in p][:1]
    linked = root / "site"
    linked.mkdir()
    for entry in own_site.iterdir():
        if not entry.name.lower().startswith(MULTIPART):
            (linked / entry.name).symlink_to(entry)
    (venv_site,) = venv.glob("lib/python*/site-packages")
    (venv_site / "linked.pth").write_text(f"import site; site.addsitedir({str(linked)!r})\n")
    return venv / "bin" / "python"


def test_the_pages_refuse_to_start_without_the_web_extra_naming_it(
    venv_without_multipart: Path, tmp_path: Path
) -> None:
    python = str(venv_without_multipart)
    missing = subprocess.run(
        [python, "-c", "import importlib.util as u; print(u.find_spec('python_multipart'))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert missing.stdout.strip() == "None"  # the venv has it not, and has the rest:
    subprocess.run([python, "-c", "import starlette, uvicorn, hss_inspect.web.server"], check=True)
    path = one_image_build(tmp_path)
    cli = [python, "-m", "hss_inspect.commands.cli"]
    study = str(tmp_path / "study.sqlite")
    for command, extra in ((["build", "serve", str(path)], "web"),
                           (["human", "serve", study], "human")):  # fmt: skip
        done = subprocess.run(
            [*cli, *command, "--port", str(free_port())], capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
        assert done.stderr == (
            f"hss-inspect {command[0]}: the pages need python-multipart, not installed: "
            f'pip install "hss-inspect[{extra}]"\n'
        )


# ---- a port in use -----------------------------------------------------------------------


def test_a_port_in_use_is_one_line_naming_port_and_no_serving_line(tmp_path: Path) -> None:
    path = one_image_build(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = build("serve", str(path), "--port", str(port), ok=False)
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr == (
        f"hss-inspect build: port {port} is in use at 127.0.0.1 (another server, or this one "
        "already running): choose another with --port\n"
    )


# ---- an import lists every bad row -------------------------------------------------------


def test_an_import_lists_every_bad_row_and_names_a_skipped_pool_file(tmp_path: Path) -> None:
    """Every problem of every row, the taxonomy's among them: a misspelt subdomain, one of
    another domain, and a row with two problems, each named beside the others."""
    from hss_inspect.construction import store

    for name in ("two.png", "three.png"):
        write_image(tmp_path / "pool" / name, (64, 48), "PNG")
    path = one_image_build(tmp_path)
    (tmp_path / "pool" / "broken.png").write_bytes(b"not an image")  # skipped: does not open
    social = {"domain": "Social Understanding"}
    rows = [
        json.dumps(task_row("good", "one.png")),
        '{"task_id": "cut", "prompt": "Wh',
        json.dumps(task_row("broken", "broken.png")),
        json.dumps(task_row("missing", "nowhere.png")),
        json.dumps(task_row("typo", "two.png", subdomain="Theory of Mnd", **social)),
        json.dumps(task_row("elsewhere", "three.png", subdomain="Theory of Mind")),
        json.dumps(task_row("both", "gone.png", subdomain="Retrodicton")),
    ]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(rows) + "\n")
    done = build("import", str(path), str(tasks), "--author", "author-1", ok=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    temporal = "Temporal & Causal Dynamics"  # task_row's domain
    assert done.stderr.splitlines() == [
        f"hss-inspect build: 6 invalid row(s) in {tasks}; fix or remove them (nothing is "
        "imported until every row is good):",
        f"  {tasks} line 2: not valid JSON at column 33 (Invalid control character at)",
        f"  {tasks} line 3: task broken: media_path 'broken.png' is in the pool folder, but the "
        "build skipped it when it was made: does not open as an image (cannot identify image "
        f"file '{tmp_path / 'pool' / 'broken.png'}')",
        f"  {tasks} line 4: task missing: media_path 'nowhere.png' names no file of the pool; "
        "give the file's path inside the pool folder",
        f"  {tasks} line 5: task typo: unknown subdomain 'Theory of Mnd' (did you mean "
        "'Theory of Mind'?)",
        f"  {tasks} line 6: task elsewhere: subdomain 'Theory of Mind' is of the domain "
        f"'Social Understanding', not '{temporal}'",
        f"  {tasks} line 7: task both: unknown subdomain 'Retrodicton' (did you mean "
        "'Retrodiction'?); media_path 'gone.png' names no file of the pool; give the file's "
        "path inside the pool folder",
    ]
    assert "--dataset" not in done.stderr  # a flag build import does not have
    assert store.tasks_of_author(path, "author-1") == []


# ---- the release holds what reviewers saw ------------------------------------------------


def video_packets(path: Path) -> list[tuple[bytes, int | None, int | None, bool]]:
    """The video stream's packets: their bytes, times and key-frame marks."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return [
            (bytes(p), p.pts, p.dts, p.is_keyframe)
            for p in container.demux(stream)
            if p.dts is not None  # the demuxer's flush packet
        ]


def test_the_export_releases_each_clip_without_its_audio_and_says_what_reviewers_saw(
    tmp_path: Path,
) -> None:
    from hss_inspect.construction import store
    from tests.test_construction_pages import reviewer_of

    pool = tmp_path / "pool"
    write_video_with_sound(pool / "clips" / "sound.mp4", seconds=2.0)
    write_image(pool / "still.png", (64, 48), "PNG")
    path = tmp_path / "build.sqlite"
    build("new", str(path), "--pool", str(pool), "--authors", "ann", "--reviewers", "r1,r2,r3",
          "--view", "frames", "--fps", "2", "--max-frames", "8")  # fmt: skip
    rows = [task_row("clip", "clips/sound.mp4", "video"), task_row("still", "still.png")]
    build("import", str(path), str(write_tasks(tmp_path / "t.jsonl", rows)), "--author", "ann")
    b = Build(path, pool, {})
    for view in store.tasks_of_author(path, "ann"):
        for _ in range(3):
            name, slot = reviewer_of(b, view.task_id)
            key = (view.task_id, slot.revision, slot.round)
            assert store.decide(path, name, key, "pass", None, None, 3)
    out = tmp_path / "release"
    build("export", str(path), "--out", str(out))

    clip = out / "media" / "clips" / "sound.mp4"
    assert has_audio(pool / "clips" / "sound.mp4") and not has_audio(clip)
    assert video_packets(clip) == video_packets(pool / "clips" / "sound.mp4")  # not re-encoded
    with Image.open(out / "media" / "still.png") as released, Image.open(pool / "still.png") as own:
        assert released.tobytes() == own.tobytes()  # an image as it is (a canary aside)
    card = (out / "README.md").read_text()
    assert "Each clip is released without its audio track" in card
    frames = "Reviewers judged each clip by the frames a model is sent (`--view frames`: fps 2.0, "
    assert f"{frames}max_frames 8, frame_side " in card


class Refusing(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that refuses every request: a wrong key."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({"error": {"message": "Incorrect API key provided: k",
                                     "code": "invalid_api_key"}}).encode()  # fmt: skip
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_check_whose_judge_refuses_each_request_says_the_refusal(tmp_path: Path) -> None:
    path = one_image_build(tmp_path)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task_row("one", "one.png")])
    build("import", str(path), str(tasks), "--author", "author-1")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "REFUSER_API_KEY": "k", "COLUMNS": "400"}
    env["REFUSER_BASE_URL"] = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        done = build("check", str(path), "--model-role", "grader=openai-api/refuser/judge",
                     env=env, ok=False)  # fmt: skip
    finally:
        server.shutdown()
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("the eval in ")]
    assert line.endswith(
        " ended with status error (Error code: 401 - Incorrect API key provided: k): see "
        "`inspect view`"
    ), line
