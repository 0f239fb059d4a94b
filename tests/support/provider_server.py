"""Local stand-ins for the providers' own HTTP APIs, for Inspect's real providers and SDKs.

Run as `python provider_server.py CONFIG_JSON PORT_FILE LOG_FILE`. One server speaks:
  Anthropic Messages      POST /v1/messages
  OpenAI Chat Completions POST /v1/chat/completions
  OpenAI Responses        POST /v1/responses
  Gemini API              POST /v1beta/models/{model}:generateContent, and the Files API
                          (resumable upload at /upload/v1beta/files, GET /v1beta/files/{id});
                          an uploaded image referenced by a request is logged as an image
  and each API's batch endpoints (tests/support/batch_endpoints.py), whose requests are
  answered by the same rules

It enforces the request rules in CONFIG_JSON (request_max_bytes on the body as sent,
images_per_request, image_max_encoded on each image's base64 text, image_max_side), and
refuses a request over them the way the real API does (Anthropic: HTTP 413
`request_too_large`). Every request is logged to LOG_FILE (JSON lines) with what was on
the wire: body bytes, and each image's encoded bytes, raw bytes and dimensions.

The candidate answers by the behaviour word in the question ("[PASS]" -> "My answer is
PASS."); [EMPTY] gives no text with a length stop; [EMPTYONCE] does so only while
max_tokens < 1500; [BROKEN] gets a non-size HTTP 400; [TOOBIG] gets a 413 whatever its size;
[OUTAGE] gets an HTTP 500 while the file named by `outage_file` exists, else passes;
[POLICY] gets the HTTP 400 of a request the provider's safety system rejects.
With `rate_limited_requests: N` the first N requests get an HTTP 429 (rate limited).
With `usage: {API: {field: value}}` (API: anthropic, chat, responses, google) a reply
reports those usage fields in place of its fixed ones (e.g. Anthropic's
cache_creation_input_tokens), so a run's recorded usage holds every kind of token.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import os
import re
import sys
import threading
import time
import uuid
from typing import Any, ClassVar

from PIL import Image

from tests.support.batch_endpoints import BatchEndpoints
from tests.support.prompt_cache import PromptCache
from tests.support.stand_in import JsonHandler, serve_configured

_BEHAVIOUR = re.compile(
    r"\[(PASS|FAIL|ONCE|FLAKY|GARBLE|EMPTYONCE|EMPTY|BROKEN|TOOBIG|OUTAGE|POLICY|AGENT)\]"
)
_lock = threading.Lock()
_requests_seen = 0
POLICY_MESSAGE = "Your request was rejected as a result of our safety system."
_files: dict[str, dict[str, Any]] = {}
_uploads: dict[str, bytearray] = {}
_upload_mimes: dict[str, str] = {}


def image_facts(encoded: str, mime: str) -> dict[str, Any]:
    # google-genai writes bytes as URL-safe base64 without padding
    padded = encoded + "=" * (-len(encoded) % 4)
    raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    return {"encoded": len(encoded), **raw_image_facts(raw, mime)}


def raw_image_facts(raw: bytes, mime: str) -> dict[str, Any]:
    with Image.open(io.BytesIO(raw)) as image:
        width, height = image.size
    return {
        "raw": len(raw),
        "width": width,
        "height": height,
        "mime": mime,
        "sha256": hashlib.sha256(raw).hexdigest(),
    }


def walk(node: Any, found: dict[str, list[Any]]) -> None:
    """Collect images, videos and texts from any provider's request shape."""
    if isinstance(node, str):
        if node.startswith("data:image/"):
            header, data = node.split(",", 1)
            found["images"].append(image_facts(data, header[5:].split(";")[0]))
        elif node.startswith("data:video/"):
            found["videos"].append({"inline_encoded": len(node.split(",", 1)[1])})
        return
    if isinstance(node, list):
        for item in node:
            walk(item, found)
        return
    if not isinstance(node, dict):
        return
    mime = str(node.get("media_type") or node.get("mimeType") or node.get("mime_type") or "")
    if isinstance(node.get("data"), str) and mime.startswith("image/"):
        found["images"].append(image_facts(node["data"], mime))
        return
    if isinstance(node.get("data"), str) and mime.startswith("video/"):
        found["videos"].append({"inline_encoded": len(node["data"])})
        return
    uri = node.get("fileUri") or node.get("file_uri")
    if isinstance(uri, str):
        session = uri.rsplit("/", 1)[-1]
        uploaded = _files.get(session, {})
        if str(uploaded.get("file", {}).get("mimeType", "")).startswith("image/"):
            # an image by Files API reference: what the model gets is the uploaded image
            facts = raw_image_facts(bytes(_uploads[session]), uploaded["file"]["mimeType"])
            found["images"].append({"file_uri": uri, **facts})
        else:
            found["videos"].append({"file_uri": uri, **uploaded})
        return
    if isinstance(node.get("text"), str):
        found["texts"].append(node["text"])
    for key, value in node.items():
        if key != "text":
            walk(value, found)


