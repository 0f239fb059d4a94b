"""A study of people answering HSS tasks under the models' conditions (paper Sec. 3.1,
"Human performance"), in one SQLite file, graded later by the same judge.

- `app`: the web app: each annotator's private page, media and answers (Starlette).
- `study`: a new study: tasks dealt, written, and its media prepared ahead.
- `grading`: the answers as the samples of `hss_human`, for the same judge to grade.
- `pages`: the study's pages, on the shared chrome of `web/`, everything typed escaped.
- `store`: the study's SQLite file: settings, tasks, annotators, assignments, answers.
- `answers`: the answers as JSON lines, from a study or another platform.
- `assign`: which annotator answers which task: balanced and seeded, pure.
"""
