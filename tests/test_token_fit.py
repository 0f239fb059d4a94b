"""The pieces of fitting frames to a context window, each against numbers worked out by
hand from the model cards, processors and servers' documentation: the image-token rules,
the fitting arithmetic, what vLLM/SGLang/Ollama report, and the servers' refusals."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, get_model

from hss_inspect.conditions.answer import (
    looks_like_size_refusal,
    server_limit_in,
    token_budget_note,
)
from hss_inspect.core.settings import MediaSettings
from hss_inspect.providers.context import (
    budget_for,
    window_in_models_list,
    window_in_ollama_ps,
    window_in_ollama_show,
)
from hss_inspect.providers.fit import TokenBudget, available_tokens, fit_frames
from hss_inspect.providers.limits import (
    FitConstants,
    TokenRule,
    applied_limits,
    rules_file,
    token_rule_for,
)
from hss_inspect.providers.tokens import check_rule, image_tokens

pytestmark = pytest.mark.inspect_api


def rule(model: str) -> TokenRule:
    found = token_rule_for(model)
    assert found is not None, model
    return found


# ---- image-token rules ----------------------------------------------------------------

# Qwen2.5-VL at the model repos' bounds (3136..12845056 px), factor 28, +2 vision tokens:
#  768x432: sides 27.4 -> 27 and 15.4 -> 15 blocks: 756x420, 405 tokens
#  1280x720: 45.7 -> 46, 25.7 -> 26: 1288x728, 1196
#  4096x3072: 146.3 -> 146, 109.7 -> 110: 4088x3080 = 12,591,040 px (within), 16,060
#  128x72: 4.57 -> 5, 2.57 -> 3: 140x84 = 11,760 px (above 3136), 15
#  8000x6000: 286 x 214 blocks is over 12,845,056 px: beta = sqrt(48e6 / 12845056) = 1.9331,
#    floor(8000 / 1.9331 / 28) = 147, floor(6000 / 1.9331 / 28) = 110: 16,170 (under the
#    model card's 16,384 per image)
QWEN25 = [
    ((768, 432), 405),
    ((1280, 720), 1196),
    ((4096, 3072), 16060),
    ((128, 72), 15),
    ((8000, 6000), 16170),
]
# Qwen3-VL (factor 32, 65,536..16,777,216 px): 768x432 -> 24 x 14 (13.5 rounds to even 14);
# 1280x720 -> 40 x 22 (22.5 -> 22); 4096x3072 -> 128 x 96 = 12,288; 128x72 is 4 x 2 blocks,
# 8,192 px under 65,536: scaled by sqrt(65536 / 9216) = 2.667 to 341 x 192, ceiled to
# 352 x 192: 11 x 6 = 66.
QWEN3 = [((768, 432), 336), ((1280, 720), 880), ((4096, 3072), 12288), ((128, 72), 66)]
# InternVL (448 px tiles, 1-12 of them, a thumbnail when more than one, 256 tokens each):
#  768x432 (1.78): closest grid 2x1 (4x2 ties at 2.0 but the image covers < half of it):
#    2 + 1 = 3 tiles, 768 tokens; 1280x720: 4x2 wins the tie (921,600 px > 802,816): 9, 2304;
#  4096x3072 (1.33): 4x3 exactly: 13, 3328.
INTERNVL = [((768, 432), 768), ((1280, 720), 2304), ((4096, 3072), 3328)]
# Pixtral (1024 px longest edge, 16 px patches, one break token per row): 768x432 is
# 48 x 27 patches: 27 x 49 = 1323; 1280x720 -> 1024x576, 64 x 36: 36 x 65 = 2340;
# 128x72 -> 8 x 5: 5 x 9 = 45.
PIXTRAL = [((768, 432), 1323), ((1280, 720), 2340), ((128, 72), 45)]


@pytest.mark.parametrize(("size", "tokens"), QWEN25)
def test_qwen25_vl_tokens(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(rule("vllm/Qwen/Qwen2.5-VL-7B-Instruct"), *size) == tokens + 2


@pytest.mark.parametrize(("size", "tokens"), QWEN3)
def test_qwen3_vl_tokens(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(rule("sglang/Qwen/Qwen3-VL-8B-Instruct"), *size) == tokens + 2


@pytest.mark.parametrize(("size", "tokens"), INTERNVL)
def test_internvl_tokens(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(rule("vllm/OpenGVLab/InternVL3-8B"), *size) == tokens + 2


@pytest.mark.parametrize(("size", "tokens"), PIXTRAL)
def test_pixtral_tokens(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(rule("vllm/mistralai/Pixtral-12B-2409"), *size) == tokens


def test_gemma3_costs_the_same_whatever_the_size() -> None:
    # 256 soft tokens + <start_of_image> + <end_of_image> + the blank lines around them
    for model in ("vllm/google/gemma-3-27b-it", "ollama/gemma3:27b"):
        gemma = rule(model)
        assert {image_tokens(gemma, w, h) for w, h in [(768, 432), (128, 72), (4096, 3072)]} == {
            260
        }
    assert token_rule_for("ollama/gemma3n:e4b") is None  # a different vision encoder


def test_model_families_come_before_the_provider_and_the_served_checkpoint_is_a_fallback() -> None:
    # Qwen served through an OpenAI-compatible service, named by Inspect or by the server
    assert rule("openai-api/together/Qwen/Qwen2.5-VL-72B-Instruct").name.startswith("Qwen2")
    assert token_rule_for("openai-api/vllm/my-vlm") is None
    by_root = token_rule_for("openai-api/vllm/my-vlm", "Qwen/Qwen3-VL-8B-Instruct")
    assert by_root is not None and by_root.name == "Qwen3-VL"
    assert rule("anthropic/claude-opus-5").formula["formula"] == "anthropic"


def test_a_users_rules_file_comes_first(tmp_path: Path) -> None:
    # vLLM started with --mm-processor-kwargs '{"max_pixels": 1003520}' (the transformers
    # default): a 4096x3072 image is brought under 1,003,520 px: beta = sqrt(12582912 /
    # 1003520) = 3.541, floor(4096 / 3.541 / 28) = 41, floor(3072 / 3.541 / 28) = 30:
    # 41 x 30 = 1230 tokens, + 2
    path = tmp_path / "rules.yaml"
    path.write_text(
        "image_tokens:\n"
        "  - match: ['*qwen2.5-vl*']\n"
        "    name: Qwen2.5-VL at max_pixels 1003520\n"
        "    formula: qwen_smart_resize\n"
        "    factor: 28\n    min_pixels: 3136\n    max_pixels: 1003520\n    wrapper_tokens: 2\n"
    )
    media = MediaSettings(token_rules=str(path))
    limits = applied_limits(media, "vllm/Qwen/Qwen2.5-VL-7B-Instruct")
    assert limits.token_rule is not None and limits.token_rule.source == str(path)
    assert image_tokens(limits.token_rule, 4096, 3072) == 1232


def test_a_bad_rule_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("image_tokens:\n  - match: '*x*'\n    formula: qwen_smart_resize\n")
    bad = token_rule_for("vllm/x", None, str(path))
    assert bad is not None
    with pytest.raises(ValueError, match=r"constant 'factor' missing"):
        check_rule(bad)
    with pytest.raises(ValueError, match="cannot read it"):
        token_rule_for("vllm/x", None, str(tmp_path / "missing.yaml"))
    for packaged in rules_file().token_rules:
        check_rule(packaged)


# ---- fitting arithmetic -----------------------------------------------------------------

CONSTANTS = FitConstants(
    margin=0.02, template_tokens=256, label_extra_tokens=2, floor_frames=8, floor_side=128
)


def area_cost(width: int, height: int) -> int:
    """One token per 32x32 px, for the tests."""
    return max(1, width * height // 1024)


def size_16_9(side: int) -> tuple[int, int]:
    return side, round(side * 9 / 16)


def test_available_tokens_take_off_the_margin_template_and_text() -> None:
    # 31,768 input tokens: 2% is 635.36, rounded up to 636; 256 template; 1,000 text
    assert available_tokens(31_768, 1_000, CONSTANTS) == 31_768 - 636 - 256 - 1_000


def test_frames_are_thinned_at_the_usual_side_to_the_most_that_fit() -> None:
    # 768x432: 324 tokens + 20 a label = 344 a frame; 30,000 // 344 = 87
    fit = fit_frames(500, 768, size_16_9, area_cost, 20, 30_000, CONSTANTS)
    assert fit is not None
    assert (fit.frames, fit.side, fit.thinned, fit.shrunk) == (87, 768, True, False)
    assert fit.image_tokens == 87 * 324


def test_a_clip_that_fits_keeps_every_frame() -> None:
    fit = fit_frames(100, 768, size_16_9, area_cost, 20, 34_400, CONSTANTS)
    assert fit is not None and (fit.frames, fit.thinned) == (100, False)


def test_below_the_floor_frames_are_shrunk_to_the_largest_side_that_fits() -> None:
    # 8 frames in 1,000 tokens: 125 a frame, 105 for the image: side s with
    # s * round(s * 9/16) // 1024 <= 105: 436 x 245 = 106,820 / 1024 = 104.3 -> 104 fits,
    # 437 x 246 = 107,502 -> 104 fits, 438 x 246 = 107,748 -> 105 fits, 439 x 247 -> 105
    # fits, 440 x 248 = 109,120 -> 106 does not
    fit = fit_frames(500, 768, size_16_9, area_cost, 20, 1_000, CONSTANTS)
    assert fit is not None
    assert (fit.frames, fit.side, fit.size, fit.shrunk) == (8, 439, (439, 247), True)


def test_nothing_fits_below_the_floor_side() -> None:
    # 8 frames at 128 px (128 x 72 = 9 tokens + 20) need 232 tokens
    assert fit_frames(500, 768, size_16_9, area_cost, 20, 231, CONSTANTS) is None
    assert fit_frames(500, 768, size_16_9, area_cost, 20, 232, CONSTANTS) is not None


def test_a_short_clip_keeps_all_its_frames_as_its_floor() -> None:
    # 5 frames planned: the floor is 5; 5 x (324 + 20) = 1,720 at 768 px
    fit = fit_frames(5, 768, size_16_9, area_cost, 20, 1_720, CONSTANTS)
    assert fit is not None and (fit.frames, fit.side) == (5, 768)


def test_the_input_budget_is_the_window_less_the_output_under_an_input_cap() -> None:
    budget = TokenBudget(400_000, "model info", "x", 128_000, "y", input_limit=272_000)
    assert budget.input_tokens == 272_000
    assert TokenBudget(32_768, "server", "x", 1_000, "y").input_tokens == 31_768
    assert TokenBudget(None, "none", "x", 1_000, "y").input_tokens is None


# ---- what the servers report ------------------------------------------------------------


def vllm_card(model_id: str, **extra: object) -> dict[str, object]:
    """A ModelCard of vLLM's GET /v1/models (entrypoints/openai protocol)."""
    return {
        "id": model_id,
        "object": "model",
        "created": 1767225600,
        "owned_by": "vllm",
        "root": model_id,
        "parent": None,
        "permission": [{"id": "modelperm-1", "object": "model_permission"}],
        **extra,
    }


