"""A stand-in for vLLM's OpenAI-compatible server, for Inspect's real `vllm/` and
`openai-api/` providers.

Run as `python -m tests.support.vllm_server CONFIG_JSON PORT_FILE LOG_FILE`. CONFIG_JSON:
  model            the served model's id (and `root`)
  max_model_len    its window, listed in GET /v1/models (null: the card has no such field,
                   as a LoRA card or a hosted service's list)
  true_window      the window enforced when max_model_len is not listed (default: none)
  image_limit      images per prompt (vLLM's --limit-mm-per-prompt; default 999)
  qwen             {factor, min_pixels, max_pixels}: the served model's image processor

POST /v1/chat/completions counts the prompt as vLLM's engine sees it once images are
expanded: each data-URI image decoded for its size and resized by the Qwen-VL rule
(written here on its own, from the transformers image processor), plus its 2 vision
tokens; text as one token per UTF-8 byte (the bound the package's fit assumes: no real
tokenizer makes more); and TEMPLATE_TOKENS per message for the chat template. Over the
window it refuses with vLLM's own texts and status; over the image limit likewise.
Every chat request is logged to LOG_FILE (JSON lines): body bytes, each image's size and
tokens, the text parts, the prompt count, max_tokens and the status sent.
"""

from __future__ import annotations

import base64
import io
import json
import math
import sys
import threading
from typing import Any, ClassVar

from PIL import Image

from tests.support.provider_server import _completion
from tests.support.stand_in import JsonHandler, serve_configured

TEMPLATE_TOKENS = 5  # <|im_start|>user\n ... <|im_end|>\n around a message
_lock = threading.Lock()


def qwen_image_tokens(width: int, height: int, factor: int, low: int, high: int) -> int:
    """Tokens vLLM expands one image into for Qwen2-VL/2.5-VL/3-VL: the processor's resize
    (sides to multiples of `factor`, area into [low, high]), one token per factor^2 block,
    and the vision start/end tokens."""
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > high:
        scale = math.sqrt(height * width / high)
        h = math.floor(height / scale / factor) * factor
        w = math.floor(width / scale / factor) * factor
    elif h * w < low:
        scale = math.sqrt(low / (height * width))
        h = math.ceil(height * scale / factor) * factor
        w = math.ceil(width * scale / factor) * factor
    return (h // factor) * (w // factor) + 2


def image_size(uri: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as image:
        return image.size


def decoder_prompt_too_long(length: int, window: int) -> str:
    return (
        f"The decoder prompt (length {length}) is longer than the maximum model length of "
        f"{window}. Make sure that `max_model_len` is no smaller than the number of text "
        "tokens plus multimodal tokens. For image inputs, the number of image tokens depends "
        "on the number of images, and possibly their aspect ratios as well."
    )


class Handler(JsonHandler):
    config: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/v1/models":
            self.send_json({"error": {"message": "Not Found", "code": 404}}, 404)
            return
        card: dict[str, Any] = {
            "id": self.config["model"],
            "object": "model",
            "created": 1767225600,
            "owned_by": "vllm",
            "root": self.config["model"],
            "parent": None,
            "permission": [],
        }
        if self.config.get("max_model_len") is not None:
            card["max_model_len"] = self.config["max_model_len"]
        self.send_json({"object": "list", "data": [card]})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        images: list[dict[str, int]] = []
        texts: list[str] = []
        qwen = self.config["qwen"]
        for message in body["messages"]:
            content = message["content"]
            for part in (
                [{"type": "text", "text": content}] if isinstance(content, str) else content
            ):
                if part["type"] == "text":
                    texts.append(part["text"])
                elif part["type"] == "image_url":
                    w, h = image_size(part["image_url"]["url"])
                    tokens = qwen_image_tokens(
                        w, h, qwen["factor"], qwen["min_pixels"], qwen["max_pixels"]
                    )
                    images.append({"width": w, "height": h, "tokens": tokens})
        text_tokens = sum(len(t.encode()) for t in texts)
        prompt = (
            text_tokens + sum(i["tokens"] for i in images) + TEMPLATE_TOKENS * len(body["messages"])
        )
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        status, reply = self._verdict(prompt, len(images), max_tokens)
        entry = {
            "body_bytes": length,
            "model": body.get("model"),
            "images": images,
            "texts": texts,
            "text_tokens": text_tokens,
            "prompt_tokens": prompt,
            "max_tokens": max_tokens,
            "status": status,
        }
        with _lock, open(self.log_file, "a") as handle:
            handle.write(json.dumps(entry) + "\n")
        self.send_json(reply, status)

    def _verdict(
        self, prompt: int, image_count: int, max_tokens: int | None
    ) -> tuple[int, dict[str, Any]]:
        limit = int(self.config.get("image_limit", 999))
        window = self.config.get("max_model_len") or self.config.get("true_window")
        if image_count > limit:
            return _error(
                f"At most {limit} image(s) may be provided in one prompt. Set "
                "`--limit-mm-per-prompt` to increase this limit. (parameter=image)"
            )
        if window is not None and prompt > window:
            return _error(decoder_prompt_too_long(prompt, window))
        if window is not None and max_tokens and prompt + max_tokens > window:
            return _error(
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This "
                f"model's maximum context length is {window} tokens and your request has "
                f"{prompt} input tokens ({max_tokens} > {window} - {prompt})."
            )
        return 200, _completion("chat", self.config["model"], "My answer is PASS.", False)


def _error(message: str) -> tuple[int, dict[str, Any]]:
    return 400, {
        "error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    }


def main() -> None:
    serve_configured(Handler, sys.argv[1:4])


if __name__ == "__main__":
    main()
