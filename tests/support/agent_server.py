"""A scripted OpenAI-compatible server for the agentic condition and the failure labeller.

Run as `python agent_server.py PORT_FILE LOG_FILE` (as `scripted_server.py`, whose judge
it reuses). Models:

- `agent` (any other model name): follows the script named by the `[AGENT-...]` word
  in the question; step k of the script answers a request holding k assistant
  messages. A step is a tool call (with some text beside it) or a plain text reply.
  A question without a script, `[WORDS]` or `[WORDS|AGENT:OTHER]`, gets the text reply
  "My answer is WORDS (MODEL)." (OTHER instead when tools are offered; EMPTY gives an
  empty reply; OUTAGE fails every request, HTTP 503). Every reply reports 5 output
  tokens, 3 of them reasoning.
- `judge`: the judge of `scripted_server.py` (grades by PASS / FAIL in the answer).
- `labeler`: replies with the cause written in the answer as `CAUSE=<id>`; `CAUSE=NONSENSE`
  is never readable, `CAUSE=ONCE-NONSENSE` is readable only when re-asked (then
  missed_cue), `CAUSE=BY-MODEL` names the cause `BY_MODEL` gives the answering model.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

from tests.support.stand_in import JsonHandler, serve

try:  # run as a script beside scripted_server.py, or imported by the tests
    from scripted_server import _ANSWER, _text_parts, judge_reply
except ImportError:
    from tests.support.scripted_server import _ANSWER, _text_parts, judge_reply

_SCRIPT = re.compile(r"\[(AGENT-[A-Z]+)\]")
_WORDS = re.compile(r"\[([^\]]+)\]")
_MODEL_TAG = re.compile(r"\((m\d)\)")
BY_MODEL = {"m1": "motive", "m2": "motive", "m3": "motive", "m4": "missed_cue", "m5": "missed_cue"}
_CAUSE = re.compile(r"CAUSE=([A-Za-z_-]+)")
_log_lock = threading.Lock()
POLICY_MESSAGE = "Your request was rejected as a result of our safety system."

OUTPUT_TOKENS = 5
WORDY_OUTPUT_TOKENS = 20  # per reply of the AGENT-WORDY script
REASONING_TOKENS = 3

Step = dict[str, Any]


def call(name: str, text: str = "", **arguments: Any) -> Step:
    return {"tool": name, "arguments": arguments, "text": text}


SCRIPTS: dict[str, list[Step]] = {
    # An image task: a good crop, a crop outside the image, a frame time on an image, submit.
    "AGENT-IMG": [
        call("crop", "Let me look closer at the middle.", x0=20, y0=10, x1=52, y1=34),
        call("crop", x0=0, y0=0, x1=500, y1=20),
        call("crop", x0=0, y0=0, x1=16, y1=16, frame_time=1.0),
        call("submit", answer="Having looked closely, my answer is PASS."),
    ],
    # A video task: a window, a window past the end, crops of a fetched and of an
    # unknown frame, a comparison, a comparison with an unknown frame, a bad type,
    # too high a rate, submit.
    "AGENT-VID": [
        call("frames", "More frames of the second second.", start=1.0, end=2.0, fps=10),
        call("frames", start=2.5, end=9.0),
        call("crop", x0=6, y0=4, x1=30, y1=20, frame_time=1.3),
        call("crop", x0=0, y0=0, x1=16, y1=16, frame_time=0.25),
        call("compare", frame_time_a=0.5, frame_time_b=1.5),
        call("compare", frame_time_a=0.5, frame_time_b=7.0),
        call("frames", start="soon", end=2.0),
        call("frames", start=0.0, end=1.0, fps=240),
        call("submit", answer="After the closer look, my answer is PASS."),
    ],
    # Never submits: keeps cropping until the step limit ends it.
    "AGENT-LOOP": [call("crop", "Still unsure; for now I say FAIL.", x0=0, y0=0, x1=32, y1=32)],
    # Asks for 16 frames at a time until the image budget is used up.
    "AGENT-GREEDY": [call("frames", "More frames; FAIL so far.", start=0.0, end=2.0, fps=8)],
    # Keeps cropping with long replies until the output-token limit ends it.
    "AGENT-WORDY": [call("crop", "Thinking at length; FAIL so far.", x0=0, y0=0, x1=32, y1=32)],
    # One good step, then the server fails the request (HTTP 400, not retried).
    "AGENT-BROKEN": [call("crop", "Looking.", x0=0, y0=0, x1=32, y1=32)],
    # One good step, then the provider's safety system rejects the request (HTTP 400).
    "AGENT-REFUSED": [call("crop", "Looking.", x0=0, y0=0, x1=32, y1=32)],
    # A crop of the box tests/support/faulty_inspect.py can break, then submit.
    "AGENT-BUGGY": [
        call("crop", "Looking.", x0=1, y0=2, x1=33, y1=34),
        call("submit", answer="My answer is PASS."),
    ],
    # Answers in plain text without calling a tool.
    "AGENT-TEXT": [{"text": "Plainly, my answer is PASS."}],
}


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    return next(_text_parts(m) for m in messages if m.get("role") == "user")


def plain_answer(question: str, model: str, agentic: bool) -> str:
    found = _WORDS.search(question)
    words = found.group(1) if found else "FAIL"
    single, _, agent = words.partition("|AGENT:")
    chosen = agent if agentic and agent else single
    return "" if chosen == "EMPTY" else f"My answer is {chosen} ({model})."


def agent_message(messages: list[dict[str, Any]], model: str, agentic: bool) -> dict[str, Any]:
    question = _first_user_text(messages)
    found = _SCRIPT.search(question)
    if not found:
        return {"role": "assistant", "content": plain_answer(question, model, agentic)}
    script = SCRIPTS[found.group(1)]
    step_index = sum(1 for m in messages if m.get("role") == "assistant")
    step = script[min(step_index, len(script) - 1)]
    if "tool" not in step:
        return {"role": "assistant", "content": step["text"]}
    return {
        "role": "assistant",
        "content": step["text"] or None,
        "tool_calls": [
            {
                "id": f"call_{step_index}",
                "type": "function",
                "function": {"name": step["tool"], "arguments": json.dumps(step["arguments"])},
            }
        ],
    }


def labeler_reply(messages: list[dict[str, Any]]) -> str:
    request = _text_parts(messages[1]) if len(messages) > 1 else _text_parts(messages[0])
    answer_match = _ANSWER.search(request)
    answer = answer_match.group(2) if answer_match else ""
    found = _CAUSE.search(answer)
    cause = found.group(1) if found else "no_committed_answer"
    retrying = len(messages) > 2
    if cause == "NONSENSE" or (cause == "ONCE-NONSENSE" and not retrying):
        return "The main problem is hard to say."
    if cause == "ONCE-NONSENSE":
        cause = "missed_cue"
    if cause == "BY-MODEL":
        tag = _MODEL_TAG.search(answer)
        cause = BY_MODEL[tag.group(1)] if tag else "unknown"
    return f'```json\n{{"cause": "{cause}", "explanation": "scripted"}}\n```'


class Handler(JsonHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length))
        with _log_lock, open(self.log_file, "a") as handle:
            handle.write(json.dumps(body) + "\n")
        model = body.get("model", "")
        messages = body.get("messages", [])
        if "judge" in model:
            message: dict[str, Any] = {"role": "assistant", "content": judge_reply(messages)}
        elif "labeler" in model:
            message = {"role": "assistant", "content": labeler_reply(messages)}
        else:
            message = agent_message(messages, model, bool(body.get("tools")))
        first_turn = json.dumps(messages[:2])
        if "[OUTAGE]" in first_turn and "judge" not in model and "labeler" not in model:
            self._fail(503, "scripted provider outage")
            return
        if any(m.get("role") == "assistant" for m in messages):
            if "[AGENT-BROKEN]" in first_turn:
                # an outage mid-conversation (the tests run with --max-retries 0)
                self._fail(503, "scripted provider failure")
                return
            if "[AGENT-REFUSED]" in first_turn:
                self._fail(400, POLICY_MESSAGE, "content_policy_violation")
                return
        wordy = "[AGENT-WORDY]" in first_turn
        self._reply(model, message, WORDY_OUTPUT_TOKENS if wordy else OUTPUT_TOKENS)

    def _reply(self, model: str, message: dict[str, Any], output_tokens: int) -> None:
        reply = {
            "id": "scripted",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": output_tokens,
                "total_tokens": 10 + output_tokens,
                "completion_tokens_details": {"reasoning_tokens": REASONING_TOKENS},
            },
        }
        self.send_json(reply)

    def _fail(self, status: int, message: str, code: str | None = None) -> None:
        error = {"message": message, "type": "invalid_request_error", "code": code}
        self.send_json({"error": error}, status)


def main() -> None:
    serve(Handler, sys.argv[1], sys.argv[2])


if __name__ == "__main__":
    main()
