"""`hss/scripted`: a local model provider for trying HSS with no network and no keys.

As the model under evaluation it always gives the same answer (`FIXED_ANSWER`, or
`-M answer="..."`). Bound to the `perturber` role of the judge audit it rewrites the
reference by simple rules (`scripted_variant`). Bound to the `grader` role it
recognises the HSS judge request (its system message is the judge prompt of
`scorers/judge.yaml`) and replies with a well-formed verdict for exactly the criterion
ids the request expects, by one rule:

    every criterion is met when the candidate answer contains the reference answer
    (ignoring case and runs of whitespace), and unmet otherwise.

So the scripted candidate fails every task and the oracle condition (which submits the
reference answers) passes every task: a run checks the plumbing, not a model. Every
output carries a usage, counted in words rather than tokens.
"""

from __future__ import annotations

import json
import re
from functools import cache
from string import Template
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from hss_inspect.audit.perturber import perturber_prompts
from hss_inspect.core.errors import SetupError
from hss_inspect.core.names import aside
from hss_inspect.grading.judge import judge_prompts
from hss_inspect.providers.model_names import LOCAL_MODEL as MODEL
from hss_inspect.providers.model_names import LOCAL_PROVIDER as PROVIDER
from hss_inspect.providers.model_names import local_model_text

# The provider's one argument (`-M answer=...`)
ANSWER_ARG = "answer"
FIXED_ANSWER = (
    "This is the fixed answer of the scripted demo model hss/scripted. It does not look "
    "at the question or the media."
)
_DEFAULT_CONFIG = GenerateConfig()
# The answer's marker lines: held to one line so that an answer of several lines is read
# whole (a lazy match would stop the answer at its first line break).
_ONE_LINE_FIELDS = frozenset({"answer_open", "answer_close"})
_CRITERION_IDS = re.compile(r"\[id: ([^\]]+)\]")
_PUNCTUATION = re.compile(r"[^\w\s]")


@modelapi(name=PROVIDER)
class ScriptedModel(ModelAPI):
    """A fixed answer as the candidate; a rule-based verdict as the HSS judge."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = _DEFAULT_CONFIG,
        answer: str = FIXED_ANSWER,
        **model_args: Any,
    ) -> None:
        # SetupError: Inspect prints it as its message alone, where a ValueError raised
        # while the models are made ends the run with a traceback of some 200 lines.
        if model_name != MODEL:
            raise SetupError(local_model_text(model_name, "--model, --model-role"))
        unknown = next(iter(model_args), None)
        if unknown is not None:
            raise SetupError(
                f"-M {unknown} is not an argument of {PROVIDER}/{MODEL}"
                f"{aside(unknown, [ANSWER_ARG], '-M {}')}: it takes one, -M {ANSWER_ARG}=TEXT "
                "(the answer it gives as the model under evaluation)"
            )
        super().__init__(model_name, base_url, api_key, [], config)
        self.answer = str(answer)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        request = first_request(input, judge_prompts().system)
        perturbation = first_request(input, perturber_prompts().system)
        if request is not None:
            reply = scripted_verdict(request)
        elif perturbation is not None:
            reply = scripted_variant(perturbation)
        else:
            reply = self.answer
        output = ModelOutput.from_content(model=f"{PROVIDER}/{MODEL}", content=reply)
        output.usage = word_usage(input, reply)
        return output


def first_request(messages: list[ChatMessage], system_text: str) -> str | None:
    """The first user message of a conversation opened by `system_text` (the judge's or the
    perturber's system message), else None."""
    system = next((m for m in messages if isinstance(m, ChatMessageSystem)), None)
    if system is None or system.text.strip() != system_text:
        return None
    first_user = next((m for m in messages if isinstance(m, ChatMessageUser)), None)
    return None if first_user is None else first_user.text


def scripted_verdict(request: str) -> str:
    """The judge reply for one rendered HSS judge request, by the module's rule."""
    fields = read_judge_request(request)
    expected = json.loads(f"[{fields['expected_ids']}]")
    met = _normalised(fields["reference"]) in _normalised(fields["answer"])
    why = (
        "The answer contains the reference answer."
        if met
        else "The answer does not contain the reference answer."
    )
    verdicts = [{"id": str(i), "met": met, "justification": why} for i in expected]
    comment = f"Scripted verdict (hss/scripted): every criterion {'met' if met else 'unmet'}."
    return json.dumps({"criteria": verdicts, "overall_comment": comment})


def scripted_variant(request: str) -> str:
    """The judge audit's perturber, by rule (so an audit runs offline; see the README):
    extra_detail appends a sentence; paraphrase keeps the words and drops the punctuation;
    partial keeps the first half of the words (target: the last criterion); contradiction
    prefixes "It is not true that" (target: the first criterion)."""
    match = _request_pattern(perturber_prompts().user.template).fullmatch(request)
    if match is None:
        raise ValueError("hss/scripted: the perturber request does not follow scorers/audit.yaml")
    fields = match.groupdict()
    reference, ids = fields["reference"], _CRITERION_IDS.findall(fields["criteria"])
    words = reference.split()
    variants: dict[str, tuple[str, str | None]] = {
        "extra_detail": (f"{reference} This is said of the {fields['media_type']}.", None),
        "paraphrase": (
            "Put another way: " + " ".join(_PUNCTUATION.sub("", reference).split()),
            None,
        ),
        "partial": (" ".join(words[: max(1, len(words) // 2)]) + " ...", ids[-1]),
        "contradiction": (f"It is not true that {reference}", ids[0]),
    }
    variant, target = variants[fields["kind"]]
    return json.dumps({"variant": variant, "target": target})


def read_judge_request(request: str) -> dict[str, str]:
    """The filled-in placeholders of a judge request, read back through its own template."""
    match = _request_pattern(judge_prompts().user.template).fullmatch(request)
    if match is None:
        raise ValueError(
            "hss/scripted: the grading request does not follow scorers/judge.yaml's user "
            "template; the scripted judge only reads requests rendered from it"
        )
    return match.groupdict()


@cache
def _request_pattern(template: str) -> re.Pattern[str]:
    """A regular expression with one group per placeholder of a `string.Template` text."""
    parts: list[str] = []
    seen: set[str] = set()
    last = 0
    for found in Template.pattern.finditer(template):
        parts.append(re.escape(template[last : found.start()]))
        name = found.group("named") or found.group("braced")
        if name is None:
            parts.append(re.escape("$"))
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            text = r"[^\n]*?" if name in _ONE_LINE_FIELDS else ".*?"
            parts.append(f"(?P<{name}>{text})")
        last = found.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.DOTALL)


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


def word_usage(messages: list[ChatMessage], reply: str) -> ModelUsage:
    """Usage in words: enough for Inspect's accounting, and no tokenizer to download."""
    words_in = sum(len(m.text.split()) for m in messages)
    words_out = len(reply.split())
    return ModelUsage(
        input_tokens=words_in, output_tokens=words_out, total_tokens=words_in + words_out
    )
