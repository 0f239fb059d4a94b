"""A user's mistake costs nothing: each one below, typed on the real command line (`inspect
eval` of the package's tasks, and `hss-inspect`), stops at once with one line naming the
mistyped value and the closest valid one (or the file, what is wrong with it and what to
do), exits non-zero, prints no traceback, and runs no sample and calls no model. Every
task option and every command flag is covered: a new one is checked the moment it is
declared."""

from __future__ import annotations

import argparse
import contextlib
import inspect as pyinspect
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Callable
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


# A file a mistake is made with: its name in the working folder, and how its bytes are
# made from a real log of the demo set.
Made = Callable[[Path], bytes]


@dataclass(frozen=True)
class Mistake:
    """What a user typed (`{log}` stands for a real log of the demo set) with the files it
    names, and the words the one line must hold: the mistyped value or the file, and the
    closest valid one or what to do. `prints_report`: the command still prints what the
    good logs give, and the one line (on stderr) names the file it left out."""

    name: str
    argv: tuple[str, ...]
    says: tuple[str, ...]
    files: tuple[tuple[str, Made], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    prints_report: bool = False


def log_bytes(log: Path) -> bytes:
    return log.read_bytes()


def cut_in_half(log: Path) -> bytes:
    """The log as a run killed while writing it leaves it, or a copy not finished."""
    data = log.read_bytes()
    return data[: len(data) // 2]


def json_log(log: Path) -> bytes:
    """The same log in Inspect's JSON format."""
    from inspect_ai.log import read_eval_log, write_eval_log

    out = log.with_name(f"{log.stem}-as.json")
    if not out.exists():
        write_eval_log(read_eval_log(str(log)), str(out), format="json")
    return out.read_bytes()


def json_cut_short(log: Path) -> bytes:
    """The JSON log's first eight lines (its header cut short: where the line and column
    are the same in every run)."""
    return b"".join(json_log(log).splitlines(keepends=True)[:8])


def constant(data: bytes) -> Made:
    return lambda _log: data


def sqlite_file(tables: str) -> Made:
    """A SQLite file holding these tables (another program's database)."""

    def made(log: Path) -> bytes:
        path = log.with_name("other.sqlite")
        if not path.exists():
            with contextlib.closing(sqlite3.connect(path)) as db:
                db.executescript(tables)
        return path.read_bytes()

    return made


def study_cut_short(log: Path) -> bytes:
    """A study of one demo task, cut to its first two pages."""
    from hss_inspect.human.store import StudyTask, create_study

    path = log.with_name("study.sqlite")
    if not path.exists():
        task = StudyTask("demo-candle", "video", "d", "s", "media/x.mp4", "What next?")
        create_study(path, {"seed": 0}, [task], {"annotator-1": ["demo-candle"]})
    return path.read_bytes()[:8192]


def a_study(log: Path) -> bytes:
    """A whole study of one demo task."""
    from hss_inspect.human.store import StudyTask, create_study

    path = log.with_name("whole-study.sqlite")
    if not path.exists():
        task = StudyTask("demo-candle", "video", "d", "s", "media/x.mp4", "What next?")
        create_study(path, {"seed": 0}, [task], {"annotator-1": ["demo-candle"]})
    return path.read_bytes()


def a_build(log: Path) -> bytes:
    """A build of one pool item, an author ann and three reviewers."""
    from hss_inspect.construction.pool import PoolItem
    from hss_inspect.construction.store import create_build

    path = log.with_name("build.sqlite")
    if not path.exists():
        settings = {"pool": str(log.parent), "seed": 0, "prefix": "t", "rounds": 3}
        item = PoolItem("item-0001", "a.png", "image", 1)
        create_build(path, settings, [item], ["ann"], ["r1", "r2", "r3"])
    return path.read_bytes()


SPLIT_COMMIT = "a7aec404a8d8c790464283c054111f9ae46acfa8"


def split_log(log: Path) -> bytes:
    """The log as a run of the split lab/hss-mini at a commit (a dataset other than HSS)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    out = log.with_name(f"{log.stem}-split.eval")
    if not out.exists():
        run = read_eval_log(str(log))
        run.eval.metadata = {
            **(run.eval.metadata or {}),
            "hss_dataset_requested": {"dataset": "lab/hss-mini", "revision": SPLIT_COMMIT},
            "hss_dataset_revision": SPLIT_COMMIT,
            "hss_dataset_pinned": True,
        }
        write_eval_log(run, str(out))
    return out.read_bytes()


def a_row_misspelt(log: Path) -> bytes:
    """One task for a_build's item a.png, its subdomain misspelt."""
    row = {
        "task_id": "t1", "domain": "Social Understanding", "subdomain": "Theory of Mnd",
        "media_type": "image", "media_path": "a.png", "prompt": "Why does she wave?",
        "golden_response": "To greet him.", "rubric_criteria": [{"id": "c1", "title": "Greets"}],
    }  # fmt: skip
    return (json.dumps(row) + "\n").encode()


NOT_TEXT = constant(b"\x89PNG\r\n\x1a\n\xff\xfe\x00binary")
NOTES = constant(b"notes about the run, not a log\n")
PRICES_NOT_YAML = constant(b"openai/gpt-6-astra:\n  input: 1.25\n  output: [10.0\n")
PRICES_NOT_JSON = constant(b'{"openai/gpt-6-astra": {"input": 1.25,}}\n')
RULES_NOT_YAML = constant(b"image_tokens:\n  - match: [openai/*\n    formula: openai_patches\n")
ANSWERS = constant(b'{"task_id": "demo-candle", "annotator": "ana", "answer": "It goes out."}\n')
ANSWERS_NOT_JSON = constant(b'{"task_id": "demo-candle", "annotator": "ana", "answer": "out"\n')
HALF = (("half.eval", cut_in_half),)
OPUS_SLIP = "anthropic/claude-opsu-5"

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
        "misspelt task of the report's pages",
        (HSS_INSPECT, "report", "{log}", "--out", "out", "--pages", "demo-dominos"),
        ("demo-dominos is not a task of these logs", "did you mean demo-dominoes?"),
    ),
    Mistake(
        "the report's pages without a folder",
        (HSS_INSPECT, "report", "{log}", "--examples"),
        ("--examples-tasks write pages beside report.html: give --out DIR",),
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
        "a split's register entry without its task file",
        (
            HSS_INSPECT,
            "register",
            "split.eval",
            "--repository-url",
            "https://github.com/lab/lab-evals",
            "--repository-commit",
            SPLIT_COMMIT,
        ),
        ("the logs ran on lab/hss-mini, whose entry needs a task file", "give --task-file PATH"),
        (("split.eval", split_log),),
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


HUMAN = ("hss_inspect/hss_human", "-T", "dataset=demo", "--model", "none")
BUILD_NEW = (HSS_INSPECT, "build", "new", "b.sqlite", "--pool", "pool", "--authors", "1",
             "--reviewers", "3")  # fmt: skip

# A file the user gives that cannot be read as what it should be: a log, a price or
# token-rules file, a study, people's answers, the rows of a dataset.
RELEASE_MISTAKES = [
    Mistake(
        "a limited run given to release carry",
        (HSS_INSPECT, "release", "carry", "{log}", "demo"),
        ("a run limited to some samples (--limit or --sample-id)", "carry takes a whole run"),
    ),
    Mistake(
        "a release named without its dataset",
        (HSS_INSPECT, "release", "diff", "@main", "demo"),
        ("'@main' names no dataset", "give DATASET@REVISION, a local copy or a log"),
    ),
]

FILE_MISTAKES = [
    Mistake(
        "a log cut short",
        (HSS_INSPECT, "report", "half.eval"),
        ("half.eval: cut short", "copy it again", "inspect log recover"),
        HALF,
    ),
    Mistake(
        "an empty log",
        (HSS_INSPECT, "report", "empty.eval"),
        ("empty.eval: empty (0 bytes), not an Inspect log",),
        (("empty.eval", constant(b"")),),
    ),
    Mistake(
        "a text file named .eval",
        (HSS_INSPECT, "report", "notes.eval"),
        ("notes.eval: not an Inspect log (an .eval log is a zip archive)",),
        (("notes.eval", NOTES),),
    ),
    Mistake(
        "a JSON log cut short",
        (HSS_INSPECT, "report", "half.json"),
        ("half.json: cut short or damaged at line 9, column 1",),
        (("half.json", json_cut_short),),
    ),
    Mistake(
        "a text file named .json",
        (HSS_INSPECT, "report", "notes.json"),
        ("notes.json: not an Inspect log",),
        (("notes.json", NOTES),),
    ),
    Mistake(
        "JSON that is not a log",
        (HSS_INSPECT, "report", "other.json"),
        ("other.json: JSON, but not an Inspect log",),
        (("other.json", constant(b'{"name": "a list of runs", "runs": []}\n')),),
    ),
    Mistake(
        "a log cut short in a folder of good logs",
        (HSS_INSPECT, "report", "runs"),
        ("left out", "runs/half.eval: cut short", "read: the other logs"),
        (("runs/good.eval", log_bytes), ("runs/half.eval", cut_in_half)),
        prints_report=True,
    ),
    Mistake(
        "a pilot cut short",
        (*ESTIMATE_DEMO, "--pilot", "half.eval"),
        ("--pilot half.eval: cut short",),
        HALF,
    ),
    Mistake(
        "a log cut short to compare",
        (HSS_INSPECT, "compare", "{log}", "half.eval"),
        ("half.eval: cut short",),
        HALF,
    ),
    Mistake(
        "a log cut short to rebuild frames from",
        (HSS_INSPECT, "rebuild-frames", "half.eval", "--sample", "demo-candle", "--out", "out"),
        ("half.eval: cut short",),
        HALF,
    ),
    Mistake(
        "a log cut short to re-grade",
        (HSS_INSPECT, "recipe", "judges", "half.eval", "--dry-run"),
        ("half.eval: cut short",),
        HALF,
    ),
    Mistake(
        "a price file that is not YAML",
        (*ESTIMATE_DEMO, "--model-cost-config", "prices.yaml"),
        ("--model-cost-config prices.yaml: not valid YAML at line 4, column 1", "fix it"),
        (("prices.yaml", PRICES_NOT_YAML),),
    ),
    Mistake(
        "a price file that is not JSON",
        (HSS_INSPECT, "report", "{log}", "--model-cost-config", "prices.json"),
        ("--model-cost-config prices.json: not valid JSON at line 1, column 39", "fix it"),
        (("prices.json", PRICES_NOT_JSON),),
    ),
    Mistake(
        "a price file that is not text",
        (*ESTIMATE_DEMO, "--model-cost-config", "prices.yaml"),
        ("--model-cost-config prices.yaml: not a text file",),
        (("prices.yaml", NOT_TEXT),),
    ),
    Mistake(
        "token rules that are not YAML",
        (*ESTIMATE_DEMO, "--token-rules", "rules.yaml"),
        ("--token-rules rules.yaml: not valid YAML at line", "fix it"),
        (("rules.yaml", RULES_NOT_YAML),),
    ),
    Mistake(
        "token rules of a task that are not YAML",
        (*EVAL, *DEMO, "-T", "token_rules=rules.yaml", *GRADED),
        ("-T token_rules=rules.yaml: not valid YAML at line", "fix it"),
        (("rules.yaml", RULES_NOT_YAML),),
    ),
    Mistake(
        "a study that is not one",
        (HSS_INSPECT, "human", "status", "notes.txt"),
        ("notes.txt: not a study",),
        (("notes.txt", NOTES),),
    ),
    Mistake(
        "another program's SQLite file as a study",
        (HSS_INSPECT, "human", "export", "other.sqlite", "--out", "answers.jsonl"),
        ("other.sqlite: a SQLite file, but not a study",),
        (("other.sqlite", sqlite_file("CREATE TABLE runs (id TEXT);")),),
    ),
    Mistake(
        "a study cut short",
        (HSS_INSPECT, "human", "status", "study.sqlite"),
        ("study.sqlite: a damaged SQLite file", "restore it from a copy"),
        (("study.sqlite", study_cut_short),),
    ),
    Mistake(
        "answers that are not JSON lines",
        (*EVAL, *HUMAN, "-T", "answers=answers.jsonl", "--model-role", f"grader={JUDGE}"),
        ("-T answers=answers.jsonl, line 1, column", "not JSON"),
        (("answers.jsonl", ANSWERS_NOT_JSON),),
    ),
    Mistake(
        "answers that are not text",
        (*EVAL, *HUMAN, "-T", "answers=answers.jsonl", "--model-role", f"grader={JUDGE}"),
        ("-T answers=answers.jsonl: not a text file", "a study (.sqlite) or a JSONL"),
        (("answers.jsonl", NOT_TEXT),),
    ),
    Mistake(
        "an empty answers file",
        (*EVAL, *HUMAN, "-T", "answers=answers.jsonl", "--model-role", f"grader={JUDGE}"),
        ("-T answers=answers.jsonl: no answers in it",),
        (("answers.jsonl", constant(b"\n")),),
    ),
    Mistake(
        "a build that is not one",
        (HSS_INSPECT, "build", "status", "notes.sqlite"),
        ("notes.sqlite: not a build",),
        (("notes.sqlite", NOTES),),
    ),
    Mistake(
        "a study given as a build",
        (HSS_INSPECT, "build", "funnel", "study.sqlite"),
        ("study.sqlite: a SQLite file, but not a build", "hss-inspect build new"),
        (("study.sqlite", a_study),),
    ),
    Mistake(
        "a taxonomy that is not YAML",
        (*BUILD_NEW, "--taxonomy", "taxonomy.yaml"),
        ("--taxonomy taxonomy.yaml: not valid YAML at line 4, column 1", "fix it"),
        (
            (
                "taxonomy.yaml",
                constant(b"domains:\n  - name: Street Life\n    subdomains: [Traffic\n"),
            ),
        ),
    ),
    Mistake(
        "a taxonomy with a domain of no subdomains",
        (*BUILD_NEW, "--taxonomy", "taxonomy.yaml"),
        ("--taxonomy taxonomy.yaml: domain 'Street Life' has no `subdomains`",),
        (("taxonomy.yaml", constant(b"domains:\n  - name: Street Life\n")),),
    ),
    Mistake(
        "a dataset file that is not text",
        (HSS_INSPECT, "estimate", "--model", "hss/scripted", "--dataset", "rows.jsonl"),
        ("rows.jsonl: not a text file",),
        (("rows.jsonl", NOT_TEXT),),
    ),
]

# A model name: a slip of one Inspect's model database or Table 5 knows, wherever a
# command takes one; and a name given in the wrong place, pointed to the right one.
NAME_MISTAKES = [
    Mistake(
        "misspelt model of an estimate",
        (HSS_INSPECT, "estimate", "--model", "openai/gpt-6-astr", "--dataset", "demo"),
        ("openai/gpt-6-astr is not a model", "(--model)", "did you mean openai/gpt-6-astra?"),
    ),
    Mistake(
        "misspelt judge of an estimate",
        (*ESTIMATE_DEMO, "--grader", "anthropic/claude-opsu-5"),
        ("anthropic/claude-opsu-5 is not a model", "did you mean anthropic/claude-opus-5?"),
    ),
    Mistake(
        "misspelt model to prepare for",
        (HSS_INSPECT, "prepare", "--dataset", "demo", "--model", "openai/gpt6-astra"),
        ("openai/gpt6-astra is not a model", "did you mean openai/gpt-6-astra?"),
    ),
    Mistake(
        "misspelt Inspect model a recipe sends to",
        (HSS_INSPECT, "recipe", "table1", "--as", "GPT-6-astra=openai/gpt-6-astr", "--dry-run"),
        ("openai/gpt-6-astr is not a model", "did you mean openai/gpt-6-astra?"),
    ),
    Mistake(
        "misspelt judge of the human study",
        (
            *EVAL,
            *HUMAN,
            "-T",
            "answers=answers.jsonl",
            "--model-role",
            "grader=anthropic/claude-opsu-5",
        ),
        ("(--model-role grader)", "did you mean anthropic/claude-opus-5?"),
        (("answers.jsonl", ANSWERS),),
        env=(("ANTHROPIC_API_KEY", "k"),),
    ),
    Mistake(
        "misspelt judge of the judge audit",
        (
            *EVAL,
            "hss_inspect/hss_judge_audit",
            "-T",
            "dataset=demo",
            "--model",
            CANDIDATE,
            "--model-role",
            f"grader={OPUS_SLIP}",
        ),
        ("(--model-role grader)", "did you mean anthropic/claude-opus-5?"),
        env=(("ANTHROPIC_API_KEY", "k"),),
    ),
    Mistake(
        "misspelt model of a build's blind control",
        (
            HSS_INSPECT,
            "build",
            "check",
            "build.sqlite",
            "--model-role",
            "grader=anthropic/claude-opus-5",
            "--model",
            "openai/gpt-6-astr",
            "--dry-run",
        ),
        ("openai/gpt-6-astr is not a model", "(--model)", "did you mean openai/gpt-6-astra?"),
        (("build.sqlite", a_build),),
    ),
    Mistake(
        "misspelt scripted judge of a build's checks",
        (
            HSS_INSPECT,
            "build",
            "check",
            "build.sqlite",
            "--model-role",
            "grader=hss/scripteed",
            "--dry-run",
        ),
        ("hss/scripteed is not a model of the hss provider", "it has one model, hss/scripted"),
        (("build.sqlite", a_build),),
    ),
    Mistake(
        "misspelt model of the scripted provider",
        (*EVAL, *DEMO, "--model", "hss/scriptd", "--model-role", f"grader={JUDGE}"),
        ("hss/scriptd is not a model of the hss provider", "it has one model, hss/scripted"),
    ),
    Mistake(
        "an argument the scripted provider does not take",
        (
            *EVAL,
            *DEMO,
            "--model",
            "hss/scripted",
            "-M",
            "answr=x",
            "--model-role",
            f"grader={JUDGE}",
        ),
        ("-M answr is not an argument of hss/scripted", "did you mean -M answer?"),
    ),
    Mistake(
        "misspelt author of tasks imported into a build",
        (HSS_INSPECT, "build", "import", "build.sqlite", "tasks.jsonl", "--author", "anne"),
        ("anne is not an author of the build (--author)", "did you mean ann?"),
        (("build.sqlite", a_build), ("tasks.jsonl", constant(b"{}\n"))),
    ),
    Mistake(
        "misspelt subdomain of a task imported into a build",
        (HSS_INSPECT, "build", "import", "build.sqlite", "tasks.jsonl", "--author", "ann"),
        ("line 1: task t1: unknown subdomain 'Theory of Mnd'", "did you mean 'Theory of Mind'?"),
        (("build.sqlite", a_build), ("tasks.jsonl", a_row_misspelt)),
    ),
    Mistake(
        "misspelt model of the logs in --paper-model",
        (HSS_INSPECT, "report", "{log}", "--paper-model", "hss/scriptd=GPT-6-astra"),
        ("hss/scriptd is not a model of these logs", "did you mean hss/scripted?"),
    ),
    Mistake(
        "the judge given as a task option",
        (*EVAL, *DEMO, "-T", f"grader={JUDGE}", "--model", CANDIDATE),
        ("-T grader is not an option", f"use Inspect's --model-role grader={JUDGE}"),
    ),
    Mistake(
        "the epochs given as a task option",
        (*EVAL, *DEMO, "-T", "epochs=1", *GRADED),
        ("-T epochs is not an option", "use Inspect's --epochs 1"),
    ),
    Mistake(
        "the judge given as a recipe's task option",
        (HSS_INSPECT, "recipe", "table1", "-T", "grader=openai/gpt-5.6-terra", "--dry-run"),
        ("-T grader is not an option", "use --as judge-claude-opus-5=openai/gpt-5.6-terra"),
    ),
    Mistake(
        "a task option given to estimate with -T",
        (HSS_INSPECT, "estimate", "--model", "hss/scripted", "-T", "dataset=demo"),
        ("-T dataset=demo is not a flag of hss-inspect estimate", "use --dataset demo"),
    ),
    Mistake(
        "the judge given to estimate as a role",
        (*ESTIMATE_DEMO, "--model-role", "grader=anthropic/claude-opus-5"),
        ("--model-role grader=anthropic/claude-opus-5 is not a flag", "use --grader"),
    ),
]

MISTAKES = EVAL_MISTAKES + COMMAND_MISTAKES + RELEASE_MISTAKES + FILE_MISTAKES + NAME_MISTAKES


def test_the_page_of_mistakes_lists_every_mistake_tried() -> None:
    assert sorted(documented()) == sorted(m.name for m in MISTAKES)


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
    env.update(mistake.env)
    for name, made in mistake.files:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_bytes(made(log))
    argv = [word.replace("{log}", str(log)) for word in mistake.argv]
    if argv[:2] == list(EVAL):
        argv += ["--log-dir", str(workdir / "logs"), "--display", "plain"]
    return subprocess.run(argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.name)
def test_a_mistake_is_one_line_a_nonzero_exit_and_nothing_sent(
    mistake: Mistake, tmp_path: Path, model_server: tuple[str, Path], demo_log: Path
) -> None:
    requests_before = model_server[1].read_text().count("\n")
    done = run_mistake(mistake, tmp_path, model_server, demo_log)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output
    said = done.stderr if mistake.prints_report else output
    for words in mistake.says:
        assert words in said.replace(f"{tmp_path}/", ""), output
    # one line, after Inspect's banner of the package's hooks where Inspect prints one
    assert len(lines_after_banner(said)) == 1, output
    if mistake.prints_report:  # ... and what the good logs give
        assert "## Leaderboard" in done.stdout and demo_log.name not in done.stderr
    assert not list(tmp_path.glob("logs/*.eval")), "a log was written: something ran"
    assert model_server[1].read_text().count("\n") == requests_before, "a model was called"
    assert documented()[mistake.name] == (done.returncode, shown_line(said, demo_log, tmp_path))


def shown_line(said: str, log: Path, workdir: Path) -> str:
    """The one line a mistake printed, with the log's path written LOG and the files it
    made named as in the working folder."""
    (line,) = lines_after_banner(said)
    return line.strip().replace(str(log), "LOG").replace(f"{workdir}/", "")


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
