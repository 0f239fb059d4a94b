"""The paper's tables, sweeps, judge agreement, paired comparisons and plots from Inspect logs.

Layers, for reuse by other analyses:
- `records`: the only reader of Inspect logs; turns them into `AttemptRecord`s (one per
  attempt and rubric scorer) and `LogInfo` headers.
- `stats`: pure statistics (unbiased pass@k, Cohen's kappa, McNemar, Spearman).
- `tables`: runs (log x scorer), the Table 1 row, subdomains, item difficulty.
- `sweep`, `agreement`, `compare`: the paper's ablations and paired tests, pure.
- `paper`: the paper's Table 1 rows and Table 5 registry (task_configs/paper_models.yaml).
- `render`, `plots`: Markdown/CSV/JSON/HTML and PNG/SVG at the edge.
- `register`: the Inspect Evals register's Evaluation Report section from the logs.
- `parsers`, `command`: the `hss-inspect report | agreement | compare` commands.
"""
