"""What each provider and model accepts, and what it costs.

- `context`: the model's token budget: its window and where it came from.
- `limits`: what one request may carry (task_configs/model_limits.yaml).
- `fit`: fitting a clip's frames to a token budget, pure.
- `tokens`: image tokens by each provider's and model family's formula.
- `caching`: the prompt-cache rules and the decision for one request, pure.
- `batching`: each provider's batch API as data.
- `paper_models`: the paper's model registry (Table 5) and request settings.
- `model_names`: a model name checked against Inspect's database and Table 5.
- `price_lookup`: a model's price as Inspect would find it.
- `prices`: prices and what tokens cost at them, pure.
"""
