"""HSS tasks built as the paper built them (Sec. 2.3, 2.4, App. B.2, Fig. 8): authored from a
media pool, checked by the judge and the blind control, passed by three independent review
rounds, counted as a funnel, and written as a release the tasks load. A build is one
SQLite file; its pages are served on the same web machinery as the human study (`web/`).

- `app`: the web app: authors' and reviewers' private pages, the media (Starlette).
- `blind_pages`: a review round's blind step: the media and question alone, the answer form.
- `pages`: the pages: the pool, the authoring form beside the principles, the review form.
- `create`: a new build (the pool scanned, people and links), and tasks imported into one.
- `check`: the reference and blind checks as `inspect eval` runs, read back as flags.
- `duplicates`: near-duplicate media within the pool and of a reference release.
- `media_match`: when two images or clips are near-duplicates: the rules and thresholds.
- `groups`: near-duplicates as groups (union-find), each pair in one group checked once.
- `text_repeats`: questions and references that nearly repeat another, flagged.
- `export`: the admitted tasks as a release folder with checksums and a dataset card.
- `versions`: versions of the split: tasks reopened for an erratum or retired, each export a
  version with its fingerprints, the changelog from one to the next.
- `funnel_report`: the funnel as Markdown, JSON, or HTML with a Fig. 8 style plot.
- `funnel`: the funnel's arithmetic over the tasks' histories: net survivors per round.
- `blind`: reviewers' blind answers, stored once before the reveal, and their grades.
- `store`: the build's SQLite file, one door: pool, people, tasks, revisions, reviews, flags.
- `revisions`: an author's writes: a draft saved, submitted, given up, or imported.
- `rounds`: review rounds: dealt, shown, decided; the checks' flags.
- `task_views`: a task as its pages show it, review slots, the funnel's histories.
- `build_file`: the file's schema and connections, people and tokens, the pool's items.
- `authoring`: what an author writes, the rules a draft meets to go to review, and the
  build's taxonomy (the paper's, or a lab's own).
- `deal`: who reviews a round: never the author nor an earlier round's reviewer; seeded.
- `pool`: the media pool's items: images and clips that open, each with an id.
- `consensus`: blind answers that met the rubric; the split's human baseline, pure.
- `canary`: the build's canary GUID, written into every file of its release.
- `rules`: the rounds, principles, verdicts and reasons to drop, from task_configs.
"""
