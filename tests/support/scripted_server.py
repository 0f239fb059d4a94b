"""A scripted OpenAI-compatible chat server on 127.0.0.1 for Inspect's real `openai-api`
provider. Run as `python scripted_server.py PORT_FILE LOG_FILE`; it writes its port to
PORT_FILE, appends every request body to LOG_FILE (JSON lines) and serves until killed.

Model `candidate` answers by the behaviour word in the question (see fixture_repo.py), and
without media says it cannot tell, unless the question holds [GUESS];
model `judge` grades by the behaviour word it finds in the candidate's answer; a model
whose name ends in `-slow` answers after SLOW_SECONDS.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import Counter
from typing import Any

from tests.support.stand_in import JsonHandler, serve

_BEHAVIOUR = re.compile(r"\[(PASS|FAIL|ONCE|FLAKY|GARBLE|EMPTY)\]")
_ANSWER = re.compile(r"<<<ANSWER-(\w+)>>>\n(.*?)\n<<<END-ANSWER-\1>>>", re.DOTALL)
_CRITERION_ID = re.compile(r"\[id: ([^\]]+)\]")

SLOW_SECONDS = 1.5  # how long a model named `...-slow` takes to answer

_lock = threading.Lock()
_calls: Counter[str] = Counter()


def _text_parts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if p.get("type") == "text")


def _count(key: str) -> int:
    with _lock:
        _calls[key] += 1
        return _calls[key]


def candidate_reply(messages: list[dict[str, Any]]) -> str:
    question = _text_parts(messages[-1])
    has_media = any(
        isinstance(m.get("content"), list)
        and any(p.get("type") == "image_url" for p in m["content"])
        for m in messages
    )
    found = _BEHAVIOUR.search(question)
    behaviour = found.group(1) if found else "FAIL"
    if not has_media:
        # [GUESS]: a question answered from its text alone (the blind control passes it)
        return "My answer is PASS." if "[GUESS]" in question else "I cannot tell without seeing it."
    if behaviour == "EMPTY":
        return ""
    if behaviour == "ONCE":
        behaviour = "PASS" if _count(question) == 1 else "FAIL-ALL"
    return f"My answer is {behaviour}."


def judge_reply(messages: list[dict[str, Any]]) -> str:
    request = _text_parts(messages[1])
    ids = _CRITERION_ID.findall(request)
    answer_match = _ANSWER.search(request)
    answer = answer_match.group(2) if answer_match else ""
    retrying = len(messages) > 2
    if "GARBLE" in answer:
        return "I am not sure how to grade this one."
    if "FLAKY" in answer and not retrying:
        return "Verdict: looks fine to me"
    if "FAIL-ALL" in answer or "cannot tell" in answer:
        met = [False] * len(ids)
    elif "FAIL" in answer:
        met = [i > 0 for i in range(len(ids))]
    else:
        met = [True] * len(ids)
    verdicts = [
        {"id": cid, "met": ok, "justification": "scripted"}
        for cid, ok in zip(ids, met, strict=True)
    ]
    body = json.dumps({"criteria": verdicts, "overall_comment": "scripted judge"})
    return f"```json\n{body}\n```"


class Handler(JsonHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        with _lock, open(self.log_file, "a") as handle:
            handle.write(json.dumps(body) + "\n")
        model = body.get("model", "")
        messages = body.get("messages", [])
        if model.endswith("-slow"):
            time.sleep(SLOW_SECONDS)  # a run that can be killed between samples
        text = judge_reply(messages) if "judge" in model else candidate_reply(messages)
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        self.send_json(reply)


def main() -> None:
    serve(Handler, sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
