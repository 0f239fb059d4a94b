"""The paper's tables, sweeps, judge agreement, paired comparisons, failure causes, plots,
what each run cost, and the pages of each task and failure example, from Inspect logs,
in the order a log flows through them (reader, records, arithmetic, renderers).

- `logs`: the one reader of Inspect logs: headers, sample summaries, never images.
- `parties`: who made a run's calls (the model, each role), with the tokens each used.
- `log_header`: how a log was run (`LogInfo`: model, condition, judges, invocation).
- `records`: a log's attempts as `AttemptRecord`s, one per attempt and rubric scorer.
- `record_cache`: a local log's records kept between reports, while the log and the code
  that made them are unchanged.
- `pilot`: a pilot log's per-attempt tokens and pace, for `hss-inspect estimate`.
- `stats`: pure statistics (unbiased pass@k, Cohen's kappa, McNemar, Spearman).
- `tables`: runs (log x scorer), the Table 1 row, subdomains, item difficulty.
- `releases`: which runs measured the same thing (one release's fingerprints, one N), the
  rule every table and publisher asks; the paper's rows beside the runs of its release only.
- `carry_cost`: what carrying a log to a later release will send and cost, from the log.
- `sweep`: the effort and frame-budget sweeps (App. G, H).
- `agreement`: judges on the same answers (Sec. 3.4, App. I).
- `compare`: two runs paired on their shared tasks.
- `failures`: the failure causes of first attempts, and agentic against single-call.
- `human`: a human study's figures: confidence, per annotator, seconds (Sec. 3.1).
- `bill`: what each run cost, in dollars, from its parties' tokens and the prices.
- `paper`: the paper's published Table 1 rows.
- `numbers`: how the reports print numbers (percent, signed, n/r, dollars).
- `render`: the leaderboard page as Markdown, CSV, JSON and self-contained HTML.
- `bill_render`: what each run cost as Markdown, HTML and CSV.
- `analysis_render`: the sweep, agreement and comparison tables as Markdown.
- `failure_render`: the failure tables as Markdown.
- `plots`: the report's figures as PNG and SVG.
- `register`: the Inspect Evals register's Evaluation Report section.
- `register_entry`: the register's entry for HSS (`register/hss/eval.yaml`) with its
  evaluation report.
- `hub_results`: each model's results in the Hugging Face hub's eval-results format.
- `task_view`: what a task page shows, from the samples of the tasks shown alone: every
  run's attempts with answers, verdicts and justifications, causes, errors.
- `served_media`: the media each attempt was served, rebuilt as files beside the pages.
- `examples`: the failure examples chosen by rule (App. E): per subdomain, the task the
  most runs failed for the same cause.
- `page_render`: the task pages and the example figures as self-contained HTML.
- `pages`: the task pages and failure examples of one set of runs, written beside
  `report.html` with their media.
"""