def test_vllm_and_sglang_list_the_window_per_model() -> None:
    body = {
        "object": "list",
        "data": [vllm_card("Qwen/Qwen2.5-VL-7B-Instruct", max_model_len=32768)],
    }
    found = window_in_models_list(body, "Qwen/Qwen2.5-VL-7B-Instruct")
    assert found is not None and found.window == 32768 and "(vllm)" in found.detail
    assert found.root == "Qwen/Qwen2.5-VL-7B-Instruct"
    # --served-model-name: the only card is the model, whatever it is called
    assert window_in_models_list(body, "qwen")
    sglang = {
        "object": "list",
        "data": [{**vllm_card("m", max_model_len=65536), "owned_by": "sglang"}],
    }
    found = window_in_models_list(sglang, "m")
    assert found is not None and found.window == 65536 and "(sglang)" in found.detail


def test_a_lora_card_takes_its_base_models_window() -> None:
    body = {
        "data": [
            vllm_card("base", max_model_len=8192),
            vllm_card("my-lora", root="/adapters/my-lora", parent="base"),
        ]
    }
    found = window_in_models_list(body, "my-lora")
    assert found is not None and found.window == 8192


def test_no_window_when_the_list_does_not_say() -> None:
    assert window_in_models_list({"data": [vllm_card("a"), vllm_card("b")]}, "c") is None
    assert window_in_models_list({"data": [{"id": "gpt", "object": "model"}]}, "gpt") is None
    assert window_in_models_list("<html>", "m") is None


