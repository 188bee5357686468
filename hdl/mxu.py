"""``MXU``: a ``rows x cols`` weight-stationary systolic matrix unit (DESIGN.md section 7).

Streams (``amaranth.lib.stream``, valid/ready):

* ``w``: one row of the weight tile per transfer (``cols`` values); after ``rows`` rows the
  tile becomes active (the swap) for every ``x`` row accepted from the next cycle on.
* ``x``: one row of X per transfer (``rows`` values), at most one per cycle. With output
  accumulators the payload is a struct: ``data`` (the row), ``addr`` (accumulator row),
  ``first`` (this tile's result loads the accumulator) and ``last`` (the sum leaves on ``y``;
  other rows only update the accumulator and produce no ``y`` row).
* ``y``: one row of ``Y = X . W`` per transfer (``cols`` values), in order.

Each output is ``((+0 + x0*w0) + x1*w1) + ...``: exact products, RNE adds in ``acc_fmt``;
then ``acc = y`` (first tile) or ``acc = acc + y`` (RNE); then the output rounder lanes
(``golden.mxu.mxu``). Backpressure on ``y`` stalls the whole array.
"""

from __future__ import annotations

from amaranth.hdl import EnableInserter, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import BF16, FP32
from golden.ops import convert_sr_bits
from golden.rounding import Rounding

from .adder import FPAdder
from .mxu_pe import ProcessingElement, check_exact_products
from .params import format_param, int_param, rounding_param
from .pipeline import check_stages
from .stochastic_rounder import StochasticRounder
from .xorshift import Xorshift32

__all__ = ["MXU"]

MAX_SIZE = 256
MAX_ACC_DEPTH = 65536


