"""Every option of the HSS tasks, declared once: name, kind, default, allowed values, help.

The tasks check their `-T name=value` options here; `hss-inspect prepare | estimate |
frames` build their flags from the same declarations (`--frame-side` is `-T frame_side`),
so a value means the same and is refused the same way wherever it is given; the README's
options table is printed from them (`python -m hss_inspect.core.options`) and a test keeps
it so.

Inspect parses `-T` values as YAML, so numbers may arrive as strings or ints and a value
holding a comma arrives as a list; each check accepts what a user can type.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hss_inspect.core import settings as s
from hss_inspect.core.config import release_commit
from hss_inspect.core.markdown import table

if TYPE_CHECKING:
    from hss_inspect.core.errors import OptionError

OptionList = str | Sequence[str] | None
Kind = Literal[
    "text", "optional_text", "choice", "flag", "number", "count", "optional_count", "names"
]


def option_error(name: str, value: Any, expected: str) -> OptionError:
    # Imported here: the errors module loads Inspect, which `hss-inspect --help`, `frames`
    # and `cache` (built from these declarations) must start without.
    from hss_inspect.core.errors import OptionError

    return OptionError(name, value, expected)


def choice(name: str, value: Any, valid: Sequence[str]) -> str:
    from hss_inspect.core.names import aside

    text = str(value).strip().lower()
    if text not in valid:
        raise option_error(name, value, "use one of " + ", ".join(valid) + aside(text, valid))
    return text


def positive_number(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not number > 0 or number == float("inf"):
        raise option_error(name, value, "use a number greater than 0")
    return number


def whole_number(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool):
        raise option_error(name, value, f"use a whole number of at least {minimum}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise option_error(name, value, f"use a whole number of at least {minimum}") from None
    if number < minimum:
        raise option_error(name, value, f"use a whole number of at least {minimum}")
    return number


def optional_whole_number(name: str, value: Any, minimum: int) -> int | None:
    if value is None or str(value).strip().lower() in ("", "none", "null"):
        return None
    return whole_number(name, value, minimum)


def as_list(value: OptionList) -> list[str]:
    """A list option given as one string, a comma list (YAML turns it into a list) or a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part).strip() for part in value if str(part).strip()]


@dataclass(frozen=True)
class Option:
    """One task option. `minimum` bounds counts."""

    name: str
    kind: Kind
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: int = 0
    # what Inspect's YAML reading of `-T` makes of a choice: `off` arrives as False
    aliases: tuple[tuple[str, str], ...] = ()

    def check(self, value: Any) -> Any:
        """The value as the task uses it, or an OptionError naming the option."""
        if self.kind == "text":
            return str(value)
        if self.kind == "optional_text":
            text = "" if value is None else str(value).strip()
            return None if text.lower() in ("", "none", "null") else text
        if self.kind in ("choice", "flag"):
            given = dict(self.aliases).get(str(value).strip().lower(), value)
            picked = choice(self.name, given, self.choices)
            return picked == "true" if self.kind == "flag" else picked
        if self.kind == "number":
            return positive_number(self.name, value)
        if self.kind == "count":
            return whole_number(self.name, value, self.minimum)
        if self.kind == "optional_count":
            return optional_whole_number(self.name, value, self.minimum)
        return as_list(value) or None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def shown_default(self) -> str:
        if self.default is None:
            return "all" if self.kind == "names" else "none"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return str(self.default)


_FLAG = ("true", "false")

