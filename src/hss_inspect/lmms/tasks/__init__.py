"""The task YAMLs (`hss`, `hss_image`, `hss_video`, `hss_demo`, their shared template and
the one-line seed lmms-eval loads first) and the module they name. lmms-eval indexes this
folder (found through `LMMS_EVAL_PLUGINS=hss_inspect.lmms`, or named with `--include_path`).

- `utils`: the functions the YAMLs name, each handing over to `hss_inspect.lmms`.
"""
