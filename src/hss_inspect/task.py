"""The HSS tasks: `hss` with every option, and one explicit task per preset.

A preset is `hss` with a few options fixed by default (still overridable with `-T`).
Each is a plain `@task` function so that `inspect list tasks` and the register's tools,
which read tasks from source, see every one of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.model import Model, get_model
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from hss_inspect.audit.task import build_audit_task
from hss_inspect.conditions.agentic.loop import hss_agent
from hss_inspect.conditions.answer import answer
from hss_inspect.conditions.preflight import check_before_run, check_media_cache, check_role_models
from hss_inspect.conditions.solver import hss_input, human_answer, oracle_answer
from hss_inspect.conditions.turn import limits_record
from hss_inspect.construction.blind import human_answers, is_build
from hss_inspect.core import options as opt
from hss_inspect.core.errors import InputError, SetupError
from hss_inspect.core.options import DEFAULTS, OptionList
from hss_inspect.core.roles import check_role_names, require_roles, roles_resolved
from hss_inspect.core.settings import (
    DEFAULT_EPOCHS,
    HUMAN_CONDITION,
    AgentSettings,
    CachePlan,
    MediaSettings,
    ModelErrors,
)
from hss_inspect.data.dataset import Selection, build_dataset, selected
from hss_inspect.data.fingerprints import RECORD_KEY, prints_record
from hss_inspect.data.release import Release, fingerprints_of, open_release
from hss_inspect.data.rows import TaskRow
from hss_inspect.grading.judge import judge_prompts
from hss_inspect.grading.labeler import failure_cause
from hss_inspect.grading.scorer import rubric_judge
from hss_inspect.hooks.run_pace import RunPace  # noqa: F401  (registers the pace hook with the tasks)
from hss_inspect.human.answers import is_study
from hss_inspect.human.grading import human_dataset
from hss_inspect.human.store import read_answers, settings_of
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.providers.context import batch_mode
from hss_inspect.versioning import comparability_version, task_version


@task
def hss(
    dataset: str = DEFAULTS["dataset"],
    revision: str = DEFAULTS["revision"],
    media: str = DEFAULTS["media"],
    domains: OptionList = DEFAULTS["domains"],
    subdomains: OptionList = DEFAULTS["subdomains"],
    condition: str = DEFAULTS["condition"],
    fps: float = DEFAULTS["fps"],
    max_frames: int = DEFAULTS["max_frames"],
    frame_side: int = DEFAULTS["frame_side"],
    max_images: int | None = DEFAULTS["max_images"],
    frame_bytes_budget: int = DEFAULTS["frame_bytes_budget"],
    image_max_side: int = DEFAULTS["image_max_side"],
    image_max_bytes: int = DEFAULTS["image_max_bytes"],
    native_video: str | bool = DEFAULTS["native_video"],
    media_timeout: float = DEFAULTS["media_timeout"],
    context_window: int | None = DEFAULTS["context_window"],
    output_reserve: int = DEFAULTS["output_reserve"],
    token_rules: str | None = DEFAULTS["token_rules"],
    cache_plan: str = DEFAULTS["cache_plan"],
    judge_retries: int = DEFAULTS["judge_retries"],
    model_errors: str = DEFAULTS["model_errors"],
    agent_steps: int = DEFAULTS["agent_steps"],
    agent_tokens: int = DEFAULTS["agent_tokens"],
    agent_images: int = DEFAULTS["agent_images"],
    agent_window_fps: float = DEFAULTS["agent_window_fps"],
    agent_window_frames: int = DEFAULTS["agent_window_frames"],
    agent_zoom_side: int = DEFAULTS["agent_zoom_side"],
    labeler: bool = DEFAULTS["labeler"],
    labeler_retries: int = DEFAULTS["labeler_retries"],
    **kwargs: Any,
) -> Task:
    """Humanity's Sixth Sense: free-form visual reasoning graded by a rubric judge.

    Args:
        dataset: a hub dataset id; `demo` (the demo set in the package); a local copy of
            the repo (a folder holding `data/test.jsonl` and the media); or a JSONL file
        revision: branch, tag or commit of the hub repo (the default is the release
            commit of `task_configs/release.yaml` once set); the commit it resolves to
            is recorded (`hss_dataset_revision`)
        media: which tasks: `all`, `image` or `video`
        domains: domains by full name or short label (`temporal`, `physical`, `social`,
            `abstract`); one value or a comma list
        subdomains: subdomains by full name or short label; a comma list
        condition: `standard`, `blind`, `oracle` or `agentic` (the presets set it)
        fps: frame sampling rate for video
        max_frames: frame cap; longer clips get a lower rate, never a truncated clip
        frame_side: longest side of a frame in pixels (never upscaled)
        max_images: images per request: frames are thinned uniformly, both ends kept;
            unset, the paper's cap for the model and the provider's documented cap apply
        frame_bytes_budget: raw bytes of all frames of one request; every frame is shrunk
            by one factor only when the total would exceed it (lowered where the
            provider's request limit is)
        image_max_side: images are sent untouched unless their longest side exceeds
            this ...
        image_max_bytes: ... or their size exceeds this; then re-encoded as JPEG (falling
            quality, then smaller), upright
        native_video: `auto`: the whole clip where the paper sent it whole and the
            provider takes video through Inspect, else frames; `true` (refused for a
            provider that cannot); `false`
        media_timeout: seconds allowed to prepare one sample's media file; past it the
            sample fails with an error naming the task, the file and this option
        context_window: tokens of the model's context window (input and output) the
            frames are fitted to: thinned uniformly, then shrunk, until the request fits;
            unset, the server's (vLLM/SGLang `/v1/models`, Ollama), else Inspect's model
            info, else no token limit
        output_reserve: tokens of the window kept for the answer when Inspect sends no
            max_tokens (`--max-tokens`, or the provider's default max_tokens, is kept
            instead)
        token_rules: a YAML file of image-token rules (a list under `image_tokens:`,
            fields as in task_configs/model_limits.yaml), tried before the packaged ones
        cache_plan: prompt caching of the model under evaluation: `plan` writes the shared
            frames only where a later attempt or agentic step will read them, at the TTL
            that saves most; `inspect` leaves Inspect's defaults; `off` writes nothing
        judge_retries: re-asks of the judge when its reply cannot be read
        model_errors: a provider error surviving Inspect's retries: `fail` fails the sample
            (for `inspect eval-retry`), `omit` leaves the attempt out for good (counted in
            `model_error_rate`)
        agent_steps: agentic: model calls per conversation
        agent_tokens: agentic: output tokens per conversation, as the provider reports
            them
        agent_images: agentic: images the tools may return per conversation
        agent_window_fps: agentic: the `frames` tool's rate when the model names none
        agent_window_frames: agentic: frames per `frames` call (the rate is lowered to
            fit)
        agent_zoom_side: agentic: longest side of a crop as returned
        labeler: `true` adds the failure-cause labeller after the judge (needs
            `--model-role labeler=...`)
        labeler_retries: re-asks of the labeller when its reply names no valid cause
        **kwargs: any other name is refused, with the closest option (Inspect would drop
            it and run what the other options select)
    """
    opt.check_names(kwargs, "hss")
    o = opt.checked({k: v for k, v in locals().items() if k != "kwargs"})
    media_settings = opt.media_settings(o)
    agent = agent_settings_of(o)
    model = active_model()
    if roles_known(model):  # else each sample checks them when it starts
        check_role_names()
        require_roles(o["labeler"])
        check_role_models()
    limits = check_before_run(
        media_settings,
        None if model is None else str(model),
        o["condition"],
        model is not None and batch_mode(model),
    )
    release = open_release(o["dataset"], o["revision"])
    chosen = selection(release, o["media"], o["domains"], o["subdomains"])
    rows, size = chosen.rows, chosen.size
    return Task(
        dataset=build_dataset(release, rows),
        solver=conditioned_solver(
            o["condition"],
            release,
            media_settings,
            agent,
            o["model_errors"],
            o["labeler"],
            o["cache_plan"],
        ),
        scorer=scorers(o["judge_retries"], o["labeler"], o["labeler_retries"]),
        epochs=Epochs(DEFAULT_EPOCHS, "mean"),
        version=comparability_version(),
        metadata={
            "hss_task_version": task_version(),
            "hss_condition": o["condition"],
            "hss_dataset": release.description,
            "hss_dataset_requested": {"dataset": o["dataset"], "revision": o["revision"]},
            "hss_dataset_revision": release.revision,
            "hss_dataset_size": size.record(),
            RECORD_KEY: release_record(release, chosen),
            "hss_dataset_pinned": release.revision is not None
            and release.revision == o["revision"],
            "hss_selection": {
                "media": o["media"],
                "domains": o["domains"] or [],
                "subdomains": o["subdomains"] or [],
                "tasks": len(rows),
                "videos": sum(row.media_type == "video" for row in rows),
            },
            "hss_media_settings": media_settings.as_dict(),
            "hss_provider_limits": None if limits is None else limits_record(limits),
            "hss_model_errors": o["model_errors"],
            "hss_cache_plan": o["cache_plan"],
            "hss_judge_retries": o["judge_retries"],
            "hss_judge_prompt_sha256": judge_prompts().sha256,
            **({"hss_agent_settings": agent.as_dict()} if o["condition"] == "agentic" else {}),
        },
    )


# Presets. `kwargs` (by that name, which every supported Inspect passes through) takes
# any option of `hss`; the preset's own values are defaults a user may still override.


@task
def hss_image(**kwargs: Any) -> Task:
    """HSS image tasks only: the image column of the paper's Table 1.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"media": "image", **kwargs})


@task
def hss_video(**kwargs: Any) -> Task:
    """HSS video tasks only: the video column of Table 1 and the frame sweep of App. H.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"media": "video", **kwargs})


@task
def hss_blind(**kwargs: Any) -> Task:
    """The blind control (Sec. 3.1): the question alone, no media, no media note.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"condition": "blind", **kwargs})


