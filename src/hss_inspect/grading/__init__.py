"""Grading: the rubric judge, the metrics, the failure-cause labeller and its taxonomy.

- `scorer`: the rubric judge as an Inspect scorer (the `grader` role).
- `labeler`: the failure-cause labeller as an Inspect scorer (the `labeler` role).
- `causes`: the failure-cause taxonomy and the labeller's words, pure.
- `metrics`: pass@1, rubric score, bootstrap intervals and the breakdowns.
- `judge`: the judge's words and the reading of its replies, pure.
- `asking`: one request, then re-asks until a reply can be read.
"""
