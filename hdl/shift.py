"""Shifters and the leading-zero count that the adders and rounders share: log-depth
trees of one multiplexer level per step, with the cut points' delays stated by their
callers (``pipeline.Delay``)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Value

from .pipeline import select

__all__ = ["leading_zeros", "lzc_leaves", "lzc_join", "lzc_result", "lzc_depth", "count_width", "shift_steps",
           "halves"]


def leading_zeros(value) -> Value:
    """Leading zero count of ``value`` (its width for 0), a log-depth tree: each level
    joins two halves' (all zero, count) pairs with one mux."""
    return lzc_result(lzc_join(lzc_leaves(value), lzc_depth(len(value))), len(value))


def _lzc_size(w: int) -> int:
    """The count tree's width: ``w`` bits rounded up to a power of two (at least 2)."""
    return 1 << max(1, (w - 1).bit_length())


def lzc_depth(w: int) -> int:
    """Joins from the leaves (bit pairs) to the root of the count tree of ``w`` bits."""
    return _lzc_size(w).bit_length() - 2


def lzc_leaves(value) -> list:
    """The tree's leaves: (all zero, count) of each bit pair, the value padded to a power of two."""
    w, size = len(value), _lzc_size(len(value))
    # Padding below with 1 then 0s keeps the count at w for value 0 without a final mux.
    bits = Cat(Const(1 << (size - w - 1), size - w), value) if size > w else value
    return [(~(bits[i + 1] | bits[i]), ~bits[i + 1]) for i in range(0, size, 2)]


def lzc_join(level: list, times: int) -> list:
    """``times`` levels of the tree: neighbouring (all zero, count) pairs joined."""
    for _ in range(times):
        level = [(lo_zero & hi_zero, select(hi_zero, Cat(lo_count, 1), Cat(hi_count, 0)))
                 for (lo_zero, lo_count), (hi_zero, hi_count) in zip(level[0::2], level[1::2])]
    return level


def lzc_result(level: list, w: int) -> Value:
    """The count at the tree's root (``w`` for an all-zero value)."""
    (zero, count), = level
    return count if _lzc_size(w) > w else select(zero, w, count)


def count_width(w: int) -> int:
    """Width of ``leading_zeros`` of ``w`` bits."""
    size = _lzc_size(w)
    return size.bit_length() - 1 if size > w else w.bit_length()


def shift_steps(value, amount, steps, left=False, sticky=None):
    """``value`` shifted by the bits ``steps`` of ``amount`` (one mux level each), width
    kept; right shifts OR what they drop into ``sticky``."""
    w, signed_value = len(value), Value.cast(value).shape().signed
    for k in steps:
        by, on = 1 << k, amount[k]
        if not left:
            sticky = sticky | (on & value[:min(by, w)].any())
        # A signed value shifts right arithmetically: its sign bit fills.
        fill = value[-1].replicate(min(by, w)) if signed_value else Const(0, min(by, w))
        shifted = (value << by)[:w] if left else Cat(value[by:] if by < w else Const(0, 0), fill)
        # Gates, not a multiplexer: the filled bits would be a register's inferred reset.
        value = select(on, shifted, value)[:w]
    return (value.as_signed() if signed_value else value), sticky


def halves(n: int) -> tuple[list[int], list[int]]:
    """A shift amount's ``n`` bits as the shifter's two halves (upper steps first)."""
    return list(range(n - 1, n // 2 - 1, -1)), list(range(n // 2 - 1, -1, -1))
