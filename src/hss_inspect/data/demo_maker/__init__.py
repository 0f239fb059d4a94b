"""The demo set's generator, out of what a run imports
(`python -m hss_inspect.data.demo_maker.tasks DIR` writes the set again).

- `tasks`: the rows (question, reference answer, rubric, the scene) and the writer.
- `scenes`: each picture and clip drawn from geometry kept as data.
"""