def test_ollama_reports_the_loaded_window_then_the_modelfile_then_its_default() -> None:
    # api/types.go ProcessModelResponse and ShowResponse; docs/api.md examples
    ps = {"models": [{"name": "qwen2.5vl:7b", "model": "qwen2.5vl:7b", "context_length": 8192}]}
    found = window_in_ollama_ps(ps, "qwen2.5vl:7b")
    assert found is not None and found.window == 8192
    assert window_in_ollama_ps({"models": [{**ps["models"][0], "name": "gemma3:latest"}]}, "gemma3")
    show = {"parameters": 'num_ctx                        16384\nstop "<end_of_turn>"'}
    found = window_in_ollama_show(show, "gemma3:27b")
    assert found is not None and found.window == 16384
    trained = {"model_info": {"general.architecture": "gemma3", "gemma3.context_length": 131072}}
    found = window_in_ollama_show({"parameters": "", **trained}, "gemma3:27b")
    assert found is not None and found.window == 4096 and "OLLAMA_CONTEXT_LENGTH" in found.detail


# ---- the servers' refusals --------------------------------------------------------------

REFUSALS = [
    # vLLM engine, after images are expanded (v1 input_processor)
    (
        "The decoder prompt (length 40211) is longer than the maximum model length of 32768. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens plus "
        "multimodal tokens.",
        "a context window of 32,768 tokens (vLLM)",
    ),
    # vLLM renderer
    (
        "You passed 40000 input tokens and requested 1000 output tokens. However, the model's "
        "context length is only 32768 tokens, resulting in a maximum input length of 31768 "
        "tokens. Please reduce the length of the input prompt. "
        "(parameter=input_tokens, value=40000)",
        "a context window of 32,768 tokens (vLLM)",
    ),
    # SGLang tokenizer manager and scheduler
    (
        "The input (40000 tokens) is longer than the model's context length (32768 tokens).",
        "a context window of 32,768 tokens (SGLang)",
    ),
    (
        "Input length (40000 tokens) exceeds the maximum allowed length (32767 tokens). Use a "
        "shorter input or enable --allow-auto-truncate.",
        "a context window of 32,767 tokens (SGLang)",
    ),
    # llama.cpp through Ollama
    (
        '{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context '
        'size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}',
        "a context window of 8,192 tokens (llama.cpp)",
    ),
    (
        "the prompt is longer than the context length currently available to the model; shorten "
        "the prompt, adjust the context length in settings, or use a model with a longer "
        "context length",
        "a context length limit",
    ),
    # vLLM --limit-mm-per-prompt
    (
        "At most 16 image(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to "
        "increase this limit. (parameter=image)",
        "at most 16 image(s) per prompt",
    ),
]


