"""`hss-inspect options [TASK]`: the options a task takes (`-T name=value`), with their
defaults and meaning, as the README's table gives them; the `hss` presets share hss's."""

from __future__ import annotations

import argparse

from hss_inspect.core.options import TASKS_OPTIONS, options_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "task",
        nargs="?",
        default="hss",
        choices=list(TASKS_OPTIONS),
        help="hss (and its presets: hss_image, hss_video, hss_blind, hss_oracle, hss_agentic, "
        "hss_demo), hss_judge_audit or hss_human [hss]",
    )


def run(args: argparse.Namespace) -> int:
    print(f"hss_inspect/{args.task}: -T name=value")
    print(options_table(TASKS_OPTIONS[args.task]))
    return 0
