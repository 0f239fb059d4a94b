"""The `hss-inspect` command: each module parses its flags, calls the rooms below and
prints; a subcommand's module is imported only when it runs.

- `cli`: the entry point and the list of subcommands.
- `report`: `report` (and `--format register | hf-eval-results`), `agreement`, `compare`,
  `failures`.
- `register`: `register`, the Inspect Evals register's entry, results from logs.
- `estimate`: `estimate`, the requests and the bill of a run before it is sent.
- `prepare`: `prepare`, the media filled into the cache before a run.
- `rebuild`: `rebuild-frames`, the media a logged sample was sent, rebuilt and checked.
- `recipe`: `recipe`, one of the paper's experiments, run or written as a Flow spec.
- `frames`: `frames`, the exact frames a model receives for one clip.
- `cache`: `cache`, where the media cache is and what it holds.
- `human`: `human new | serve | status | export`, a study of people answering HSS.
- `build`: `build new | import | serve | links | status | funnel | check | export | reopen |
  retire`, tasks authored, reviewed in three rounds and exported as a release, in versions.
- `release`: `release diff | carry`, what changed between two releases, and a log carried
  to the newer for the price of the changes.
- `options`: `options`, the options a task takes, with their defaults and meaning.
- `arguments`: flags and words several commands take the same way.
"""