OPTIONS: dict[str, Option] = {
    o.name: o
    for o in [
        Option(
            "dataset",
            "text",
            s.DEFAULT_DATASET,
            "a hub dataset id; `demo` (the demo set in the package); a local copy of the repo "
            "(a folder holding `data/test.jsonl` and the media); or a JSONL file",
        ),
        Option(
            "revision",
            "text",
            release_commit() or s.DEFAULT_REVISION,
            "branch, tag or commit of the hub repo (the default is the release commit of "
            "`task_configs/release.yaml` once set); the commit it resolves to is recorded "
            "(`hss_dataset_revision`)",
        ),
        Option("media", "choice", "all", "which tasks: `all`, `image` or `video`", s.MEDIA_CHOICES),
        Option(
            "domains",
            "names",
            None,
            "domains by full name or short label (`temporal`, `physical`, `social`, "
            "`abstract`); one value or a comma list",
        ),
        Option("subdomains", "names", None, "subdomains by full name or short label; a comma list"),
        Option(
            "condition",
            "choice",
            "standard",
            "`standard`, `blind`, `oracle` or `agentic` (the presets set it)",
            s.CONDITIONS,
        ),
        Option("fps", "number", s.DEFAULT_FRAMES.fps, "frame sampling rate for video"),
        Option(
            "max_frames",
            "count",
            s.DEFAULT_FRAMES.max_frames,
            "frame cap; longer clips get a lower rate, never a truncated clip",
            minimum=1,
        ),
        Option(
            "frame_side",
            "count",
            s.DEFAULT_FRAMES.frame_side,
            "longest side of a frame in pixels (never upscaled)",
            minimum=16,
        ),
        Option(
            "max_images",
            "optional_count",
            s.DEFAULT_FRAMES.max_images,
            "images per request: frames are thinned uniformly, both ends kept; unset, the "
            "paper's cap for the model and the provider's documented cap apply",
            minimum=1,
        ),
        Option(
            "frame_bytes_budget",
            "count",
            s.DEFAULT_MEDIA.frame_bytes_budget,
            "raw bytes of all frames of one request; every frame is shrunk by one factor only "
            "when the total would exceed it (lowered where the provider's request limit is)",
            minimum=1,
        ),
        Option(
            "image_max_side",
            "count",
            s.DEFAULT_MEDIA.image_max_side,
            "images are sent untouched unless their longest side exceeds this ...",
            minimum=16,
        ),
        Option(
            "image_max_bytes",
            "count",
            s.DEFAULT_MEDIA.image_max_bytes,
            "... or their size exceeds this; then re-encoded as JPEG (falling quality, then "
            "smaller), upright",
            minimum=1,
        ),
        Option(
            "native_video",
            "choice",
            s.DEFAULT_MEDIA.native_video,
            "`auto`: the whole clip where the paper sent it whole and the provider takes video "
            "through Inspect, else frames; `true` (refused for a provider that cannot); `false`",
            s.NATIVE_VIDEO_CHOICES,
        ),
        Option(
            "media_timeout",
            "number",
            s.DEFAULT_MEDIA.media_timeout,
            "seconds allowed to prepare one sample's media file; past it the sample fails with "
            "an error naming the task, the file and this option",
        ),
        Option(
            "context_window",
            "optional_count",
            s.DEFAULT_MEDIA.context_window,
            "tokens of the model's context window (input and output) the frames are fitted "
            "to: thinned uniformly, then shrunk, until the request fits; unset, the server's "
            "(vLLM/SGLang `/v1/models`, Ollama), else Inspect's model info, else no token limit",
            minimum=1,
        ),
        Option(
            "output_reserve",
            "count",
            s.DEFAULT_MEDIA.output_reserve,
            "tokens of the window kept for the answer when Inspect sends no max_tokens "
            "(`--max-tokens`, or the provider's default max_tokens, is kept instead)",
        ),
        Option(
            "token_rules",
            "optional_text",
            s.DEFAULT_MEDIA.token_rules,
            "a YAML file of image-token rules (a list under `image_tokens:`, fields as in "
            "task_configs/model_limits.yaml), tried before the packaged ones",
        ),
        Option(
            "cache_plan",
            "choice",
            s.DEFAULT_CACHE_PLAN,
            "prompt caching of the model under evaluation: `plan` writes the shared frames "
            "only where a later attempt or agentic step will read them, at the TTL that saves "
            "most; `inspect` leaves Inspect's defaults; `off` writes nothing",
            s.CACHE_PLANS,
            aliases=(("false", "off"),),
        ),
        Option(
            "judge_retries",
            "count",
            s.DEFAULT_JUDGE_RETRIES,
            "re-asks of the judge when its reply cannot be read",
        ),
        Option(
            "model_errors",
            "choice",
            s.DEFAULT_MODEL_ERRORS,
            "a provider error surviving Inspect's retries: `fail` fails the sample (for "
            "`inspect eval-retry`), `omit` leaves the attempt out for good (counted in "
            "`model_error_rate`)",
            s.MODEL_ERRORS,
        ),
        Option(
            "agent_steps",
            "count",
            s.DEFAULT_AGENT.max_steps,
            "agentic: model calls per conversation",
            minimum=1,
        ),
        Option(
            "agent_tokens",
            "count",
            s.DEFAULT_AGENT.max_output_tokens,
            "agentic: output tokens per conversation, as the provider reports them",
            minimum=1,
        ),
        Option(
            "agent_images",
            "count",
            s.DEFAULT_AGENT.max_tool_images,
            "agentic: images the tools may return per conversation",
        ),
        Option(
            "agent_window_fps",
            "number",
            s.DEFAULT_AGENT.window_fps,
            "agentic: the `frames` tool's rate when the model names none",
        ),
        Option(
            "agent_window_frames",
            "count",
            s.DEFAULT_AGENT.window_max_frames,
            "agentic: frames per `frames` call (the rate is lowered to fit)",
            minimum=1,
        ),
        Option(
            "agent_zoom_side",
            "count",
            s.DEFAULT_AGENT.zoom_side,
            "agentic: longest side of a crop as returned",
            minimum=64,
        ),
        Option(
            "labeler",
            "flag",
            False,
            "`true` adds the failure-cause labeller after the judge (needs "
            "`--model-role labeler=...`)",
            _FLAG,
        ),
        Option(
            "labeler_retries",
            "count",
            s.DEFAULT_LABELER_RETRIES,
            "re-asks of the labeller when its reply names no valid cause",
        ),
        Option(
            "answers",
            "optional_text",
            None,
            "human study: a study's SQLite file (`hss-inspect human new`) or a JSONL file of "
            "answers (`task_id`, `annotator`, `answer`, `confidence`, `seconds`, `view`)",
        ),
        Option(
            "kinds",
            "names",
            None,
            "judge audit: the kinds of answers to build (all when unset); a comma list",
        ),
        Option(
            "sample_tasks",
            "optional_count",
            None,
            "judge audit: a seeded sample of this many tasks (all when unset)",
            minimum=1,
        ),
        Option(
            "perturber_retries",
            "count",
            s.DEFAULT_PERTURBER_RETRIES,
            "judge audit: re-asks of the perturber when its reply cannot be used",
        ),
    ]
}

