"""The package's Inspect hooks: `hss_log_size` warns before a run would log more than about
1 GB of frames (`log_size`); `hss_run_pace` measures a run's pace for the prompt-cache plan
(`run_pace`). Both are registered through `registration`, which leaves them out of the
processes that run no eval."""
