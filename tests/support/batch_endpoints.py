"""The batch endpoints of the provider stand-in (tests/support/provider_server.py), for
Inspect's real batchers and the real SDKs:

  Anthropic Message Batches  POST /v1/messages/batches, GET /v1/messages/batches/{id},
                             GET /v1/messages/batches/{id}/results (JSON lines)
  OpenAI Files + Batches     POST /v1/files (multipart), POST /v1/batches,
                             GET /v1/batches/{id}, GET /v1/files/{id}/content
  Gemini Batch API           the Files API upload the server already speaks, then
                             POST /v1beta/models/{m}:batchGenerateContent,
                             GET /v1beta/batches/{id}, GET /v1beta/files/{id}:download

Each request of a batch is answered when the batch is created, by the server's own
`answer` (the same rules, usage and logging as a direct request), and the results are
released once the batch has run `batch_seconds` (config, default 0). With `fail_batches:
N` the first N batches end as failures of the whole batch, as each API reports them
(`batch_failure`: `expired`, the default, or `failed`): Anthropic marks every request
expired (or errored); OpenAI ends the batch `expired` with each request's `batch_expired`
error in the error file (or `failed`, with its errors); Gemini ends the job
`BATCH_STATE_EXPIRED` (or `BATCH_STATE_FAILED`). A failed batch's requests are never
answered. A request the rules refuse (a non-200 answer) is that request's error result.

Each batch is logged (`api` `<api>-batch`) with its request count, its bytes as sent (the
Anthropic body, the OpenAI or Gemini input file) and how it ended, and refused with the
API's own error when it is over `batch_max_bytes` or `batch_max_requests` (config).
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

_lock = threading.Lock()
_files: dict[str, bytes] = {}  # OpenAI files and Gemini result files, by id
_batches: dict[str, Batch] = {}
_created = 0

_ANTHROPIC = re.compile(r"^/v1/messages/batches(?:/([^/]+))?(/results)?$")
_OPENAI_FILES = re.compile(r"^/v1/files(?:/([^/]+)/content)?$")
_OPENAI_BATCHES = re.compile(r"^/v1/batches(?:/(batch_[^/]+))?$")
# google-genai addresses the Gemini API as v1beta or v1, by version
_GEMINI_CREATE = re.compile(r"^/v1(?:beta)?/(models/[^/:]+):batchGenerateContent$")
_GEMINI_BATCH = re.compile(r"^/v1(?:beta)?/(batches/[^/]+)$")
_GEMINI_DOWNLOAD = re.compile(r"^/(?:download/)?v1(?:beta)?/files/([^/:]+):download$")


@dataclass
class Batch:
    """One batch: its requests' results (custom id -> (status, body)), answered when it
    was created, and whether it ends as a failure of the whole batch."""

    api: str
    id: str
    results: dict[str, tuple[int, dict[str, Any]]]
    failed: bool
    created: float = field(default_factory=time.time)
    model: str = ""
    endpoint: str = ""
    input_file_id: str = ""

    def ended(self, delay: float) -> bool:
        return time.time() >= self.created + delay


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class BatchEndpoints:
    """Mixed into the stand-in's Handler, which supplies `config`, `answer`, `send_json`,
    `_log`, and the request (`headers`, `rfile`, `wfile`)."""

    config: dict[str, Any]

    def serve_batch(self, method: str, path: str) -> bool:
        """Answer `path` if it is a batch endpoint; False leaves it to the Handler."""
        routes = (
            (_ANTHROPIC, self._anthropic),
            (_OPENAI_FILES, self._openai_files),
            (_OPENAI_BATCHES, self._openai_batches),
            (_GEMINI_CREATE, self._gemini_create),
            (_GEMINI_BATCH, self._gemini_batch),
            (_GEMINI_DOWNLOAD, self._gemini_download),
        )
        for pattern, route in routes:
            found = pattern.match(path)
            if found and not (pattern is _GEMINI_CREATE and method != "POST"):
                route(method, *found.groups())
                return True
        return False

    # --- plumbing
    def _body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():  # type: ignore[attr-defined]
            data = bytearray()
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)  # type: ignore[attr-defined]
                if size == 0:
                    self.rfile.readline()  # type: ignore[attr-defined]
                    return bytes(data)
                data += self.rfile.read(size)  # type: ignore[attr-defined]
                self.rfile.readline()  # type: ignore[attr-defined]
        return bytes(self.rfile.read(int(self.headers.get("content-length", 0))))  # type: ignore[attr-defined]

    def _send_bytes(self, data: bytes, content_type: str) -> None:
        self.send_response(200)  # type: ignore[attr-defined]
        self.send_header("content-type", content_type)  # type: ignore[attr-defined]
        self.send_header("content-length", str(len(data)))  # type: ignore[attr-defined]
        self.end_headers()  # type: ignore[attr-defined]
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a killed client
            self.wfile.write(data)  # type: ignore[attr-defined]

    def _json(self, body: dict[str, Any], status: int = 200) -> None:
        self.send_json(body, status)  # type: ignore[attr-defined]

    def _not_found(self, what: str) -> None:
        self._json({"error": {"type": "not_found_error", "message": f"no {what}"}}, 404)

    def _over_limits(self, api: str, size: int, count: int) -> str | None:
        max_bytes = self.config.get("batch_max_bytes")
        max_requests = self.config.get("batch_max_requests")
        if max_bytes is not None and size > max_bytes:
            return f"batch of {size} bytes exceeds the maximum of {max_bytes} bytes"
        if max_requests is not None and count > max_requests:
            return f"batch of {count} requests exceeds the maximum of {max_requests}"
        return None

    def _new_batch(
        self,
        api: str,
        prefix: str,
        requests: list[tuple[str, str, str, dict[str, Any]]],
        size: int,
        **facts: str,
    ) -> Batch:
        """Answer `requests` ((custom id, api, path, body)) unless the batch is to fail."""
        global _created
        with _lock:
            _created += 1
            failed = _created <= int(self.config.get("fail_batches") or 0)
        results: dict[str, tuple[int, dict[str, Any]]] = {}
        if not failed:
            for custom_id, inner_api, path, body in requests:
                length = len(json.dumps(body, separators=(",", ":")))
                results[custom_id] = self.answer(inner_api, path, body, length)  # type: ignore[attr-defined]
        batch = Batch(api, f"{prefix}{uuid.uuid4().hex[:16]}", results, failed, **facts)
        if failed:
            batch.results = {custom_id: (0, {}) for custom_id, *_ in requests}
        with _lock:
            _batches[batch.id] = batch
        self._log(  # type: ignore[attr-defined]
            {
                "api": f"{api}-batch",
                "batch_id": batch.id,
                "requests": len(requests),
                "body_bytes": size,
                "status": self._batch_failure() if failed else "ended",
            }
        )
        return batch

    def _batch_failure(self) -> str:
        return str(self.config.get("batch_failure") or "expired")

    def _batch(self, batch_id: str | None) -> Batch | None:
        with _lock:
            return _batches.get(batch_id or "")

    def _ended(self, batch: Batch) -> bool:
        return batch.ended(float(self.config.get("batch_seconds") or 0))

    # --- Anthropic Message Batches
    def _anthropic(self, method: str, batch_id: str | None, results: str | None) -> None:
        if method == "POST" and batch_id is None:
            raw = self._body()
            requests = json.loads(raw)["requests"]
            refused = self._over_limits("anthropic", len(raw), len(requests))
            if refused:
                self._json(
                    {"type": "error", "error": {"type": "request_too_large", "message": refused}},
                    413,
                )
                return
            batch = self._new_batch(
                "anthropic",
                "msgbatch_",
                [(r["custom_id"], "anthropic", "/v1/messages", r["params"]) for r in requests],
                len(raw),
            )
            self._json(self._anthropic_batch(batch))
            return
        batch = self._batch(batch_id)
        if batch is None:
            self._not_found(f"message batch {batch_id}")
        elif results:
            lines = [
                {"custom_id": custom_id, "result": self._anthropic_result(status, body)}
                for custom_id, (status, body) in batch.results.items()
            ]
            self._send_bytes(_jsonl(lines), "application/binary")
        else:
            self._json(self._anthropic_batch(batch))

    def _anthropic_result(self, status: int, body: dict[str, Any]) -> dict[str, Any]:
        if status == 0:  # the batch failed as a whole
            if self._batch_failure() == "failed":
                error = {"type": "api_error", "message": "Internal server error"}
                return {"type": "errored", "error": {"type": "error", "error": error}}
            return {"type": "expired"}
        if status != 200:
            return {"type": "errored", "error": body}
        return {"type": "succeeded", "message": body}

    def _anthropic_batch(self, batch: Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if not ended:
            counts["processing"] = len(batch.results)
        for status, body in batch.results.values() if ended else ():
            counts[self._anthropic_result(status, body)["type"]] += 1
        host = self.headers.get("host")  # type: ignore[attr-defined]
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _iso(batch.created),
            "expires_at": _iso(batch.created + 86_400),
            "ended_at": _iso(time.time()) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"http://{host}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
        }

    # --- OpenAI Files and Batches
    def _openai_files(self, method: str, file_id: str | None) -> None:
        if method == "POST" and file_id is None:
            content = _multipart_file(self.headers.get("content-type", ""), self._body())  # type: ignore[attr-defined]
            new_id = f"file-{uuid.uuid4().hex[:16]}"
            with _lock:
                _files[new_id] = content
            self._json(_openai_file(new_id, len(content)))
            return
        with _lock:
            content = _files.get(file_id or "")
        if content is None:
            self._not_found(f"file {file_id}")
        else:
            self._send_bytes(content, "application/jsonl")

    def _openai_batches(self, method: str, batch_id: str | None) -> None:
        if method == "POST" and batch_id is None:
            request = json.loads(self._body())
            with _lock:
                content = _files.get(request["input_file_id"], b"")
            lines = [json.loads(line) for line in content.splitlines() if line.strip()]
            refused = self._over_limits("openai", len(content), len(lines))
            if refused:
                self._json(
                    {
                        "error": {
                            "message": refused,
                            "type": "invalid_request_error",
                            "code": "invalid_request",
                            "param": None,
                        }
                    },
                    400,
                )
                return
            endpoint = request["endpoint"]
            batch = self._new_batch(
                "openai",
                "batch_",
                [(r["custom_id"], _openai_api(r["url"]), r["url"], r["body"]) for r in lines],
                len(content),
                endpoint=endpoint,
                input_file_id=request["input_file_id"],
            )
            self._json(self._openai_batch(batch))
            return
        batch = self._batch(batch_id)
        if batch is None:
            self._not_found(f"batch {batch_id}")
        else:
            self._json(self._openai_batch(batch))

    def _openai_batch(self, batch: Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        total = len(batch.results)
        body: dict[str, Any] = {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": "in_progress",
            "created_at": int(batch.created),
            "request_counts": {"total": total, "completed": 0, "failed": 0},
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
        }
        if not ended:
            return body
        if batch.failed and self._batch_failure() == "failed":
            error = {
                "code": "invalid_request",
                "message": "The batch could not be processed.",
                "param": None,
                "line": None,
            }
            body.update(
                status="failed", request_counts=None, errors={"object": "list", "data": [error]}
            )
            return body
        done, errored = self._openai_outputs(batch)
        body["status"] = "expired" if batch.failed else "completed"
        body["request_counts"] = {"total": total, "completed": len(done), "failed": len(errored)}
        body["output_file_id"] = self._stored(f"{batch.id}-output", done)
        body["error_file_id"] = self._stored(f"{batch.id}-errors", errored)
        return body

    def _openai_outputs(self, batch: Batch) -> tuple[list[Any], list[Any]]:
        """The output file's lines (answered) and the error file's (refused, expired)."""
        done: list[Any] = []
        errored: list[Any] = []
        for custom_id, (status, body) in batch.results.items():
            line: dict[str, Any] = {
                "id": f"batch_req_{uuid.uuid4().hex[:16]}",
                "custom_id": custom_id,
                "response": None,
                "error": None,
            }
            if status == 0:
                line["error"] = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion "
                    "window expired.",
                }
                errored.append(line)
                continue
            line["response"] = {"status_code": status, "request_id": uuid.uuid4().hex, "body": body}
            (done if status == 200 else errored).append(line)
        return done, errored

    def _stored(self, file_id: str, lines: list[Any]) -> str | None:
        if not lines:
            return None
        with _lock:
            _files.setdefault(file_id, _jsonl(lines))
        return file_id

    # --- Gemini Batch API
    def _gemini_create(self, method: str, model: str) -> None:
        # the uploads the server's Files API received, in its own module (run as __main__)
        uploads = sys.modules[type(self).__module__]._uploads
        request = json.loads(self._body())["batch"]
        session = request["inputConfig"]["fileName"].removeprefix("files/")
        content = bytes(uploads.get(session, b""))
        lines = [json.loads(line) for line in content.splitlines() if line.strip()]
        refused = self._over_limits("google", len(content), len(lines))
        if refused:
            self._json(
                {"error": {"code": 400, "message": refused, "status": "INVALID_ARGUMENT"}}, 400
            )
            return
        path = f"/v1beta/{model}:generateContent"  # as a direct request would go
        batch = self._new_batch(
            "google",
            "batches/",
            [(r["key"], "google", path, r["request"]) for r in lines],
            len(content),
            model=model,
        )
        self._json(self._gemini_job(batch))

    def _gemini_batch(self, method: str, name: str) -> None:
        batch = self._batch(name)
        if batch is None:
            self._json(
                {"error": {"code": 404, "message": f"no {name}", "status": "NOT_FOUND"}}, 404
            )
        else:
            self._json(self._gemini_job(batch))

    def _gemini_job(self, batch: Batch) -> dict[str, Any]:
        ended = self._ended(batch)
        state = "BATCH_STATE_RUNNING"
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": batch.model,
            "displayName": batch.id,
            "createTime": _iso(batch.created),
        }
        if ended and batch.failed:
            state = (
                "BATCH_STATE_FAILED" if self._batch_failure() == "failed" else "BATCH_STATE_EXPIRED"
            )
        elif ended:
            state = "BATCH_STATE_SUCCEEDED"
            lines = [
                _gemini_line(key, status, body) for key, (status, body) in batch.results.items()
            ]
            output = self._stored(f"{batch.id.removeprefix('batches/')}-output", lines)
            metadata["output"] = {"responsesFile": f"files/{output}"}
        metadata["state"] = state
        return {"name": batch.id, "metadata": metadata, "done": ended}

    def _gemini_download(self, method: str, file_id: str) -> None:
        with _lock:
            content = _files.get(file_id)
        if content is None:
            self._json(
                {"error": {"code": 404, "message": f"no file {file_id}", "status": "NOT_FOUND"}},
                404,
            )
        else:
            self._send_bytes(content, "application/octet-stream")


def _gemini_line(key: str, status: int, body: dict[str, Any]) -> dict[str, Any]:
    if status == 200:
        return {"key": key, "response": body}
    error = body.get("error", {})  # a google.rpc.Status, as the batch output file holds it
    return {
        "key": key,
        "error": {"code": error.get("code", status), "message": error.get("message", "")},
    }


def _openai_api(url: str) -> str:
    return "responses" if url.endswith("/responses") else "chat"


def _openai_file(file_id: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def _jsonl(lines: list[Any]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    """The `file` field of a multipart/form-data body."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + raw
    )
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return bytes(payload or b"")
    raise ValueError("no file field in the upload")
