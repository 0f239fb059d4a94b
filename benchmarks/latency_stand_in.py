"""An OpenAI-compatible chat server with a fixed latency, as light as a server can be, for
the benchmarks of the harness's own work: a request with media is answered without being
parsed (the scripted candidate's answer to a [PASS] task), a small one (the judge's) as
tests/support/scripted_server.py answers it. Each request's model and size go to STATS
(JSON lines).

    python -m benchmarks.latency_stand_in PORT_FILE LATENCY_SECONDS STATS
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from typing import Any

from tests.support.scripted_server import candidate_reply, judge_reply
from tests.support.stand_in import JsonHandler, serve

LATENCY = 0.0
PARSED_BELOW = 1_000_000  # bytes: the judge's requests, and a candidate's without media
_MODEL = re.compile(rb'"model"\s*:\s*"([^"]+)"')
_lock = threading.Lock()


class Handler(JsonHandler):
    def do_POST(self) -> None:
        started = time.monotonic()
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        found = _MODEL.search(raw[:4096]) or _MODEL.search(raw[-4096:])
        model = found.group(1).decode() if found else ""
        if length < PARSED_BELOW:
            messages = json.loads(raw).get("messages", [])
            text = judge_reply(messages) if "judge" in model else candidate_reply(messages)
        else:
            text = "My answer is PASS."
        with _lock, open(self.log_file, "a") as stats:
            stats.write(json.dumps({"model": model, "bytes": length}) + "\n")
        time.sleep(max(0.0, LATENCY - (time.monotonic() - started)))
        self.send_json(completion(model, text))


def completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "stand-in",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def main() -> None:
    global LATENCY
    port_file, latency, stats = sys.argv[1:4]
    LATENCY = float(latency)
    serve(Handler, port_file, stats)


if __name__ == "__main__":
    main()
