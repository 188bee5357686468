"""``MXU``: a ``rows x cols`` weight-stationary systolic matrix unit (datasheet: docs/mxu.md;
its control, bound anchor and output side: control.py, accumulation/bound_anchor.py, output.py).

Streams (``amaranth.lib.stream``, valid/ready):

* ``w``: one row of a weight tile per transfer (``cols`` values), into the shadow buffer;
  after ``rows`` rows the shadow tile is complete and ``w`` waits for a swap.
* ``x``: one row of X per transfer; the payload is a struct: ``data`` (``rows`` values),
  ``swap`` (the complete shadow tile becomes active from this row on; such a row waits
  until the shadow tile is complete), and with output accumulators ``addr``, ``first``
  (this tile's result loads the accumulator) and ``last`` (the sum leaves on ``y``; other
  rows only update the accumulator and produce no ``y`` row). The first row after reset
  swaps whatever its ``swap`` bit: no row is accepted before a tile.
* ``y``: one row of ``Y = X . W`` per transfer (``cols`` values), in order.

Each output is ``((+0 + x0*w0) + x1*w1) + ...``: exact products, RNE adds in ``acc_fmt``
(or, with a column ``accumulator``, golden.column's window sum, rounded at its normalisation
points and once at the end of each column);
then ``acc = y`` (first tile) or ``acc = acc + y`` (RNE); then the output rounder lanes
(``golden.mxu``). The array never stalls: rows that leave it go into an output FIFO, and
``x`` is admitted only with a free FIFO slot (credits), so ``y.ready`` drives only the
FIFO's fabric registers (``hdl.mxu.output_fifo``) and the credits. ``flags`` holds, per column, the OR of the five flags of every multiply,
add, accumulator add and output rounding of the rows that left the array since the last
``flags_clear``.
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Cat, ClockSignal, Instance, Module, ResetSignal, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import BF16, FP32
from golden.ops import convert_sr_bits

from ..adder import FPAdder
from ..ecp5_bram import MAX_DEPTH as FIFO_ECP5_DEPTH
from ..ecp5_dsp import dsp_param
from ..params import check_exact_products, choice_param, format_param, int_param, rounding_param
from .accumulation import resolve_accumulation
from .control import controller, credits, row_tags
from .element import ElementPlan, ProcessingElement, check_pe_stages
from .output import output
from .output_fifo import RAMS as FIFO_RAMS, fifo_latency

__all__ = ["MXU", "MXUPlan"]

MAX_SIZE = 256
MAX_ACC_DEPTH = 65536


class MXUPlan:
    """An ``MXU``'s checked parameters (keyword-only, as the array's) and the facts that follow
    from them (latencies, depths, the element's and the column's plans), without its hardware."""

    def __init__(self, *, rows, cols, in_fmt=BF16, acc_fmt=FP32, convert_inputs=False, out_rounding=None,
                 sr_bits=None, acc_depth=0, mul_stages=0, add_stages=0, fused_pe=True, axi_stream=False,
                 accumulator=None, mul_dsp="inferred", fifo_ram="block"):
        self.rows = int_param("rows", rows, 1, MAX_SIZE)
        self.cols = int_param("cols", cols, 1, MAX_SIZE)
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.acc_fmt = format_param("acc_fmt", acc_fmt)
        check_exact_products(self.in_fmt, self.acc_fmt)
        for name, value in (("convert_inputs", convert_inputs), ("fused_pe", fused_pe), ("axi_stream", axi_stream)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, not {value!r}")
        self.axi_stream = axi_stream
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
        self.fused_pe = fused_pe
        self.accumulation = resolve_accumulation("accumulator", accumulator)
        self.accumulation.check(self.in_fmt, self.acc_fmt, fused_pe)
        self.mul_stages, self.add_stages = check_pe_stages(self.in_fmt, self.acc_fmt, mul_stages, add_stages,
                                                           fused_pe, self.accumulation, self.rows)
        self.mul_dsp = dsp_param(mul_dsp, self.in_fmt)
        self.fifo_ram = choice_param("fifo_ram", fifo_ram, FIFO_RAMS)

        if self.fifo_ram == "ecp5" and self.fifo_depth > FIFO_ECP5_DEPTH:
            raise ValueError(f"fifo_ram='ecp5' holds at most {FIFO_ECP5_DEPTH} rows (one DP16KD's 36-bit rows), "
                             f"and this array needs fifo_depth {self.fifo_depth} (latency {self.latency}): "
                             "use fifo_ram block or lut, or fewer rows or stages")

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
        """Cycles a partial sum spends in one processing element: ``add_stages + 1``, less
        ``sum_wait``."""
        return self._element.psum_latency

    @property
    def sum_wait(self) -> int:
        """Cycles an element's product waits for the partial sum (``ProcessingElement``'s
        ``sum_wait``: with a bound anchor and no normalisation points, the product's
        alignment before the add; else 0)."""
        return self._element.sum_wait

    @property
    def _element(self) -> ElementPlan:
        """The plan of the processing elements (``processing_element()``'s), for their timing."""
        if not hasattr(self, "_element_plan"):
            self._element_plan = ElementPlan(**self._element_params())
        return self._element_plan

    def _element_params(self) -> dict:
        """The processing elements' parameters (``ProcessingElement``'s)."""
        return {"in_fmt": self.in_fmt, "acc_fmt": self.acc_fmt, "mul_stages": self.mul_stages,
                "add_stages": self.add_stages, "fused": self.fused_pe, "accumulator": self.accumulation,
                "terms": self.rows, "mul_dsp": self.mul_dsp}

    @property
    def accumulator(self):
        """golden's description of the column sum (``Accumulation.golden``): None or a
        ``ColumnAccumulator``."""
        return self.accumulation.golden

    @property
    def column(self):
        """The accumulation planned for this array (``Accumulation.column``): its latencies and
        the logic at the top, on the way and at the edge of each column."""
        if not hasattr(self, "_column"):
            self._column = self.accumulation.column(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, rows=self.rows,
                                                    cols=self.cols, mul_stages=self.mul_stages, element=self._element)
        return self._column

    @property
    def point_rows(self) -> list[int]:
        """The rows with a normalisation point above them (``G, 2G, ... < rows``)."""
        return self.column.point_rows

    @property
    def point_latency(self) -> int:
        """Cycles a partial sum spends in one normalisation point (0 without any)."""
        return self.column.point_latency

    @property
    def array_latency(self) -> int:
        """Cycles from accepting an ``x`` row to its leaving the array (into the output
        FIFO, the accumulators and the sticky flags): ``rows * psum_latency + mul_stages +
        sum_wait + round_stages + result_register + cols + points * point_latency +
        anchor_wait`` (the entry register, skew, processing elements, normalisation points,
        column rounders and their result registers, de-skew, the column anchor's wait)."""
        return (self.rows * self.psum_latency + len(self.point_rows) * self.point_latency + self.mul_stages
                + self.sum_wait + self.round_stages + self.result_register + self.cols + self.anchor_wait)

    @property
    def result_register(self) -> int:
        """Registers after each column's edge rounder (0 without one)."""
        return self.column.result_register

    @property
    def anchor_wait(self) -> int:
        """Cycles the rows wait before the array for the column's anchor (0 without one)."""
        return self.column.anchor_wait

    @property
    def round_stages(self) -> int:
        """Register stages of each column's edge rounder (0 without one)."""
        return self.column.round_stages

    @property
    def latency(self) -> int:
        """Cycles from accepting an ``x`` row to offering its ``y`` row, without stalls:
        ``array_latency + fifo_latency`` (input conversion, accumulators and output rounders
        add no register)."""
        return self.array_latency + self.fifo_latency

    @property
    def fifo_latency(self) -> int:
        """Cycles a row spends in the output FIFO without stalls: 5 (its level, its read
        decision, its memory's read register, its queue and the ``y`` register); 6 with
        ``fifo_ram="ecp5"``, whose block RAMs' output registers add one."""
        return fifo_latency(self.fifo_ram)

    @property
    def fifo_depth(self) -> int:
        """Output FIFO rows (credits): the smallest power of two >= ``latency + 2``.

        A credit is taken when a ``y``-producing row is accepted and returned a cycle after
        its ``y`` row is transferred, ``latency + 1`` cycles later at the earliest;
        ``x.ready`` is a function of the registered credit count, so full rate needs
        ``latency + 2``.
        """
        return 1 << (self.latency + 1).bit_length()

    @property
    def drain_cycles(self) -> int:
        """Cycles after a swap row is accepted during which rows before it may still read
        the old tile (the last, row ``rows - 1`` of column ``cols - 1``, in the last of them):
        ``w.ready`` stays low for them (``(rows - 1) * psum_latency + points *
        point_latency + cols - 1 + anchor_wait``)."""
        return self.column.row_skew(self.rows - 1) + self.cols - 1 + self.anchor_wait


class MXU(MXUPlan, wiring.Component):
    """Weight-stationary systolic array; see the module docstring and docs/mxu.md.

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
        Register stages of every processing element's multiplier (0..7; 0..9 unfused) and
        adder (0..21 in fp32).
    fused_pe : bool
        Processing elements whose multiplier hands its adder the raw exact product (default;
        ``mxu_pe.ProcessingElement``), or the generic multiplier and adder (``False``): the
        same bits.
    axi_stream : bool
        Name the streams in the AXI4-Stream convention: ``s_axis_w_*``, ``s_axis_x_*``
        (``tdata`` the row, ``tuser`` the other ``x`` fields) and ``m_axis_y_*``.
    accumulator : str or ColumnAccumulator, optional
        ``"fp32"`` (default): every processing element rounds its add (RNE). A column
        accumulator (``"column:w=W[,g=G][,sticky][,anchor=A]"``, golden.column): the
        elements carry a fixed-point window down each column and one ``WindowRounder`` per
        column rounds it at the array's edge (``round_stages`` registers, chosen by the
        pipeline's delay model to be no slower than the elements); with ``g=G`` a
        ``NormalisationPoint`` per column after every ``G`` rows rounds it and starts a
        fresh window (``point_latency`` cycles).
    mul_dsp : str
        ``inferred`` (default): each element's significand product is a ``*`` that synthesis
        maps. ``ecp5``: an instantiated ECP5 MULT18X18D with its own input and output
        registers (hdl/ecp5_dsp.py; an ECP5-only design, simulated with the model
        ``hdl.build`` writes beside it); the same bits and latency.
    fifo_ram : str
        The output FIFO's memory: ``block`` (default: the synthesis tool's choice, block RAM
        on large arrays) or ``lut`` (LUT RAM, off the block RAM's clock-to-out; hdl/mxu/output_fifo.py):
        the same bits and latency; ``ecp5``: instantiated ECP5 DP16KD block RAMs with their output
        registers (hdl/ecp5_bram.py; an ECP5-only design, simulated with the model ``hdl.build``
        writes beside it), the same bits, ``latency`` one cycle more.
    """

    def __init__(self, **params):
        MXUPlan.__init__(self, **params)
        row = lambda n, fmt: data.ArrayLayout(unsigned(fmt.width), n)
        in_port_fmt = self.acc_fmt if self.convert_inputs else self.in_fmt
        x_fields = {"data": row(self.rows, in_port_fmt), "swap": unsigned(1)}
        if self.acc_depth:
            x_fields.update(addr=unsigned(self.acc_addr_width), first=unsigned(1), last=unsigned(1))
        self._streams = {"w": stream.Signature(row(self.cols, in_port_fmt)),
                         "x": stream.Signature(data.StructLayout(x_fields)),
                         "y": stream.Signature(row(self.cols, self.out_fmt))}
        if self.axi_stream:
            ports = {}
            for name, sig in self._streams.items():
                port, inward = (f"m_axis_{name}_", Out) if name == "y" else (f"s_axis_{name}_", In)
                outward = Out if inward is In else In
                layout = sig.members["payload"].shape
                if name == "x":
                    ports.update({port + "tdata": In(layout["data"].shape),
                                  port + "tuser": In(layout.size - layout["data"].shape.size)})
                else:
                    ports[port + "tdata"] = inward(layout)
                ports.update({port + "tvalid": inward(1), port + "tready": outward(1)})
        else:
            ports = {name: (Out if name == "y" else In)(sig) for name, sig in self._streams.items()}
        ports.update(flags=Out(data.ArrayLayout(unsigned(5), self.cols)), flags_clear=In(1))
        if self.rand_bits is not None:
            ports.update(seed=In(32), seed_load=In(1))
        wiring.Component.__init__(self, ports)

    @classmethod
    def plan(cls, **params) -> MXUPlan:
        """The array's plan for ``params`` (its keyword parameters, checked as the array
        checks them): its facts without building the component."""
        return MXUPlan(**params)

    def _stream_ports(self, m):
        """The ``w``, ``x``, ``y`` streams, wired to the AXI4-Stream ports if asked."""
        if not self.axi_stream:
            return self.w, self.x, self.y
        w, x = self._streams["w"].create(), self._streams["x"].create()
        y = self._streams["y"].flip().create()
        m.d.comb += [
            w.payload.eq(self.s_axis_w_tdata), w.valid.eq(self.s_axis_w_tvalid), self.s_axis_w_tready.eq(w.ready),
            x.payload.eq(Cat(self.s_axis_x_tdata, self.s_axis_x_tuser)), x.valid.eq(self.s_axis_x_tvalid),
            self.s_axis_x_tready.eq(x.ready),
            self.m_axis_y_tdata.eq(y.payload), self.m_axis_y_tvalid.eq(y.valid), y.ready.eq(self.m_axis_y_tready),
        ]
        return w, x, y

    def elaborate(self, platform):
        m = Module()
        # The control state, for formal harnesses (sim.formal.stream_mxu) to state invariants over.
        self.internals = SimpleNamespace()
        w_in, x_in, y_out = self._stream_ports(m)
        out_fifo, take, free_next = credits(self, m, x_in, y_out)
        x_row, x_sel, w_writes, tile = controller(self, m, w_in, x_in, take, free_next)
        psums, col_flags = self._array(m, x_row, x_sel, w_writes, tile)
        tag = row_tags(self, m, x_in, take)
        output(self, m, out_fifo, y_out, psums, col_flags, tag, platform)
        return m

    def _array(self, m, x_row, x_sel, w_writes, tile):
        """The processing elements with their entry, skew and de-skew registers, and the
        column's own logic (``column``: top, normalisation points, edge); advances every
        cycle. Returns each column's sum and flags as they leave, aligned."""
        k_rows, n_cols, column = self.rows, self.cols, self.column
        pes = [[self._processing_element(m, k, j) for j in range(n_cols)] for k in range(k_rows)]
        self.internals.pes = pes
        for k in range(k_rows):
            # Entry and skew: row k's activation waits 1 + anchor_wait + row_skew(k) cycles,
            # with its buffer tag. The entry register (row 0 too) lets the array start from
            # flip-flops rather than from the controller's swap logic.
            x, sel = x_row[k], x_sel
            for d in range(1 + self.anchor_wait + column.row_skew(k)):
                x_r, sel_r = Signal(self.in_fmt.width, name=f"skew{k}_{d}"), Signal(name=f"skew{k}_{d}_sel")
                m.d.sync += [x_r.eq(x), sel_r.eq(sel)]
                x, sel = x_r, sel_r
            for j in range(n_cols):
                pe = pes[k][j]
                above = pes[k - 1][j] if k else None
                fed = k in column.point_rows          # by a normalisation point (column.connect)
                m.d.comb += [pe.x_in.eq(x), pe.sel_in.eq(sel),
                             *([] if fed else [pe.flags_in.eq(above.flags_out if above else 0)]),
                             pe.w_we.eq(w_writes[k][j].we & (w_writes[k][j].row == k)),
                             pe.w_buf.eq(w_writes[k][j].buf), pe.w_data.eq(w_writes[k][j].data)]
                if above is not None and not fed:
                    m.d.comb += pe.psum_in.eq(above.psum_out)
                elif above is None:
                    column.start(m, pe)
                x, sel = pe.x_out, pe.sel_out
        column.connect(m, x_row, pes, tile, self._normalisation_point)
        # De-skew: column j waits cols - 1 - j cycles (after its edge, if any).
        psums, col_flags = [], []
        for j in range(n_cols):
            out, flags = column.finish(m, pes[-1][j].psum_out, pes[-1][j].flags_out, j, self.column_rounder)
            for d in range(n_cols - 1 - j):
                r, f = Signal(self.acc_fmt.width, name=f"deskew{j}_{d}"), Signal(5, name=f"deskew{j}_{d}_flags")
                m.d.sync += [r.eq(out), f.eq(flags)]
                out, flags = r, f
            psums.append(out)
            col_flags.append(flags)
        return psums, col_flags

    def processing_element(self) -> ProcessingElement:
        """One of the array's (identical) processing elements, unelaborated."""
        return ProcessingElement(**self._element_params())

    def shared_parts(self) -> dict:
        """The parts a build converts once as Verilog modules of their own: name -> (the
        component's factory, ``use(module, reset, signature)``: instantiate that module, with
        an ``rst`` port if ``reset``, and ports as the built part's ``signature``, wherever the
        part is used). The processing element (``pe``), and
        the column's own (``Column.parts``: ``point``, a normalisation point)."""
        def use(attribute):
            return lambda module, reset, signature: setattr(self, attribute, (module, reset, signature))
        parts = {"pe": (self.processing_element, use("_pe_module"))}
        parts.update({name: (getattr(self, factory), use(f"_{name}_module"))
                      for name, factory in self.column.parts().items()})
        return parts

    _pe_module = _point_module = None

    def _normalisation_point(self, m, k, j):
        """The normalisation point above element ``(k, j)``, added to ``m`` (as
        ``_processing_element``)."""
        return self._instance(m, f"point_{k}_{j}", self.normalisation_point, self._point_module)

    def _processing_element(self, m, k, j):
        """Processing element ``(k, j)`` added to ``m``: the component, or an instance of
        ``shared_parts``' module with a signal per port."""
        return self._instance(m, f"pe_{k}_{j}", self.processing_element, self._pe_module)

    @staticmethod
    def _instance(m, name: str, build, module):
        """``build()`` (a component factory) added to ``m`` as submodule ``name``, or, with
        ``module`` (``(Verilog module, has rst, its signature)``), an instance of that module
        with a signal per port."""
        if module is None:
            m.submodules[name] = component = build()
            return component
        module, reset, signature = module
        members = signature.members
        ports = SimpleNamespace(**{n: Signal(member.shape, name=f"{name}_{n}") for n, member in members.items()})
        connections = {("i_" if member.flow == In else "o_") + n: getattr(ports, n) for n, member in members.items()}
        m.submodules[name] = Instance(module, i_clk=ClockSignal(), **({"i_rst": ResetSignal()} if reset else {}),
                                      **connections)
        return ports

    def column_rounder(self):
        """One column's edge rounder (``column.rounder``), unelaborated."""
        return self.column.rounder()

    def normalisation_point(self):
        """One normalisation point (``column.normalisation_point``), unelaborated."""
        return self.column.normalisation_point()

    def accumulator_adder(self):
        """One column's accumulator adder (``acc_fmt``, RNE, combinational), unelaborated."""
        return FPAdder(fmt=self.acc_fmt)