AUDIT_ONLY = ("kinds", "sample_tasks", "perturber_retries")
HUMAN_ONLY = ("answers",)
# Groups of options the commands share with the tasks.
SELECTION_OPTIONS = ("dataset", "revision", "media", "domains", "subdomains")
FRAME_OPTIONS = ("fps", "max_frames", "frame_side", "max_images")
# The MediaSettings fields that are options under the same names.
MEDIA_OPTIONS = (
    "frame_bytes_budget",
    "image_max_side",
    "image_max_bytes",
    "native_video",
    "media_timeout",
    "context_window",
    "output_reserve",
    "token_rules",
)


# Every option `hss-inspect prepare` takes as a flag: what decides the media a run sends.
PREPARE_OPTIONS = (*SELECTION_OPTIONS, *FRAME_OPTIONS, *MEDIA_OPTIONS)

DEFAULTS: dict[str, Any] = {name: option.default for name, option in OPTIONS.items()}


def spell(name: str, value: object = None) -> str:
    """A task option as the user gives it here: `-T name=value` to a task, `--name value` to
    an `hss-inspect` command that takes it as a flag."""
    if os.environ.get(s.OPTIONS_AS_FLAGS_ENV):
        flag = "--" + name.replace("_", "-")
        return flag if value is None else f"{flag} {value}"
    return f"-T {name}" if value is None else f"-T {name}={value}"


def check(name: str, value: Any) -> Any:
    return OPTIONS[name].check(value)


def frame_settings(values: Mapping[str, Any], **override: Any) -> s.FrameSettings:
    """The frame options among `values` (checked) as FrameSettings; `override` replaces
    some (a frame-budget sweep prepares several `max_frames`)."""
    chosen = {name: values[name] for name in FRAME_OPTIONS} | override
    return s.FrameSettings(**chosen)


def media_settings(values: Mapping[str, Any]) -> s.MediaSettings:
    """The media options among `values` (checked; a task's, or a command's flags) as the
    settings media preparation obeys; options not given keep their defaults."""
    given = {name: values[name] for name in MEDIA_OPTIONS if name in values}
    return s.MediaSettings(frames=frame_settings(values), **given)


def option_values(media: s.MediaSettings) -> dict[str, Any]:
    """The frame and media options that give `media` (`media_settings` the other way)."""
    frames = media.frames.as_dict()
    return {
        **{name: frames[name] for name in FRAME_OPTIONS},
        **{name: getattr(media, name) for name in MEDIA_OPTIONS},
    }


def checked(arguments: dict[str, Any]) -> dict[str, Any]:
    """A task's arguments, each checked by its declaration (the first wrong one raises)."""
    return {name: check(name, value) for name, value in arguments.items()}


def _command_type(option: Option, many: bool) -> Callable[[str], Any]:
    """argparse's `type=` for an option: the option's own check, reworded for a flag."""

    def parse(text: str) -> Any:
        try:
            if many:
                return [option.check(part) for part in as_list(text)]
            return option.check(text)
        except Exception as exc:  # an OptionError, whose class is imported only when raised
            expected = getattr(exc, "expected", None)
            if expected is None:
                raise
            raise argparse.ArgumentTypeError(f"{text!r} is not valid: {expected}") from None

    parse.__name__ = option.kind  # what argparse names in its "invalid value" message
    return parse


