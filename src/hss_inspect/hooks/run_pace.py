"""The hook that tells the cache plan how an HSS run is paced: its epochs and samples when
the task starts, and when each sample-epoch starts and ends (conditions/cache_plan.py).

The plan needs these to know whether a later attempt of a sample will come, and when:
Inspect runs sample-epochs epoch-major, so the next attempt of a sample starts about one
epoch's wall time after this one. Only public hook events are used.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, SampleEnd, SampleStart, TaskEnd, TaskStart

from hss_inspect.conditions import cache_plan
from hss_inspect.core.command_line import selected_count
from hss_inspect.hooks.registration import hss_task_spec, register_hook


class RunPace(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        spec = hss_task_spec(data)
        if spec is None:
            return
        samples = selected_count(
            spec.dataset.samples or 0, spec.config.limit, spec.config.sample_id
        )
        cache_plan.run_started(data.eval_id, spec.config.epochs, samples or None)

    async def on_sample_start(self, data: SampleStart) -> None:
        summary = data.summary
        cache_plan.sample_started(data.eval_id, data.sample_id, str(summary.id), summary.epoch)

    async def on_sample_end(self, data: SampleEnd) -> None:
        cache_plan.sample_finished(data.eval_id, data.sample_id)

    async def on_task_end(self, data: TaskEnd) -> None:
        cache_plan.run_finished(data.eval_id)


register_hook(RunPace, "hss_run_pace", "Measures an HSS run's pace for its prompt-cache plan")