@task
def hss_agentic(**kwargs: Any) -> Task:
    """The agentic condition (Sec. 3.3, App. D and F): inspection tools, then one answer.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"condition": "agentic", **kwargs})


@task
def hss_demo(**kwargs: Any) -> Task:
    """The eight-task demo set shipped in the package: checks a setup in a minute, offline.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"dataset": "demo", **kwargs})


@task
def hss_oracle(**kwargs: Any) -> Task:
    """Reference answers graded by the judge (run with --model none): the judge's error bound.

    Args:
        **kwargs: any option of `hss`; this preset's own value is only a default.
    """
    return hss(**{"condition": "oracle", **kwargs})


def scorers(judge_retries: int, labeler: bool, labeler_retries: int) -> list[Scorer]:
    """The rubric judge, then (optionally) the failure-cause labeller, which reads its score."""
    chosen = [rubric_judge(retries=judge_retries)]
    if labeler:
        chosen.append(failure_cause(retries=labeler_retries))
    return chosen


def agent_settings_of(o: dict[str, Any]) -> AgentSettings:
    return AgentSettings(
        max_steps=o["agent_steps"],
        max_output_tokens=o["agent_tokens"],
        max_tool_images=o["agent_images"],
        window_fps=o["agent_window_fps"],
        window_max_frames=o["agent_window_frames"],
        zoom_side=o["agent_zoom_side"],
    )


