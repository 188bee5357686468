"""``RunningAnchor``: each column segment's window anchored at the largest exponent seen so
far (golden.column's ``anchor=running``): every element compares and may move the window."""

from __future__ import annotations

from .window_adder import RunningWindowAdder
from .windowed import WindowAccumulation

__all__ = ["RunningAnchor"]


class RunningAnchor(WindowAccumulation):
    """The window sum with a running anchor: the elements' ``RunningWindowAdder``; the
    column starts from the empty window."""

    adder_class = RunningWindowAdder
