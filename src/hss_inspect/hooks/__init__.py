"""The package's Inspect hooks.

- `log_size`: `hss_log_size` warns before a run would log more than about 1 GB of frames.
- `run_pace`: `hss_run_pace` measures a run's pace for the prompt-cache plan.
- `registration`: registers them, except in the processes that run no eval.
"""
