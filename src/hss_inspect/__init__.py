"""Humanity's Sixth Sense (HSS) for Inspect AI.

The tasks are `hss_inspect/hss` and its presets (`hss_inspect.task`); the `hss-inspect`
command is `hss_inspect.commands.cli`. The tasks are imported on first use, so that the
command and `import hss_inspect` stay light.

The package is built in layers; each imports only from the layers below it, and rooms of
one layer never import each other (`[tool.importlinter]` in pyproject.toml, checked by the
test command):

    _registry       registers every component with Inspect (the entry point)
    commands        the `hss-inspect` command, one module per subcommand
    task            the @task functions, one per preset
    scripted | log_size | versioning
                    the offline stand-in model for every role (it reads the judge's and
                    the perturber's requests), the log-size warning hook, and the version
                    fingerprints of every text and rule that changes results
    audit           the judge audit: known answers graded by the production judge
    report          Inspect logs -> per-attempt records -> pure arithmetic -> renderers
    conditions | grading
                    what the model is sent and how its answer is taken (prompt words,
                    the user turn, the solvers, the answer rules, the agentic loop) |
                    the rubric judge, scorer, metrics, failure-cause labeller
    providers       what each provider accepts in one request (model_limits.yaml): payload
                    and image-token rules, the context window and the token fit, prices
    data | media    the release (rows, hub, local copies, demo, samples) | frames and
                    images (sampling plan, decoding, cache, the async service)
    core            settings, options, taxonomy, packaged files, errors, roles, tables,
                    score values, `inspect eval` command lines
"""

from typing import Any

__all__ = [
    "hss",
    "hss_agentic",
    "hss_blind",
    "hss_demo",
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
