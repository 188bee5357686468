"""The ``MXU``'s bound anchor (golden.column's ``anchor=bound``): each column's window at
the top of the array, anchored at the row's and the tile column's largest exponents.

Each function takes the ``MXU`` being elaborated and its ``Module`` (hdl/mxu/array.py).
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, signed

from golden.formats import FloatFormat

from ...float import FloatLayout
from ...pipeline import delayed, select
from ...rounder import signed_width

__all__ = ["column_anchors", "column_exponent_bounds"]


def _exponent_field(fmt: FloatFormat, value):
    """``value``'s exponent field if it is finite and nonzero (after DAZ), else 0."""
    u = FloatLayout(fmt)(value)
    # A zero's or subnormal's field is 0 already, so only the non-finite are cleared, by
    # the exponent field alone where it can: the mantissa stays off the row maximum's first
    # compare (the harness's x register into it set a placed 12x12's clock). The clearing
    # keeps the anchor golden.column's, but no output shows it: every product of an
    # infinity or NaN is one, so the sums that anchor serves are special whatever it is.
    return u.exponent & (~u.is_inf_or_nan).replicate(fmt.exp_bits)


def _anchor_offset(mxu) -> int:
    """What the bound anchor adds to the two exponent fields: ``1 + acc bias - 2 * in bias``."""
    return 1 + mxu.acc_fmt.bias - 2 * mxu.in_fmt.bias


def _bound_shape(mxu):
    """A tile column's largest exponent field plus the anchor's offset (signed)."""
    offset = _anchor_offset(mxu)
    return signed(signed_width(offset, mxu.in_fmt.exp_max_field + offset))


def column_exponent_bounds(mxu, m: Module, first_writes, w_row):
    """Per weight buffer and column, the largest exponent field of the tile's column
    (``_exponent_field``), kept while the tile is loaded into the shadow buffer:
    ``bounds[buf][j]``.

    Each column's maximum follows its first weight-write register (``first_writes[j]``,
    the row's write a cycle after it is accepted) with the row's exponent field
    registered beside it, so the compare starts at flip-flops by the column rather than
    at the ``w`` port (the column 4x4's critical path). The bound then lands when the
    row's weights land in PE row 0, before a swap row can read it there."""
    # Registers one bit narrower than the anchor's offset sum (their upper bits zero):
    # that sum is then one bit wider than its operand, which Verilator's -Wall accepts
    # (column_anchors); synthesis drops the constant bits.
    width = _bound_shape(mxu).width - 1
    bounds = [[Signal(width, name=f"tile_bound{b}_{j}") for j in range(mxu.cols)] for b in (0, 1)]
    for j, (write, value) in enumerate(zip(first_writes, w_row)):
        e = Signal(width, name=f"w_exp{j}")
        m.d.sync += e.eq(_exponent_field(mxu.in_fmt, value))
        for b in (0, 1):
            with m.If(write.we & (write.buf == b)):     # buffer b is the shadow
                m.d.sync += bounds[b][j].eq(Mux((write.row == 0) | (e > bounds[b][j]), e, bounds[b][j]))
    return bounds


def column_anchors(mxu, m: Module, x_row, pes, tile_bounds):
    """With a bound anchor, each column's window at the top of the array: ``exp`` is
    the anchor of golden.column's ``bound``: the row's largest exponent field plus the
    tile column's (``tile_bounds``, read when the row reaches the column, as its weights
    are), minus twice the input bias, plus one and ``acc_fmt``'s bias, clipped. The window
    arrives with the element's product, ``mul_stages`` cycles after ``x`` enters.

    The row's maximum is a tree over ``x_row`` as it is accepted (before the entry
    register, a cycle ahead of the elements), a register after each compare level (two
    levels in one cycle set a placed 12x12's clock): the levels beyond the multiplier's
    stages are ``anchor_wait``. Every column has a register of its own after the tree's
    root: the root sits by
    the rows, a column's anchor by its first element (a placed 10x10's critical path
    ran from the root to PE (0, 0) in one cycle). The offset joins the tile's bound
    long before the row's maximum arrives: one add after the root. Returns one psum
    input per column."""
    fi, fa = mxu.in_fmt, mxu.acc_fmt
    level = [Signal(fi.exp_bits, name=f"row_exp{k}") for k in range(mxu.rows)]
    m.d.comb += [e.eq(_exponent_field(fi, x)) for e, x in zip(level, x_row)]
    anchored = max(mxu.mul_stages, 1) - 1      # cycles after x enters to the anchor's add
    for d in range(1, mxu.row_max_levels + 1):
        level = [Mux(a > b, a, b) for a, b in zip(level[0::2], level[1::2])] + level[len(level) & ~1:]
        regs = [Signal(fi.exp_bits, name=f"row_max{d}_{i}") for i in range(len(level))]
        m.d.sync += [r.eq(v) for r, v in zip(regs, level)]
        level = regs
    row_max = level[0]
    offset = _anchor_offset(mxu)
    anchors = []
    for j in range(mxu.cols):
        field = Mux(pes[0][j].sel_in, tile_bounds[1][j], tile_bounds[0][j])
        bound = Signal(_bound_shape(mxu), name=f"col_bound{j}")
        # A negative offset as the subtraction of its magnitude: an unsigned operand plus a
        # signed constant would be two bits wider than the operand.
        m.d.comb += bound.eq(field + offset if offset >= 0 else field - -offset)
        bound = delayed(m, bound, anchored, f"col_bound{j}_")
        # row_max is levels - anchor_wait - 1 cycles behind the entry: delay it to column j's add.
        row_max_j = delayed(m, row_max, j + anchored + mxu.anchor_wait + 1 - mxu.row_max_levels,
                            f"row_bound{j}_")
        raw = Signal(signed(signed_width(offset, 2 * fi.exp_max_field + offset)), name=f"anchor_raw{j}")
        m.d.comb += raw.eq(row_max_j + bound)
        top = fa.exp_max_field - 1
        anchor = select(raw[-1], 0, select(raw > top, Const(top, fa.exp_bits), raw[:fa.exp_bits]))
        window = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}")
        m.d.comb += window.exp.eq(anchor)
        if mxu.mul_stages:
            r = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}_r")
            m.d.sync += r.eq(window)
            window = r
        anchors.append(window)
    return anchors
