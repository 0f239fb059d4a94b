"""The paper's tables, sweeps, judge agreement, paired comparisons, failure causes, plots
and what each run cost, from Inspect logs.

The modules, in the order a log flows through them (reader -> records -> arithmetic ->
renderers):
- `logs`: the one reader of Inspect logs: headers and sample summaries, never images.
- `parties`: who made a run's calls (the model, each role), with the tokens each used.
- `log_header`: how a log was run (`LogInfo`: model, condition, judges, invocation).
- `records`: a log's attempts as `AttemptRecord`s, one per attempt and rubric scorer.
- `pilot`: a pilot log's per-attempt tokens and pace, for `hss-inspect estimate`.
- `stats`: pure statistics (unbiased pass@k, Cohen's kappa, McNemar, Spearman).
- `tables`: runs (log x scorer), the Table 1 row, subdomains, item difficulty.
- `sweep`, `agreement`, `compare`: the paper's ablations and paired tests, pure.
- `failures`: the failure causes of first attempts, and agentic against single-call.
- `bill`: what each run cost, in dollars, from its parties' tokens and the prices.
- `paper`: the paper's Table 1 rows and Table 5 registry (task_configs/paper_models.yaml).
- `numbers`: how the reports print numbers (percent, signed, n/r, dollars).
- `render`: the leaderboard page as Markdown, CSV, JSON and self-contained HTML.
- `bill_render`: what each run cost as a Markdown section, an HTML section and CSV.
- `analysis_render`: the sweep, agreement and comparison tables as Markdown.
- `failure_render`: the failure tables as Markdown.
- `plots`: the report's figures as PNG and SVG.
- `register`: the Inspect Evals register's Evaluation Report section from the logs.
The commands that run them are `hss_inspect.commands.report` and `.estimate`.
"""