class Handler(BatchEndpoints, JsonHandler):
    config: ClassVar[dict[str, Any]] = {}

    # --- plumbing
    def _reply(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self.send_json(body, status, headers)

    def _log(self, entry: dict[str, Any]) -> None:
        with _lock, open(self.log_file, "a") as handle:
            handle.write(json.dumps(entry) + "\n")

    def do_GET(self) -> None:
        if self.serve_batch("GET", self.path.split("?")[0]):
            return
        file_id = self.path.split("?")[0].rsplit("/", 1)[-1]
        if file_id in _files:
            self._reply(200, _files[file_id]["file"])
        else:
            self._reply(
                404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}
            )

    def do_POST(self) -> None:
        path = self.path.split("?")[0]
        if self.serve_batch("POST", path):
            return
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        if path.startswith("/upload/") or path.startswith("/upload-session/"):
            self._upload(path, raw)
            return
        status, body = self.answer(api_of(path), path, json.loads(raw), length)
        self._reply(status, body)

    def answer(
        self, api: str, path: str, body: dict[str, Any], length: int
    ) -> tuple[int, dict[str, Any]]:
        """The status and body the API answers one generate request with (the request
        is logged); a batched request is answered by the same rules."""
        model = body.get("model") or path.split("/models/")[-1].split(":")[0]
        found: dict[str, list[Any]] = {"images": [], "videos": [], "texts": []}
        walk(body, found)
        question = next((t for t in reversed(found["texts"]) if "Question:" in t), "")
        word = _BEHAVIOUR.search(question)
        behaviour = word.group(1) if word else "PASS"
        max_tokens = (
            body.get("max_tokens")
            or body.get("max_output_tokens")
            or body.get("max_completion_tokens")
            or (body.get("generationConfig") or body.get("generation_config") or {}).get(
                "maxOutputTokens"
            )
        )
        entry = {
            "api": api,
            "model": model,
            "question": question[-200:],
            "body_bytes": length,
            "images": found["images"],
            "videos": found["videos"],
            "max_tokens": max_tokens,
            "behaviour": behaviour,
        }
        refusal = self._refusal(api, length, found["images"], behaviour) or self._failure(
            api, behaviour
        )
        # "status" is the verdict of the size rules and failures; [BROKEN] is refused after
        entry["status"] = refusal[0] if refusal else 200
        answered = refusal is None and behaviour != "BROKEN"
        # billed only when answered: a refused request reads and writes no cache
        usage = self._usage(api, body, question, len(found["images"])) if answered else None
        self._log({**entry, "usage": usage, "at": time.monotonic()})
        if refusal:
            return refusal
        if behaviour == "BROKEN":
            return 400, _error(
                api, 400, "invalid_request_error", "temperature: unsupported value for this model"
            )
        empty = behaviour == "EMPTY" or (behaviour == "EMPTYONCE" and int(max_tokens or 0) < 1500)
        answered = "PASS" if behaviour in ("EMPTYONCE", "OUTAGE") else behaviour
        text = "" if empty else f"My answer is {answered}."
        if self.config.get("latency_seconds"):
            time.sleep(float(self.config["latency_seconds"]))  # scaled under faketime
        if behaviour == "AGENT" and body.get("tools"):
            reply = _agent_step(api, model, body, usage)
        else:
            reply = _completion(api, model, text, length_stop=empty, usage=usage)
        return 200, with_usage(reply, api, self.config.get("usage"))

    def _usage(
        self, api: str, body: dict[str, Any], question: str, images: int
    ) -> dict[str, Any] | None:
        """Tokens as the provider would bill them: with `prompt_cache` set, the input is split
        by the documented caching rules; output tokens follow the question, so that a pilot
        run's figures differ from the full run's as real answers do."""
        if not self.config.get("prompt_cache"):
            return None
        if api == "anthropic":
            cached = _cache().anthropic(body)
        elif api in ("responses", "chat"):
            cached = _cache().openai(body, api)
        else:
            return None
        spread = int(hashlib.sha256(question.encode()).hexdigest(), 16) % 400
        output = (600 if images > 1 else 200) + spread
        return {
            "fresh": cached.fresh,
            "read": cached.read,
            "written": cached.written,
            "output": output,
            "reasoning": output // 2,
            "marks": cached.marks,
            "blocks": cached.blocks,
            "explicit": (body.get("prompt_cache_options") or {}).get("mode") == "explicit",
            "cache_key": body.get("prompt_cache_key"),
            "retention": body.get("prompt_cache_retention"),
        }

    # --- outages, rate limits and policy refusals
    def _failure(self, api: str, behaviour: str) -> tuple[int, dict[str, Any]] | None:
        global _requests_seen
        with _lock:
            _requests_seen += 1
            seen = _requests_seen
        if seen <= int(self.config.get("rate_limited_requests") or 0):
            return 429, _error(api, 429, "rate_limit_error", "Rate limit reached, slow down")
        outage = self.config.get("outage_file")
        if behaviour == "OUTAGE" and outage and os.path.exists(outage):
            return 500, _error(api, 500, "api_error", "Internal server error")
        if behaviour == "POLICY":
            body = _error(api, 400, "invalid_request_error", POLICY_MESSAGE)
            if api not in ("anthropic", "google"):
                body["error"]["code"] = "content_policy_violation"
            return 400, body
        return None

    # --- the rules
    def _refusal(
        self, api: str, size: int, images: list[dict[str, Any]], behaviour: str
    ) -> tuple[int, dict[str, Any]] | None:
        rules = self.config
        limit = rules.get("request_max_bytes")
        if behaviour == "TOOBIG" or (limit is not None and size > limit):
            if api == "google":
                return 400, _error(
                    api,
                    400,
                    "INVALID_ARGUMENT",
                    f"Request payload size exceeds the limit: {limit} bytes.",
                )
            return 413, _error(
                api,
                413,
                "request_too_large",
                f"Request exceeds the maximum size ({size} > {limit} bytes)",
            )
        count = rules.get("images_per_request")
        if count is not None and len(images) > count:
            return 400, _error(
                api, 400, "invalid_request_error", f"too many images: {len(images)} > {count}"
            )
        each = rules.get("image_max_encoded")
        side = rules.get("image_max_side")
        for image in images:
            if each is not None and image["encoded"] > each:
                return 400, _error(api, 400, "invalid_request_error", f"image exceeds {each} bytes")
            if side is not None and max(image["width"], image["height"]) > side:
                return 400, _error(
                    api, 400, "invalid_request_error", f"image dimensions exceed {side} px"
                )
        return None

    # --- Gemini Files API (resumable upload)
    def _upload(self, path: str, raw: bytes) -> None:
        if path.startswith("/upload/"):
            session = uuid.uuid4().hex
            _uploads[session] = bytearray()
            declared = self.headers.get("X-Goog-Upload-Header-Content-Type")
            _upload_mimes[session] = str(declared or "video/mp4")
            host = self.headers.get("host")
            self._reply(
                200,
                {},
                {
                    "x-goog-upload-url": f"http://{host}/upload-session/{session}",
                    "x-goog-upload-status": "active",
                },
            )
            return
        session = path.rsplit("/", 1)[-1]
        _uploads[session] += raw
        if "finalize" not in self.headers.get("X-Goog-Upload-Command", ""):
            self._reply(200, {}, {"x-goog-upload-status": "active"})
            return
        name = f"files/{session}"
        host = self.headers.get("host")
        file = {
            "name": name,
            "uri": f"http://{host}/v1beta/{name}",
            "mimeType": _upload_mimes.get(session, "video/mp4"),  # as the upload declared it
            "sizeBytes": str(len(_uploads[session])),
            "state": "ACTIVE",
        }
        _files[session] = {"file": file, "uploaded_bytes": len(_uploads[session])}
        self._log(
            {
                "api": "google-files",
                "uploaded_bytes": len(_uploads[session]),
                "mime": file["mimeType"],
                "status": 200,
            }
        )
        self._reply(200, {"file": file}, {"x-goog-upload-status": "final"})


