"""The ways an MXU column sums its products, each an implementation of ``Accumulation``
(base.py): ``Sequential``, and the window sums ``RunningAnchor`` and ``BoundAnchor``
(windowed.py: what they share). ``resolve_accumulation`` is the one resolver of the
``accumulator`` parameter."""

from __future__ import annotations

from golden.column import ColumnAccumulator, accumulator_param

from .base import Accumulation, Column
from .bound import BoundAnchor
from .running import RunningAnchor
from .sequential import Sequential

__all__ = ["Accumulation", "Column", "Sequential", "RunningAnchor", "BoundAnchor", "resolve_accumulation"]

#: The window sums by golden.column's anchor.
WINDOW_SUMS = {"running": RunningAnchor, "bound": BoundAnchor}


def resolve_accumulation(name: str, value) -> Accumulation:
    """``value`` as an ``Accumulation``: itself, or from golden.column's spelling
    (``accumulator_param``: None or ``fp32``, ``column:...``, a ``ColumnAccumulator``);
    errors name ``name``."""
    if isinstance(value, Accumulation):
        return value
    window = accumulator_param(name, value)
    if window is None:
        return Sequential()
    assert isinstance(window, ColumnAccumulator)
    return WINDOW_SUMS[window.anchor](window)
