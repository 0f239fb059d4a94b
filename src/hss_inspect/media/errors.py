"""The one error type media preparation raises; callers add the task id."""


class MediaError(Exception):
    """A media file that cannot be read, decoded or brought within the limits."""
