"""What each provider accepts in one request: payload and image rules (model_limits.yaml)."""
