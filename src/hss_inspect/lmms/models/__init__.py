"""No models: lmms-eval's plugin loader imports `<plugin>.models` and reads its
AVAILABLE_MODELS (a name -> class mapping) before it looks for `<plugin>.tasks`; HSS adds
tasks only, and runs with lmms-eval's own models."""

AVAILABLE_MODELS: dict[str, str] = {}
