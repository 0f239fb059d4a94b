"""Grading: the rubric judge, the metrics, the failure-cause labeller and its taxonomy."""