@pytest.mark.parametrize(("text", "limit"), REFUSALS)
def test_server_refusals_are_size_refusals_naming_the_limit(text: str, limit: str) -> None:
    assert looks_like_size_refusal(text)
    assert server_limit_in(text) == limit


def test_the_refusal_says_which_budget_was_used_and_how_to_set_it() -> None:
    sent = {
        "token_fit": {
            "window": 65536,
            "window_source": "option",
            "window_detail": "-T context_window=65536",
            "output_reserve": 1000,
            "output_reserve_source": "--max-tokens",
            "estimated_tokens": 60000,
        }
    }
    note = token_budget_note(REFUSALS[0][0], sent)
    assert "a context window of 65,536 tokens (option: -T context_window=65536)" in note
    assert "1,000 for the output (--max-tokens)" in note and "estimated 60,000" in note
    assert "--max-model-len" in note
    assert "--limit-mm-per-prompt" in token_budget_note(REFUSALS[-1][0], sent)
    assert token_budget_note("Request exceeds the maximum size", sent) == ""
    assert not looks_like_size_refusal("temperature: unsupported value for this model")


# ---- asking a running server, through the Model Inspect builds --------------------------


class _Server(BaseHTTPRequestHandler):
    """Ollama's /api/ps and /api/show and vLLM's /v1/models, with the shapes of their docs."""

    def _send(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/api/ps":
            self._send({"models": []})  # nothing loaded yet
        elif self.path == "/v1/models":
            self._send({"object": "list", "data": [vllm_card("m", max_model_len=12_288)]})
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self._send({"parameters": "num_ctx 24576", "capabilities": ["completion", "vision"]})

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_the_window_is_asked_of_the_server_the_model_talks_to(local_server: str) -> None:
    ollama = get_model("ollama/qwen2.5vl:7b", base_url=f"{local_server}/v1", memoize=False)
    budget = asyncio.run(budget_for(ollama, None, 4096))
    assert (budget.window, budget.source) == (24_576, "server")
    assert "num_ctx" in budget.detail and budget.output_reserve == 4096
    vllm = get_model(
        "vllm/m",
        base_url=f"{local_server}/v1",
        config=GenerateConfig(max_tokens=500),
        memoize=False,
    )
    budget = asyncio.run(budget_for(vllm, None, 4096))
    assert (budget.window, budget.source, budget.output_reserve) == (12_288, "server", 500)
    assert budget.input_tokens == 12_288 - 500
    # an option wins, and nothing is asked
    assert asyncio.run(budget_for(vllm, 8_000, 4096)).source == "option"


def test_the_output_kept_free_follows_the_tasks_generate_config(tmp_path: Path) -> None:
    """A recipe or a Flow spec puts max_tokens on the task: the fit keeps that much free."""
    from inspect_ai import eval as inspect_eval

    from hss_inspect.task import hss_demo

    task = hss_demo(context_window=100_000)
    task.config = GenerateConfig(max_tokens=777)
    (log,) = inspect_eval(
        task,
        model="hss/scripted",
        model_roles={"grader": "hss/scripted"},
        epochs=1,
        sample_id="demo-rolling-ball",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success" and log.samples
    fit = log.samples[0].metadata["sent_media"]["token_fit"]
    assert (fit["output_reserve"], fit["output_reserve_source"]) == (
        777,
        "the task's generate config",
    )
    assert fit["window"] - fit["input_tokens"] == 777  # the window less the output kept free


def test_a_rules_file_is_checked_whole_when_the_task_starts(tmp_path: Path) -> None:
    from hss_inspect.core.errors import SetupError
    from hss_inspect.task import hss_demo

    broken = tmp_path / "broken.yaml"  # a rule for a model this run does not use
    broken.write_text("image_tokens:\n  - match: '*other*'\n    formula: qwen_smart_resize\n")
    with pytest.raises(SetupError, match=r"broken.yaml.*constant 'factor' missing"):
        hss_demo(token_rules=str(broken))
    listed = tmp_path / "listed.yaml"
    listed.write_text("image_tokens:\n  - just a string\n")
    with pytest.raises(SetupError, match=r"listed.yaml: each image_tokens entry is a mapping"):
        hss_demo(token_rules=str(listed))
