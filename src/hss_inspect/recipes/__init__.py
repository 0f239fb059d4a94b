"""The paper's experiments as recipes, and a log carried to a later release.

- `ray_engine`: each model's share of a plan as a Ray task, on one machine or a cluster.
- `run`: a plan run as one Inspect eval set, a model's share of it, and logs graded again
  by the other judges.
- `carry`: a log of one release made a log of a later one: kept, graded again, or run
  again, task by task, as the fingerprints' difference says.
- `flow`: a plan written as an Inspect Flow spec.
- `processes`: a plan split by model, each model's share in its own process.
- `plans`: each recipe's runs from the paper's registry, pure.
"""
