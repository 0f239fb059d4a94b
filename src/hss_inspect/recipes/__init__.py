"""The paper's experiments as recipes.

- `ray_engine`: each model's share of a plan as a Ray task, on one machine or a cluster.
- `run`: a plan run as one Inspect eval set, a model's share of it, and logs graded again
  by the other judges.
- `flow`: a plan written as an Inspect Flow spec.
- `processes`: a plan split by model, each model's share in its own process.
- `plans`: each recipe's runs from the paper's registry, pure.
"""