@functools.cache
def _cache() -> PromptCache:
    """The process's one prompt cache, under the rules the handler was started with."""
    return PromptCache(Handler.config)


# [AGENT] with tools offered: look at more frames (or a crop of an image) twice, then submit;
# step k answers a request holding k - 1 of the model's earlier turns
AGENT_STEPS = (
    ("frames", {"start": 0.0, "end": 1.0}),
    ("frames", {"start": 1.0, "end": 2.0}),
    ("submit", {"answer": "Having looked again, my answer is PASS."}),
)
IMAGE_AGENT_STEPS = (
    ("crop", {"x0": 0, "y0": 0, "x1": 32, "y1": 32}),
    ("submit", {"answer": "Having looked closely, my answer is PASS."}),
)


def _agent_step(
    api: str, model: str, body: dict[str, Any], usage: dict[str, Any] | None
) -> dict[str, Any]:
    items = body.get("messages") if api == "anthropic" else body.get("input")
    done = sum(
        1
        for item in items or []
        if item.get("role") == "assistant" or item.get("type") == "function_call"
    )
    steps = (
        AGENT_STEPS if any("frame" in json.dumps(t) for t in body["tools"]) else IMAGE_AGENT_STEPS
    )
    name, arguments = steps[min(done, len(steps) - 1)]
    reply = _completion(api, model, "Let me look again.", length_stop=False, usage=usage)
    call_id = f"call_{done}"
    if api == "anthropic":
        reply["content"].append(
            {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        )
        reply["stop_reason"] = "tool_use"
    else:
        reply["output"].append(
            {
                "type": "function_call",
                "id": f"fc_{done}",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        )
    return reply


def api_of(path: str) -> str:
    """Which API a generate request's path belongs to."""
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    return "google"


def _error(api: str, status: int, kind: str, message: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "google":
        return {"error": {"code": status, "message": message, "status": kind}}
    return {"error": {"message": message, "type": kind, "code": kind, "param": None}}


def _completion(
    api: str, model: str, text: str, length_stop: bool, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    billed = usage or {"fresh": 10, "read": 0, "written": {}, "output": 5, "reasoning": 0}
    written = sum(billed["written"].values())
    total_input = billed["fresh"] + billed["read"] + written
    if api == "anthropic":
        return {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": "max_tokens" if length_stop else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": billed["fresh"],
                "output_tokens": billed["output"],
                **(
                    {
                        "cache_creation_input_tokens": written,
                        "cache_read_input_tokens": billed["read"],
                        "cache_creation": {
                            "ephemeral_5m_input_tokens": billed["written"].get("5m", 0),
                            "ephemeral_1h_input_tokens": billed["written"].get("1h", 0),
                        },
                    }
                    if usage
                    else {}
                ),
            },
        }
    if api == "chat":
        return {
            "id": "chat_standin",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "length" if length_stop else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": total_input,
                "completion_tokens": billed["output"],
                "total_tokens": total_input + billed["output"],
                **({"prompt_tokens_details": {"cached_tokens": billed["read"]}} if usage else {}),
            },
        }
    if api == "responses":
        return {
            "id": "resp_standin",
            "object": "response",
            "created_at": 0,
            "model": model,
            "status": "incomplete" if length_stop else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if length_stop else None,
            "output": [
                {
                    "type": "message",
                    "id": "msg_standin",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": total_input,
                "output_tokens": billed["output"],
                "total_tokens": total_input + billed["output"],
                "input_tokens_details": {
                    "cached_tokens": billed["read"],
                    "cache_write_tokens": written,  # always sent; the SDK's strict reader needs it
                },
                "output_tokens_details": {"reasoning_tokens": billed["reasoning"]},
            },
        }
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}] if text else []},
                "finishReason": "MAX_TOKENS" if length_stop else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


def with_usage(
    reply: dict[str, Any], api: str, usage: dict[str, dict[str, Any]] | None
) -> dict[str, Any]:
    """The reply with the usage fields the config gives for its API put over its own."""
    fields = (usage or {}).get(api)
    if fields:
        key = "usageMetadata" if api == "google" else "usage"
        reply[key] = {**reply[key], **fields}
    return reply


def main() -> None:
    serve_configured(Handler, sys.argv[1:4])


if __name__ == "__main__":
    main()
