"""Humanity's Sixth Sense (HSS) for Inspect AI."""

from hss_inspect.task import hss

__all__ = ["hss"]