class MXU(wiring.Component):
    """Weight-stationary systolic array; see the module docstring.

    Parameters (keyword-only)
    -------------------------
    rows, cols : int
        K (reduction depth) and N, 1..256 each.
    in_fmt, acc_fmt : FloatFormat or str
        Multiplier inputs (default bf16) and accumulation (default fp32); ``acc_fmt`` must
        hold every product exactly.
    convert_inputs : bool
        ``x`` and ``w`` arrive in ``acc_fmt`` and are rounded to ``in_fmt`` (RNE) on entry.
    out_rounding : Rounding or str, optional
        None: ``y`` in ``acc_fmt``. Else ``y`` is rounded to ``in_fmt`` by one rounder lane
        per column (``rne``, ``rtz``, ``sr``, ``sr-half``); stochastic lanes take the top bits of
        xorshift lane ``j``, which steps once per ``y`` row (ports ``seed``, ``seed_load``).
    sr_bits : int, optional
        Random bits per ``sr`` output rounding (default: every discarded bit).
    acc_depth : int
        Output accumulator rows: 0 (none) or a power of two, 2..65536.
    mul_stages, add_stages : int
        Register stages of every processing element's multiplier and adder, 0..16.
    """

    def __init__(self, *, rows, cols, in_fmt=BF16, acc_fmt=FP32, convert_inputs=False, out_rounding=None,
                 sr_bits=None, acc_depth=0, mul_stages=0, add_stages=0):
        self.rows = int_param("rows", rows, 1, MAX_SIZE)
        self.cols = int_param("cols", cols, 1, MAX_SIZE)
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.acc_fmt = format_param("acc_fmt", acc_fmt)
        check_exact_products(self.in_fmt, self.acc_fmt)
        if not isinstance(convert_inputs, bool):
            raise TypeError(f"convert_inputs must be True or False, not {convert_inputs!r}")
        self.convert_inputs = convert_inputs
        self.out_rounding = None if out_rounding in (None, "none") else \
            rounding_param(out_rounding, name="out_rounding")
        if self.out_rounding is None and sr_bits is not None:
            raise ValueError(f"sr_bits={sr_bits} needs a stochastic out_rounding (sr, sr-half), not none")
        self.rand_bits = None if self.out_rounding is None else \
            convert_sr_bits(self.acc_fmt, self.in_fmt, self.out_rounding, sr_bits)
        self.sr_bits = sr_bits
        self.acc_depth = int_param("acc_depth", acc_depth, 0, MAX_ACC_DEPTH)
        if self.acc_depth == 1 or self.acc_depth & (self.acc_depth - 1):
            raise ValueError(f"acc_depth must be 0 or a power of two in 2..{MAX_ACC_DEPTH}, not {self.acc_depth}")
        self.mul_stages = check_stages(mul_stages)
        self.add_stages = check_stages(add_stages)

        row = lambda n, fmt: data.ArrayLayout(unsigned(fmt.width), n)
        in_port_fmt = self.acc_fmt if convert_inputs else self.in_fmt
        x_layout = row(self.rows, in_port_fmt)
        if self.acc_depth:
            x_layout = data.StructLayout({"data": x_layout, "addr": unsigned(self.acc_addr_width),
                                          "first": unsigned(1), "last": unsigned(1)})
        ports = {
            "w": In(stream.Signature(row(self.cols, in_port_fmt))),
            "x": In(stream.Signature(x_layout)),
            "y": Out(stream.Signature(row(self.cols, self.out_fmt))),
        }
        if self.rand_bits is not None:
            ports.update(seed=In(32), seed_load=In(1))
        super().__init__(ports)

    @property
    def out_fmt(self):
        """The format of ``y``: ``in_fmt`` with output rounding, else ``acc_fmt``."""
        return self.acc_fmt if self.out_rounding is None else self.in_fmt

    @property
    def acc_addr_width(self) -> int:
        """Width of ``x.payload.addr`` (``log2(acc_depth)``)."""
        return max(self.acc_depth - 1, 0).bit_length()

    @property
    def psum_latency(self) -> int:
        """Cycles a partial sum spends in one processing element."""
        return self.add_stages + 1

    @property
    def latency(self) -> int:
        """Cycles from accepting an ``x`` row to offering its ``y`` row, without stalls:
        ``rows * (add_stages + 1) + mul_stages + cols - 1`` (input conversion, accumulators
        and output rounders add no register)."""
        return self.rows * self.psum_latency + self.mul_stages + self.cols - 1

    def _converted(self, m, values, name):
        """``values`` (a payload array) as ``in_fmt`` encodings, RNE from ``acc_fmt`` if asked."""
        if not self.convert_inputs:
            return list(values)
        out = []
        for i, value in enumerate(values):
            conv = StochasticRounder(in_fmt=self.acc_fmt, out_fmt=self.in_fmt, rounding=Rounding.NEAREST_EVEN)
            m.submodules[f"{name}_convert{i}"] = conv
            m.d.comb += [conv.a.eq(value), conv.valid_in.eq(1)]
            out.append(conv.result)
        return out

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
        w_row = self._converted(m, self.w.payload, "w")
        x_row = self._converted(m, self.x.payload.data if self.acc_depth else self.x.payload, "x")

        core = Module()   # everything that stops when the array stalls
        pes = [[ProcessingElement(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, mul_stages=self.mul_stages,
                                  add_stages=self.add_stages) for _ in range(n_cols)] for _ in range(k_rows)]
        for k in range(k_rows):
            # Skew: row k's activation waits k * lp cycles, with its buffer tag.
            x, sel = x_row[k], active
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
                                pe.w_buf.eq(~active), pe.w_data.eq(w_row[j])]
                x, sel = pe.x_out, pe.sel_out
        # De-skew: column j waits cols - 1 - j cycles.
        psums = []
        for j in range(n_cols):
            out = pes[-1][j].psum_out
            for d in range(n_cols - 1 - j):
                r = Signal(self.acc_fmt.width, name=f"deskew{j}_{d}")
                core.d.sync += r.eq(out)
                out = r
            psums.append(out)
        # The row's valid (and accumulator control) travels the full latency.
        tag_layout = data.StructLayout({"valid": 1, **({"addr": self.acc_addr_width, "first": 1, "last": 1}
                                                      if self.acc_depth else {})})
        tag = Signal(tag_layout)
        m.d.comb += tag.valid.eq(self.x.valid & self.x.ready)
        if self.acc_depth:
            m.d.comb += [tag.addr.eq(self.x.payload.addr), tag.first.eq(self.x.payload.first),
                         tag.last.eq(self.x.payload.last)]
        for d in range(self.latency):
            r = Signal(tag_layout, name=f"tag_{d}")
            core.d.sync += r.eq(tag)
            tag = r
        m.submodules.core = EnableInserter(advance)(core)

        results = self._accumulate(m, psums, tag) if self.acc_depth else psums
        m.d.comb += self.y.valid.eq(tag.valid & (tag.last if self.acc_depth else 1))
        for j, value in enumerate(self._round_outputs(m, results)):
            m.d.comb += self.y.payload[j].eq(value)
        return m

    def _accumulate(self, m, psums, tag):
        """``acc[addr] = y`` (first tile) or ``acc[addr] + y``; the sum is the result.

        The read-add-write completes in the row's output cycle (asynchronous read, one
        combinational adder per column), so back-to-back rows to one address need no
        forwarding. A row that is not ``last`` offers no ``y``, so it never stalls.
        """
        m.submodules.acc = acc = memory.Memory(
            shape=data.ArrayLayout(unsigned(self.acc_fmt.width), self.cols), depth=self.acc_depth, init=[])
        read, write = acc.read_port(domain="comb"), acc.write_port()
        m.d.comb += [read.addr.eq(tag.addr), write.addr.eq(tag.addr), write.en.eq(tag.valid & ~tag.last)]
        sums = []
        for j, psum in enumerate(psums):
            m.submodules[f"acc_add{j}"] = add = FPAdder(fmt=self.acc_fmt)
            m.d.comb += [add.a.eq(read.data[j]), add.b.eq(psum), add.valid_in.eq(1)]
            total = Signal(self.acc_fmt.width, name=f"acc_sum{j}")
            m.d.comb += [total.eq(Mux(tag.first, psum, add.result)), write.data[j].eq(total)]
            sums.append(total)
        return sums

    def _round_outputs(self, m, values):
        """The output rounder lanes (or ``values`` unchanged without output rounding)."""
        if self.out_rounding is None:
            return values
        rand = [None] * self.cols
        if self.rand_bits is not None:
            m.submodules.xorshift = xs = Xorshift32(lanes=self.cols)
            m.d.comb += [xs.seed.eq(self.seed), xs.load.eq(self.seed_load),
                         xs.next.eq(self.y.valid & self.y.ready)]
            rand = [xs.value[j][32 - self.rand_bits:] for j in range(self.cols)]
        out = []
        for j, value in enumerate(values):
            m.submodules[f"round{j}"] = rounder = StochasticRounder(
                in_fmt=self.acc_fmt, out_fmt=self.in_fmt, rounding=self.out_rounding, sr_bits=self.sr_bits, rng=False)
            m.d.comb += [rounder.a.eq(value), rounder.valid_in.eq(1)]
            if rand[j] is not None:
                m.d.comb += rounder.rand.eq(rand[j])
            out.append(rounder.result)
        return out
