"""The agentic condition (paper Sec. 3.3, App. F): the standard turn, then inspection
tools, then one answer.

- `loop`: the conversation as an Inspect solver, within its step, token and image limits.
- `tools`: crop and zoom, more frames of a window, two frames side by side.
- `views`: what the agent has been shown, and the geometry of its crops, pure.
"""
