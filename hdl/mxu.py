"""``MXU``: a ``rows x cols`` weight-stationary systolic matrix unit (first step of issue 4).

Streams (``amaranth.lib.stream``, valid/ready):

* ``w``: one row of the weight tile per transfer (``cols`` values); after ``rows`` rows the
  tile becomes active (the swap) for every ``x`` row accepted from the next cycle on.
* ``x``: one row of X per transfer (``rows`` values), at most one per cycle.
* ``y``: one row of ``Y = X . W`` per transfer (``cols`` values in ``acc_fmt``), in order.

Each output is ``((+0 + x0*w0) + x1*w1) + ...``: exact products, RNE adds in ``acc_fmt``
(``golden.mxu.matmul``). Backpressure on ``y`` stalls the whole array. Not yet here:
``convert_inputs``, ``out_rounding`` lanes and the tile accumulators.
"""

from __future__ import annotations

from amaranth.hdl import EnableInserter, Module, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import BF16, FP32

from .mxu_pe import ProcessingElement, check_exact_products
from .params import format_param, int_param
from .pipeline import check_stages

__all__ = ["MXU"]

MAX_SIZE = 256


class MXU(wiring.Component):
    """Weight-stationary systolic array; see the module docstring.

    Parameters (keyword-only): ``rows`` (K, 1..256), ``cols`` (N, 1..256), ``in_fmt=bf16``,
    ``acc_fmt=fp32``, ``mul_stages=0``, ``add_stages=0``.
    """

    def __init__(self, *, rows, cols, in_fmt=BF16, acc_fmt=FP32, mul_stages=0, add_stages=0):
        self.rows = int_param("rows", rows, 1, MAX_SIZE)
        self.cols = int_param("cols", cols, 1, MAX_SIZE)
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.acc_fmt = format_param("acc_fmt", acc_fmt)
        self.mul_stages = check_stages(mul_stages)
        self.add_stages = check_stages(add_stages)
        check_exact_products(self.in_fmt, self.acc_fmt)
        row = lambda n, fmt: data.ArrayLayout(unsigned(fmt.width), n)
        super().__init__({
            "w": In(stream.Signature(row(self.cols, self.in_fmt))),
            "x": In(stream.Signature(row(self.rows, self.in_fmt))),
            "y": Out(stream.Signature(row(self.cols, self.acc_fmt))),
        })

    @property
    def psum_latency(self) -> int:
        """Cycles a partial sum spends in one processing element."""
        return self.add_stages + 1

    @property
    def latency(self) -> int:
        """Cycles from accepting an ``x`` row to offering its ``y`` row, without stalls:
        ``rows * (add_stages + 1) + mul_stages + cols - 1``."""
        return self.rows * self.psum_latency + self.mul_stages + self.cols - 1

    def elaborate(self, platform):
        m = Module()
        k_rows, n_cols, lp = self.rows, self.cols, self.psum_latency
        advance = Signal()           # the array moves (no stall)
        m.d.comb += advance.eq(~self.y.valid | self.y.ready)

        # Weight loading: rows go into the shadow buffer; the last row swaps.
        active = Signal()
        load_row = Signal(range(k_rows))
        drain = Signal(range(self.latency + 3))   # cycles until no row uses the shadow buffer
        m.d.comb += self.w.ready.eq(advance & (drain == 0))
        m.d.comb += self.x.ready.eq(advance)
        with m.If(advance & (drain != 0)):
            m.d.sync += drain.eq(drain - 1)
        with m.If(self.w.valid & self.w.ready):
            with m.If(load_row == k_rows - 1):
                m.d.sync += [load_row.eq(0), active.eq(~active), drain.eq(self.latency + 2)]
            with m.Else():
                m.d.sync += load_row.eq(load_row + 1)

        core = Module()   # everything that stops when the array stalls
        pes = [[ProcessingElement(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, mul_stages=self.mul_stages,
                                  add_stages=self.add_stages) for _ in range(n_cols)] for _ in range(k_rows)]
        x_valid = self.x.valid & self.x.ready
        for k in range(k_rows):
            # Skew: row k's activation waits k * lp cycles, with its buffer tag.
            x, sel = self.x.payload[k], active
            for d in range(k * lp):
                x_r, sel_r = Signal(self.in_fmt.width, name=f"skew{k}_{d}"), Signal(name=f"skew{k}_{d}_sel")
                core.d.sync += [x_r.eq(x), sel_r.eq(sel)]
                x, sel = x_r, sel_r
            for j in range(n_cols):
                pe = pes[k][j]
                core.submodules[f"pe_{k}_{j}"] = pe
                core.d.comb += [pe.x_in.eq(x), pe.sel_in.eq(sel),
                                pe.psum_in.eq(0 if k == 0 else pes[k - 1][j].psum_out),
                                pe.w_we.eq(self.w.valid & self.w.ready & (load_row == k)),
                                pe.w_buf.eq(~active), pe.w_data.eq(self.w.payload[j])]
                x, sel = pe.x_out, pe.sel_out
        # De-skew: column j waits cols - 1 - j cycles; valid travels the full latency.
        for j in range(n_cols):
            out = pes[-1][j].psum_out
            for d in range(n_cols - 1 - j):
                r = Signal(self.acc_fmt.width, name=f"deskew{j}_{d}")
                core.d.sync += r.eq(out)
                out = r
            m.d.comb += self.y.payload[j].eq(out)
        valid = x_valid
        for d in range(self.latency):
            r = Signal(name=f"valid_{d}")
            core.d.sync += r.eq(valid)
            valid = r
        m.d.comb += self.y.valid.eq(valid)
        m.submodules.core = EnableInserter(advance)(core)
        return m
