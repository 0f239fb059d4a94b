"""The `inspect` command with a bug injected, for tests that a bug is never a provider error.

Run as `python -m tests.support.faulty_inspect <inspect arguments>` with HSS_FAULT set:

  generate:WORD   a KeyError inside `Model.generate` of the model under evaluation (not a
                  role model) when the text of its request holds WORD
  crop:X0,Y0,X1,Y1  a KeyError inside the crop tool's work for a crop of exactly that box
  crop-io:X0,Y0,X1,Y1  a FileNotFoundError there instead (Inspect would hand it to the model
                       as a tool result)

Then it runs Inspect's own command line (the `inspect` console script's entry point).
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from typing import Any

INJECTED = "injected bug"


def break_generate(word: str) -> None:
    from inspect_ai.model import Model

    original = Model.generate

    async def generate(self: Model, input: Any, *args: Any, **kwargs: Any) -> Any:
        text = input if isinstance(input, str) else " ".join(m.text for m in input)
        if self.role is None and word in text:
            raise KeyError(INJECTED)
        return await original(self, input, *args, **kwargs)

    Model.generate = generate  # type: ignore[method-assign]


def break_crop(box: str, error: type[Exception] = KeyError) -> None:
    from hss_inspect.conditions.agentic import tools
    from hss_inspect.conditions.agentic.views import Box

    wanted = Box(*(int(v) for v in box.split(",")))
    original = tools.checked_box

    def checked_box(box: Box, *args: Any, **kwargs: Any) -> Box:
        if box == wanted:
            raise error(INJECTED)
        return original(box, *args, **kwargs)

    tools.checked_box = checked_box


def break_crop_io(box: str) -> None:
    break_crop(box, FileNotFoundError)


def main() -> None:
    kind, _, argument = os.environ["HSS_FAULT"].partition(":")
    {"generate": break_generate, "crop": break_crop, "crop-io": break_crop_io}[kind](argument)
    (inspect,) = entry_points(group="console_scripts", name="inspect")
    sys.argv[0] = "inspect"
    sys.exit(inspect.load()())


if __name__ == "__main__":
    main()
