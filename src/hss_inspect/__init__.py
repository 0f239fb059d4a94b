"""Humanity's Sixth Sense (HSS) for Inspect AI.

The tasks are `hss_inspect/hss` and its presets (`task`); the `hss-inspect` command is
`commands.cli`. The tasks are imported on first use, so that the command and
`import hss_inspect` stay light.

One sample's path through the rooms, in

    inspect eval hss_inspect/hss --model openai/gpt-6-astra \\
        --model-role grader=anthropic/claude-opus-5

1. task: `task.hss` checks its options (`core/options`) and what cannot run
   (`conditions/preflight`), opens the release and selects rows (`data/`), and builds
   the Task with its solvers, scorer and metrics.
2. solver: `conditions/solver` fetches the sample's media file (`data/release`).
3. user turn: `conditions/turn` builds the note, the media and the question under the
   model's limits (`providers/limits`, `providers/fit`) and the cache plan
   (`conditions/cache_plan`), and records what was sent (`sent_media`).
4. media: `media/service` gets the frames or the image through the cache
   (`media/frame_cache`, `media/image_cache`), decoding a clip once (`media/video`,
   `media/plan`).
5. generate: `conditions/answer` calls the model and decides what counts as an answer
   (refusals, empty answers, provider errors).
6. scorer: `grading/scorer` asks the judge bound to the `grader` role.
7. judge: `grading/judge` writes the judge's request and reads its verdicts
   (`grading/asking` re-asks an unreadable reply).
8. metrics: `grading/metrics` reduces the attempts to pass@1 with its interval and the
   breakdowns.
9. log: Inspect writes the `.eval` log; `hooks/` warn of its size and pace the cache plan.
10. report: `hss-inspect report` reads it (`report/logs`, `report/records`), computes
   (`report/tables`, `report/stats`) and renders (`report/render`).

The layers, top to bottom: each imports only from the layers below it, and rooms of one
layer (`|`) never import each other (`[tool.importlinter]` in pyproject.toml, checked by
the test command):

    _registry       registers every component with Inspect (the entry point)
    commands        the `hss-inspect` command: parse, call the rooms below, print
    recipes         the paper's experiments as plans of runs, run or written for Flow;
                    a log carried to a later release
    task            the @task functions, one per preset
    scripted | hooks | versioning | lmms
                    the offline stand-in model for every role | the Inspect hooks (log
                    size, run pace) | the version fingerprints of what changes results
                    | HSS as lmms-eval tasks (the `lmms` extra)
    audit | estimate | human | construction
                    the judge audit: known answers graded by the production judge | a
                    run's requests and bill, before anything is sent | a human study:
                    tasks dealt to annotators, their pages, answers to grade | the
                    tasks built: authored from a media pool, three review rounds, the
                    funnel, the release
    web             what the people-facing rooms share: private links, the store that
                    loses nothing, media as people see them, pages and the server
    report          Inspect logs -> per-attempt records -> pure arithmetic -> renderers
    conditions | grading
                    what the model is sent and how its answer is taken | the rubric
                    judge, scorer, metrics and failure-cause labeller
    providers       what each provider accepts and costs: limits, token fit, caching,
                    batching, prices, the paper's model registry
    data | media    the release (rows, hub, local copies, demo, samples) | frames and
                    images (sampling plan, decoding, cache, preparation, the service)
    core            settings, options, taxonomy, packaged files, errors, roles, tables,
                    score values, `inspect eval` command lines

Each room's own docstring lists its modules.
"""

from typing import Any

__all__ = [
    "hss",
    "hss_agentic",
    "hss_blind",
    "hss_demo",
    "hss_human",
    "hss_image",
    "hss_judge_audit",
    "hss_oracle",
    "hss_video",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hss_inspect import task

        return getattr(task, name)
    raise AttributeError(name)
