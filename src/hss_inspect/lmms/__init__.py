"""HSS as lmms-eval tasks (`pip install "hss-inspect[lmms]"`, docs/lmms-eval.md).

`lmms-eval --include_path "$(python -m hss_inspect.lmms)" --tasks hss_demo ...` finds the
task YAMLs in `tasks/` (the folder also meets lmms-eval's plugin contract, a `tasks` folder
and a `models` module, for LMMS_EVAL_PLUGINS=hss_inspect.lmms). The YAMLs name the
functions of `tasks/utils.py`, which only hand over to the modules here, and these build
on the package's own rooms, so lmms-eval runs the Inspect task's protocol:

- `options`: the task options a run takes (HSS_TASK_ARGS, HSS_MODEL), checked as `-T`
  options are.
- `docs`: the rows of the release (hub at a commit, local copy, demo) as documents.
- `turn`: the user turn of `conditions/turn` in lmms-eval's chat format.
- `pictures`: its images as PIL images that keep the bytes the Inspect task sends, which
  lmms-eval's API models send unchanged; the check that refuses a model that would not.
- `judge`: `grading/scorer`'s conversation with lmms-eval's judge server.
- `results`: attempts graded and reduced as Inspect's `mean` does; `grading/metrics`'
  arithmetic over the tasks.
- `tasks/`: the task YAMLs and the `utils.py` they name.
- `models/`: the empty model list lmms-eval's plugin loader asks for.
- `__main__`: prints the tasks folder, for `--include_path`.

Nothing here imports lmms_eval or torch at import time: `import hss_inspect` stays light,
and only the judge asks for lmms-eval's server when a run grades.
"""
