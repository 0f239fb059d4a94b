"""Full runs survive a kill and share work: `inspect eval-retry` after SIGKILL reuses the
finished samples and asks the judge nothing twice; an `inspect eval-set` of two models
on one media cache decodes each clip once."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from tests.support.fixture_repo import TASKS, FixtureTask, build_repo
from tests.support.runs import CANDIDATE, JUDGE
from tests.support.servers import scripted_models

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

INSPECT = str(Path(sys.executable).with_name("inspect"))
TASK_COUNT, EPOCHS, KILL_AFTER_JUDGED = 6, 2, 5
_REFERENCE = re.compile(r"The reference answer for (t\d+)\.")
DECODE_LINE = re.compile(r"hss media: clip (\w+): decoded \d+ frames")


def image_tasks(count: int) -> tuple[FixtureTask, ...]:
    first = TASKS[0]
    return tuple(
        FixtureTask(
            f"t{i}",
            "PASS",
            first.domain,
            first.subdomain,
            "image",
            first.media_path,
            first.criteria,
        )
        for i in range(count)
    )


def requests_by_role(request_log: Path) -> tuple[list[str], list[str]]:
    """Task ids of the judge's requests, and of the candidate's (by reference / question)."""
    judged, asked = [], []
    for line in request_log.read_text().splitlines():
        body = json.loads(line)
        text = json.dumps(body["messages"])
        if "judge" in body["model"]:
            found = _REFERENCE.search(text)
            judged.append(found.group(1) if found else "?")
        else:
            asked.append(body["model"])
    return judged, asked


def env_for(base_url: str, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SCRIPTED_API_KEY": "test-key",
        "SCRIPTED_BASE_URL": base_url,
        "HSS_INSPECT_CACHE": str(cache),
        "COLUMNS": "400",
    }


def test_killed_run_resumes_without_judging_twice(tmp_path: Path) -> None:
    release = build_repo(tmp_path / "release", image_tasks(TASK_COUNT))
    log_dir = tmp_path / "logs"
    with scripted_models(tmp_path / "server") as (base_url, request_log):
        env = env_for(base_url, tmp_path / "cache")
        command = [INSPECT, "eval", "hss_inspect/hss", "--model", CANDIDATE + "-slow"]
        command += ["--model-role", f"grader={JUDGE}", "-T", f"dataset={release}"]
        command += ["--epochs", str(EPOCHS), "--max-samples", "1", "--max-connections", "1"]
        command += ["--log-dir", str(log_dir), "--display", "plain"]
        with (tmp_path / "first.out").open("w") as out:
            first = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
            # One sample at a time: once the candidate is asked again after the judge's
            # 5th reply, the 5th sample is finished and the 6th waits on the slow model.
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                judged, asked = requests_by_role(request_log)
                if len(judged) >= KILL_AFTER_JUDGED and len(asked) > len(judged):
                    break
                time.sleep(0.1)
            time.sleep(0.3)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
        judged_before, asked_before = requests_by_role(request_log)
        assert len(judged_before) == KILL_AFTER_JUDGED, judged_before
        (killed_log,) = log_dir.glob("*.eval")
        assert read_eval_log(str(killed_log), header_only=True).status == "started"

        retry = [INSPECT, "eval-retry", str(killed_log), "--log-dir", str(log_dir)]
        done = subprocess.run(
            [*retry, "--display", "plain"], env=env, capture_output=True, text=True, timeout=600
        )
        judged_all, asked_all = requests_by_role(request_log)

    resumed = [p for p in log_dir.glob("*.eval") if p != killed_log]
    assert len(resumed) == 1, done.stdout + done.stderr
    log = read_eval_log(str(resumed[0]))
    assert log.status == "success", done.stderr
    assert len(log.samples or []) == TASK_COUNT * EPOCHS
    # every sample-epoch graded exactly once over both runs: nothing judged twice
    assert Counter(judged_all) == {f"t{i}": EPOCHS for i in range(TASK_COUNT)}
    # the retry asked the candidate only for the samples not finished before the kill
    # (the one in flight at the kill is asked again)
    asked_in_retry = len(asked_all) - len(asked_before)
    assert asked_in_retry == TASK_COUNT * EPOCHS - KILL_AFTER_JUDGED


def test_eval_set_of_two_models_decodes_each_clip_once(hss_repo: Path, tmp_path: Path) -> None:
    clips = sorted({t.media_path for t in TASKS if t.media_type == "video"})
    with scripted_models(tmp_path / "server") as (base_url, request_log):
        env = env_for(base_url, tmp_path / "cache")
        models = f"{CANDIDATE},{CANDIDATE}-slow"
        command = [INSPECT, "eval-set", "hss_inspect/hss_video", "--model", models]
        command += ["--model-role", f"grader={JUDGE}", "-T", f"dataset={hss_repo}"]
        command += ["--epochs", "2", "--log-dir", str(tmp_path / "logs")]
        command += ["--log-level", "info", "--display", "plain"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        _, asked = requests_by_role(request_log)
    output = done.stdout + done.stderr
    logs = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval")]
    assert sorted(log.eval.model for log in logs) == sorted(models.split(","))
    assert all(log.status == "success" for log in logs), output
    # both models were sent every clip's frames, at both epochs
    assert Counter(asked) == {m.rsplit("/", 1)[1]: len(clips) * 2 for m in models.split(",")}
    decoded = DECODE_LINE.findall(" ".join(output.split()))
    assert len(decoded) == len(clips), output
    assert len(set(decoded)) == len(clips)
    entries = list((tmp_path / "cache" / "frames").iterdir())
    assert len([e for e in entries if not e.name.startswith(".")]) == len(clips)
