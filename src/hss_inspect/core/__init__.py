"""The ground floor: facts every room shares, each defined once.

- `settings`: the protocol's defaults (paper App. C).
- `options`: every task option (name, kind, default, allowed values, help).
- `taxonomy`: the four domains, eleven subdomains and their short labels; a lab's own for a
  build.
- `config`: the YAML shipped with the package (task_configs/, scorers/).
- `errors`: the errors a user fixes, printed by Inspect as one line.
- `user_files`: a user's YAML or JSON file, refused in one line where it does not parse.
- `names`: a name the user typed matched against the known ones (did you mean ...?).
- `roles`: the model roles (grader, labeler, perturber) and the checks they are bound.
- `markdown`: tables as Markdown and HTML.
- `values`: reading a number out of a Score value.
- `command_line`: an eval written back as an `inspect eval` command line.
"""
