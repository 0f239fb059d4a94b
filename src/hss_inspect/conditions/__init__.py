"""What the model under evaluation is sent, and how its answer is taken (paper Sec. 3).

- `agentic/`: the agentic condition: the inspection tools and the loop that runs them.
- `solver`: the solvers of the conditions: the user turn, the oracle's answer.
- `prepared_turns`: the user turns a named model is sent, built ahead of its run.
- `rebuild`: the media a logged sample was sent, rebuilt from its record.
- `turn`: the user turn of a sample: media note, media under the model's limits, question.
- `answer`: calling the model: what counts as an answer, a refusal or a provider error.
- `cache_plan`: the prompt-cache plan applied to each request of the model.
- `prompt`: the words the model reads (media notes, the blind control's system message).
- `preflight`: the checks made before any model is called, by the task and by `estimate`.
"""
