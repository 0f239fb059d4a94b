"""The HSS release: rows, the hub and local copies, the demo set, Inspect samples.

- `dataset`: the selected rows as Inspect samples.
- `demo_maker/`: the demo set's generator, out of what a run imports.
- `release`: where the release lives: a hub repo at a resolved commit, or a local copy.
- `fingerprints`: each task's fingerprint (media, prompt, answer key, labels), what two
  releases' differences cost the results measured on the older.
- `hub`: fetching a hub dataset's files, with failures a person can act on.
- `demo`: where the demo set shipped in the package is.
- `rows`: reading and validating rows (`data/test.jsonl`).
"""