def selected_rows(
    release: Release, media: str, domains: OptionList, subdomains: OptionList
) -> list[TaskRow]:
    return selection(release, media, domains, subdomains).rows


def selection(
    release: Release, media: str, domains: OptionList, subdomains: OptionList
) -> Selection:
    """The rows a run evaluates, with what it records of the whole dataset."""
    try:
        return selected(release, media, domains, subdomains)
    except InputError as exc:  # the task's options are given as -T
        raise InputError(f"-T {exc}") from None


def conditioned_solver(
    condition: str,
    release: Release,
    media: MediaSettings,
    agent: AgentSettings,
    model_errors: ModelErrors = DEFAULTS["model_errors"],
    labeler: bool = False,
    cache_plan: CachePlan = DEFAULTS["cache_plan"],
) -> list[Solver]:
    """The solvers of `condition`; the first refuses to start without the roles needed."""
    if condition == "oracle":
        return [oracle_answer(labeler)]
    if condition == "agentic":
        return [
            hss_input(release, media, "standard", labeler, cache_plan, conversation=True),
            hss_agent(release, media, agent, model_errors),
        ]
    return [
        hss_input(release, media, condition, labeler, cache_plan),
        answer(model_errors),
    ]


def release_record(release: Release, chosen: Selection) -> dict[str, Any]:
    """The fingerprint of each task the run reads (`data.fingerprints`), with its release's
    rows digest, for its log: what makes two runs comparable, and what a later release
    changed."""
    prints = fingerprints_of(release, chosen.rows, remembered_sha256)
    return prints_record(prints, chosen.rows_digest)


