"""The paper's experiments as recipes.

- `run`: a plan run as one Inspect eval set, and logs graded again by the other judges.
- `flow`: a plan written as an Inspect Flow spec.
- `plans`: each recipe's runs from the paper's registry, pure.
"""
