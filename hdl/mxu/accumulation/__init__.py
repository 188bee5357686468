"""The ways an MXU column sums its products, each an implementation of ``Accumulation``
(base.py): ``Sequential``, and the window sums ``RunningAnchor`` and ``BoundAnchor``
(windowed.py: what they share). ``resolve_accumulation`` is the one resolver of the
``accumulation`` parameter."""

from __future__ import annotations

from golden.column import ColumnAccumulator, accumulation_param, spelling

from .base import Accumulation, Column
from .bound import BoundAnchor
from .bound_adder import BoundWindowAdder, LateBoundWindowAdder
from .exact import ExactAnchor
from .running import RunningAnchor
from .sequential import Sequential
from .window_adder import TERMS, RunningWindowAdder, WindowAdder

__all__ = ["Accumulation", "Column", "Sequential", "RunningAnchor", "BoundAnchor", "ExactAnchor", "resolve_accumulation",
           "window_adder_for", "COLUMN_SPELLING", "WINDOW_SUMS"]

#: The window sums the hardware builds, by golden.column's anchor.
WINDOW_SUMS = {"running": RunningAnchor, "bound": BoundAnchor, "exact": ExactAnchor}
#: The column accumulator's spelling with the anchors the hardware builds.
COLUMN_SPELLING = spelling(tuple(WINDOW_SUMS))


def resolve_accumulation(name: str, value) -> Accumulation:
    """``value`` as an ``Accumulation``: itself, or from golden.column's spelling
    (``accumulation_param``: None or ``sequential``, ``column:...``, a ``ColumnAccumulator``);
    errors name ``name``."""
    if isinstance(value, Accumulation):
        return value
    window = accumulation_param(name, value)
    if window is None:
        return Sequential()
    assert isinstance(window, ColumnAccumulator)
    if window.anchor not in WINDOW_SUMS:
        raise ValueError(f"{name} {window}: the hardware builds the anchors {', '.join(WINDOW_SUMS)}, "
                         f"not {window.anchor} (golden models it)")
    return WINDOW_SUMS[window.anchor](window)


def window_adder_for(*, accumulation, term: str = "product", late_sum: bool = False, **params) -> WindowAdder:
    """The window adder that computes ``term`` (``TERMS``) into a window of ``accumulation``
    (a ``ColumnAccumulator``): ``RunningWindowAdder`` where the anchor can move (a running
    anchor, or any rounded term), else the bound anchor's, ``LateBoundWindowAdder`` with
    ``late_sum`` (the anchor on its own port, the window joins at the add) or
    ``BoundWindowAdder``; ``params``: ``WindowAdder``'s."""
    if term not in TERMS:
        raise ValueError(f"term must be one of {', '.join(TERMS)}, not {term!r}")
    if not isinstance(late_sum, bool):
        raise TypeError(f"late_sum must be True or False, not {late_sum!r}")
    moving = getattr(accumulation, "anchor", None) == "running" or term == "rounded"
    if late_sum and moving:
        raise ValueError(f"late_sum needs an anchor that cannot move (anchor=bound, term=product), not "
                         f"anchor={getattr(accumulation, 'anchor', None)}, term={term}")
    if moving:
        return RunningWindowAdder(accumulation=accumulation, term=term, **params)
    return (LateBoundWindowAdder if late_sum else BoundWindowAdder)(accumulation=accumulation, **params)