def roles_known(model: Model | None) -> bool:
    """Whether Inspect bound the run's model roles before building this task for it."""
    return model is not None and roles_resolved()


def active_model() -> Model | None:
    """The model Inspect is creating this task for (None outside an eval)."""
    try:
        return get_model()
    except Exception:  # no active model: the task was built outside `inspect eval`
        return None


@task
def hss_judge_audit(
    dataset: str = DEFAULTS["dataset"],
    revision: str = DEFAULTS["revision"],
    media: str = DEFAULTS["media"],
    domains: OptionList = DEFAULTS["domains"],
    subdomains: OptionList = DEFAULTS["subdomains"],
    kinds: OptionList = DEFAULTS["kinds"],
    sample_tasks: int | None = DEFAULTS["sample_tasks"],
    judge_retries: int = DEFAULTS["judge_retries"],
    perturber_retries: int = DEFAULTS["perturber_retries"],
    **kwargs: Any,
) -> Task:
    """The judge audit: answers with verdicts known by construction, graded by the `grader`.

    Args:
        dataset: as for `hss`.
        revision: as for `hss`.
        media: as for `hss`.
        domains: as for `hss`.
        subdomains: as for `hss`.
        kinds: judge audit: the kinds of answers to build (all when unset); a comma list
        sample_tasks: judge audit: a seeded sample of this many tasks (all when unset)
        judge_retries: as for `hss`.
        perturber_retries: judge audit: re-asks of the perturber when its reply cannot be
            used
        **kwargs: as for `hss`.
    """
    opt.check_names(kwargs, "hss_judge_audit")
    o = opt.checked({k: v for k, v in locals().items() if k != "kwargs"})
    if roles_known(active_model()):  # else each sample checks the roles when it starts
        check_role_models()
    check_media_cache()  # the perturber's variants are kept there
    release = open_release(o["dataset"], o["revision"])
    return build_audit_task(
        release,
        selected_rows(release, o["media"], o["domains"], o["subdomains"]),
        requested={"dataset": o["dataset"], "revision": o["revision"]},
        selection={
            "media": o["media"],
            "domains": o["domains"] or [],
            "subdomains": o["subdomains"] or [],
        },
        kinds=o["kinds"] or [],
        sample_tasks=o["sample_tasks"],
        judge_retries=o["judge_retries"],
        perturber_retries=o["perturber_retries"],
        version=(comparability_version(), task_version()),
        check_roles=roles_known(active_model()),
    )


