"""The paper's experiments as recipes: plans of runs from the paper's registry (`plans`,
pure), run as one Inspect eval set or re-graded with the other judges (`run`), or written
as an Inspect Flow spec (`flow`)."""
