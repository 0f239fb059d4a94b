"""The `inspect` command with the OpenAI SDK's own default endpoint moved to a local stand-in.

Inspect sends OpenAI's explicit cache marks (GPT-5.6 and later) only when no base URL is
configured, the direct api.openai.com; a stand-in named by OPENAI_BASE_URL would never see
them. Run as `python -m tests.support.direct_openai <inspect arguments>` with
HSS_TEST_OPENAI_ENDPOINT set to the stand-in's URL: the SDK's clients then default to it,
while Inspect and the package see an unconfigured, direct OpenAI model.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from typing import Any


def default_endpoint(url: str) -> None:
    import openai

    original = openai.AsyncOpenAI.__init__

    def init(self: Any, *args: Any, base_url: Any = None, **kwargs: Any) -> None:
        original(self, *args, base_url=base_url or url, **kwargs)

    openai.AsyncOpenAI.__init__ = init  # type: ignore[method-assign]


def main() -> None:
    default_endpoint(os.environ.pop("HSS_TEST_OPENAI_ENDPOINT"))
    (inspect,) = entry_points(group="console_scripts", name="inspect")
    sys.argv[0] = "inspect"
    sys.exit(inspect.load()())


if __name__ == "__main__":
    main()