@task
def hss_human(
    answers: str | None = DEFAULTS["answers"],
    dataset: str = DEFAULTS["dataset"],
    revision: str = DEFAULTS["revision"],
    media: str = DEFAULTS["media"],
    domains: OptionList = DEFAULTS["domains"],
    subdomains: OptionList = DEFAULTS["subdomains"],
    judge_retries: int = DEFAULTS["judge_retries"],
    **kwargs: Any,
) -> Task:
    """People's answers (a study, a build's blind answers, or another platform's JSONL)
    graded by the `grader` judge.

    Args:
        answers: human study: a study's SQLite file (`hss-inspect human new`), a build's
            (`hss-inspect build new --blind-answers`: the reviewers' blind answers to the
            dataset's tasks) or a JSONL file of answers (`task_id`, `annotator`, `answer`,
            `confidence`, `seconds`, `view`)
        dataset: as for `hss`; for a study, its own dataset and commit unless given; for
            a build, its export (or the folder `hss-inspect build check` writes).
        revision: as for `hss`.
        media: as for `hss`.
        domains: as for `hss`.
        subdomains: as for `hss`.
        judge_retries: as for `hss`.
        **kwargs: as for `hss`.
    """
    opt.check_names(kwargs, "hss_human")
    o = opt.checked({k: v for k, v in locals().items() if k != "kwargs"})
    if o["answers"] is None:
        raise SetupError(
            "hss_human grades people's answers: give -T answers=STUDY.sqlite (hss-inspect "
            "human new) or -T answers=answers.jsonl"
        )
    path = Path(o["answers"]).expanduser()
    source = study_source(path, o["dataset"], o["revision"])
    found = None if is_build(path) else read_answers(path)
    if roles_known(active_model()):  # else each sample checks them when it starts
        check_role_names()
        require_roles(False)
        check_role_models()
    release = open_release(*source)
    if found is None:  # a build: its blind answers to the tasks of the dataset given
        found = human_answers(path, {row.task_id for row in release.read_rows()})
    chosen = selection(release, o["media"], o["domains"], o["subdomains"])
    rows, size = chosen.rows, chosen.size
    samples, unanswered = human_dataset(release, rows, found, path)
    return Task(
        dataset=samples,
        solver=[human_answer()],
        scorer=scorers(o["judge_retries"], False, DEFAULTS["labeler_retries"]),
        epochs=Epochs(1, "mean"),
        version=comparability_version(),
        metadata={
            "hss_task_version": task_version(),
            "hss_condition": HUMAN_CONDITION,
            "hss_dataset": release.description,
            "hss_dataset_requested": {"dataset": source[0], "revision": source[1]},
            "hss_dataset_revision": release.revision,
            "hss_dataset_size": size.record(),
            RECORD_KEY: release_record(release, chosen),
            "hss_human_answers": str(path),
            "hss_human_unanswered": unanswered,
            "hss_selection": {
                "media": o["media"],
                "domains": o["domains"] or [],
                "subdomains": o["subdomains"] or [],
                "tasks": len(rows) - len(unanswered),
            },
            "hss_judge_retries": o["judge_retries"],
            "hss_judge_prompt_sha256": judge_prompts().sha256,
        },
    )


def study_source(path: Path, dataset: str, revision: str) -> tuple[str, str]:
    """The dataset and revision to grade against: a study's own, unless others are given;
    for a build's blind answers, the one given."""
    given = (dataset, revision) != (DEFAULTS["dataset"], DEFAULTS["revision"])
    if not given and is_build(path):
        raise SetupError(
            f"-T answers={path} is a build: give -T dataset= its export (`hss-inspect build "
            "export`), the split whose tasks its blind answers answer"
        )
    if given or not is_study(path):
        return dataset, revision
    settings = settings_of(path)
    return str(settings["dataset"]), str(settings["revision"] or DEFAULTS["revision"])