def add_flags(
    parser: argparse.ArgumentParser, names: Sequence[str], many: Sequence[str] = ()
) -> None:
    """Add `--name-with-dashes` for each task option in `names`, checked as the task checks
    it; an option in `many` takes a comma list of values (a list in the namespace)."""
    for name in names:
        option = OPTIONS[name]
        kind = _command_type(option, name in many)
        default = [option.default] if name in many else option.default
        help_text = option.help + (
            " (a comma list: one preparation for each)" if name in many else ""
        )
        parser.add_argument(
            option.flag,
            dest=name,
            type=kind,
            default=default,
            help=f"{help_text} [{option.shown_default}]",
        )


def add_model_server_flags(parser: argparse.ArgumentParser) -> None:
    """`--model-base-url` and `--max-tokens`, as `inspect eval` takes them: the server a
    model's context window is asked of, and the output kept free in that window."""
    parser.add_argument(
        "--model-base-url",
        help="the model's server, as `inspect eval --model-base-url` takes it (asked for its "
        "context window); else the provider's environment variable",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        help="as `inspect eval --max-tokens`: the output budget the run sends, kept free in "
        "the context window",
    )


def options_table(names: Sequence[str]) -> str:
    """The README's table of these options (name, default, meaning)."""
    rows = [[f"`{n}`", f"`{OPTIONS[n].shown_default}`", OPTIONS[n].help] for n in names]
    return table(["option", "default", "meaning"], rows)


TASK_OPTIONS = tuple(n for n in OPTIONS if n not in (*AUDIT_ONLY, *HUMAN_ONLY))
AUDIT_OPTIONS = (*SELECTION_OPTIONS, "kinds", "sample_tasks", "judge_retries", "perturber_retries")
# The options of each task: `hss` and its presets share theirs.
HUMAN_OPTIONS = ("answers", *SELECTION_OPTIONS, "judge_retries")
TASKS_OPTIONS: dict[str, tuple[str, ...]] = {
    "hss": TASK_OPTIONS,
    "hss_judge_audit": AUDIT_OPTIONS,
    "hss_human": HUMAN_OPTIONS,
}


# Where a name given as a task option belongs when it is one of `inspect eval`'s own: a
# role's model, or an option of the eval or of the model's generation.
Place = Callable[[str, Any], "str | None"]
_JUDGE_WORDS = ("grader", "judge")
_EVAL_FLAGS = (
    "model",
    "model_base_url",
    "epochs",
    "limit",
    "sample_id",
    "max_samples",
    "max_tasks",
    "log_dir",
    "fail_on_error",
    *("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit"),
)


def inspect_place(name: str, value: Any) -> str | None:
    """Where `inspect eval` takes `name`, given as `-T name=value`: `--model-role
    grader=VALUE` for the judge, `--epochs VALUE` for an option of the eval or of the
    model's generation (`--max-tokens`), else None."""
    if name in _JUDGE_WORDS or name == "perturber":
        role = "grader" if name in _JUDGE_WORDS else name
        return f"Inspect's --model-role {role}={value}"
    if name in _EVAL_FLAGS or name in _generate_options():
        return f"Inspect's --{name.replace('_', '-')} {value}"
    return None


def _generate_options() -> set[str]:
    from inspect_ai.model import GenerateConfig

    return set(GenerateConfig.model_fields)


def check_names(
    given: Iterable[str] | Mapping[str, Any], task: str, place: Place = inspect_place
) -> None:
    """Refuse an option `task` does not have (Inspect would drop it with a warning and run
    everything the other options select), naming the closest one it has, or, for a name
    that belongs elsewhere (`place`: `-T grader=...`), where it goes."""
    from hss_inspect.core.names import unknown_name

    known = TASKS_OPTIONS[task]
    values = given if isinstance(given, Mapping) else dict.fromkeys(given, "...")
    for name, value in values.items():
        if name in known:
            continue
        what = f"an option of hss_inspect/{task}" + (" or its presets" if task == "hss" else "")
        right = place(name, value)
        if right is not None:
            from hss_inspect.core.errors import SetupError

            raise SetupError(f"-T {name} is not {what}: use {right}")
        listed = f"`hss-inspect options{'' if task == 'hss' else ' ' + task}` lists them all"
        raise unknown_name(name, what, known, listed, form="-T {}")


def update_table(markdown: str) -> str:
    """`markdown` with its options table (the one headed `| option | default |`) replaced
    by the declared one."""
    start = markdown.index("| option | default | meaning |")
    end = markdown.find("\n\n", start)
    end = len(markdown) if end == -1 else end
    return markdown[:start] + options_table(TASK_OPTIONS) + markdown[end:]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:2] == ["--update"]:  # python -m hss_inspect.core.options --update README.md
        page = Path(sys.argv[2])
        page.write_text(update_table(page.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(options_table(TASK_OPTIONS))
