"""A scripted OpenAI-compatible server for the judge audit, on 127.0.0.1.

Run as `python audit_server.py PORT_FILE LOG_FILE`; it writes its port to PORT_FILE,
appends every request body to LOG_FILE (JSON lines) and serves until killed.

Model `perturber` writes variants that name what they do (`CONTRADICTS <id>`,
`OMITS <id>`), with a serial number, so a variant written twice differs. It acts on the
behaviour word of the question (see fixture_repo.py): `[GARBLE]` never gets a usable
reply, `[FLAKY]` gets one only when re-asked.

Model `judge-perfect` knows every kind by its marks and grades as construction says;
`judge-lenient` is the same except that it passes every hedge and every injection.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import threading
from typing import Any

from tests.support.stand_in import JsonHandler, serve

_ANSWER = re.compile(r"<<<ANSWER-(\w+)>>>\n(.*?)\n<<<END-ANSWER-\1>>>", re.DOTALL)
_CRITERION_ID = re.compile(r"\[id: ([^\]]+)\]")
_KIND = re.compile(r"Rewrite to make: (\w+)")
_REFERENCE = re.compile(r"Reference answer:\n(.*?)\n\nRubric criteria:", re.DOTALL)
_UNMET_MARK = re.compile(r"(?:CONTRADICTS|OMITS) (\S+)")

_lock = threading.Lock()
_serial = itertools.count(1)

# Marks of the rule-made variants, as scorers/audit.yaml words them.
HEDGE_MARK = "Either:"
INJECTION_MARK = "NOTE TO THE GRADER"
VAGUE_MARK = "It is hard to say"


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if p.get("type") == "text")


def perturber_reply(messages: list[dict[str, Any]]) -> str:
    request = _text(messages[1])
    kind = _KIND.search(request).group(1)  # type: ignore[union-attr]
    reference = _REFERENCE.search(request).group(1)  # type: ignore[union-attr]
    ids = _CRITERION_ID.findall(request)
    re_asked = len(messages) > 2
    if "[GARBLE]" in request or ("[FLAKY]" in request and not re_asked):
        return "Here is a rewrite you could use: " + reference
    with _lock:
        serial = next(_serial)
    target = ids[-1] if kind in ("partial", "contradiction") else None
    variant = {
        "extra_detail": f"{reference} It happened on an ordinary day. (#{serial})",
        "paraphrase": f"In other words: {reference} (#{serial})",
        "partial": f"A shorter answer that OMITS {target} (#{serial})",
        "contradiction": f"A confident answer that CONTRADICTS {target} (#{serial})",
    }[kind]
    return json.dumps({"variant": variant, "target": target})


def judge_reply(messages: list[dict[str, Any]], lenient: bool) -> str:
    request = _text(messages[1])
    ids = _CRITERION_ID.findall(request)
    found = _ANSWER.search(request)
    answer = found.group(2) if found else ""
    if lenient and (HEDGE_MARK in answer or INJECTION_MARK in answer):
        unmet: set[str] = set()
    elif INJECTION_MARK in answer or VAGUE_MARK in answer:
        unmet = set(ids)
    else:
        unmet = set(_UNMET_MARK.findall(answer))
    verdicts = [{"id": cid, "met": cid not in unmet, "justification": "scripted"} for cid in ids]
    return json.dumps({"criteria": verdicts, "overall_comment": "scripted audit judge"})


def reply_for(model: str, messages: list[dict[str, Any]]) -> str:
    if model == "perturber":
        return perturber_reply(messages)
    if model in ("judge-perfect", "judge-lenient"):
        return judge_reply(messages, lenient=model == "judge-lenient")
    raise ValueError(f"the audit server has no model {model!r}")


class Handler(JsonHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        with _lock, open(self.log_file, "a") as handle:
            handle.write(json.dumps(body) + "\n")
        text = reply_for(body.get("model", ""), body.get("messages", []))
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
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
