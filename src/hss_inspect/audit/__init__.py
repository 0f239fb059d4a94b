"""The judge audit (task `hss_judge_audit`): answers whose verdicts are known by
construction, graded by the production judge, so its errors can be counted.

- `task`: the body of the `hss_judge_audit` task (its signature lives in `task.py`).
- `solver`: submits the sample's known answer, made by rule or by the perturber.
- `scorer`: the production judge on that answer, scored against the known verdicts.
- `report`: the audit tables of one judge, and of two judges side by side.
- `cache`: the perturber's answers on disk, so every judge grades the same ones.
- `perturber`: the model bound to `perturber` rewrites a reference answer.
- `tally`: the audit's arithmetic (errors, rates, Wilson intervals), pure.
- `dataset`: the audit's samples, one per selected task and kind.
- `kinds`: the kinds of known answer and what a correct judge says of each.
- `variants`: the answers made by rule, and the texts they use.
"""
