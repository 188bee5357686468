"""``MXU``: a ``rows x cols`` weight-stationary systolic matrix unit: the array of processing
elements with its entry, skew and de-skew (datasheet: docs/mxu.md; options: config.py; ports:
streams.py; control and output side: control.py, output.py; how a column sums: accumulation/).

Streams (valid/ready): ``w``, a weight tile's row per transfer into the shadow buffer; ``x``,
a row of X (``data``, ``swap``: the complete shadow tile becomes active from this row on,
and with output accumulators ``addr``, ``first``, ``last``), the first row after reset
swapping whatever its bit; ``y``, a row of ``Y = X . W`` per transfer, in order. The array
never stalls: rows leave it into an output FIFO, and ``x`` is admitted only with a free FIFO
slot (credits), so ``y.ready`` drives only the FIFO's fabric registers and the credits.
``flags`` holds, per column, the OR of the flags of every operation of the rows that left
the array since the last ``flags_clear``. The bits are ``golden.mxu``'s.
"""

from __future__ import annotations

from dataclasses import fields
from types import SimpleNamespace

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ..adder import FPAdder
from ..ecp5_bram import MAX_DEPTH as FIFO_ECP5_DEPTH
from ..timing import unused
from .config import MXUFunction, MXUImplementation, resolve
from .control import controller, credits, row_tags
from .element import ProcessingElement
from .output import output
from .output_fifo import fifo_latency
from .streams import axi_streams, ports, streams

__all__ = ["MXU"]


class MXU(wiring.Component):
    """Weight-stationary systolic array; see the module docstring and docs/mxu.md.

    Parameters (keyword-only)
    -------------------------
    function, implementation : MXUFunction, MXUImplementation, optional
        What the array computes and how it is built (``config.resolve``), or instead:
    **options
        The options of ``config.OPTIONS`` (docs/mxu.md's table), resolved once: ``rows`` and
        ``cols`` (required), ``in_fmt``, ``acc_fmt``, ``convert_inputs``, ``out_rounding``,
        ``sr_bits``, ``acc_depth``, ``accumulator`` (a spelling, or an ``Accumulation`` of
        hdl/mxu/accumulation/), ``mul_stages``, ``add_stages``, ``fused_pe``, ``axi_stream``,
        ``mul_dsp``, ``fifo_ram``.

    Every option is also an attribute (``rows``, ``accumulation``, ...), as resolved.
    """

    def __init__(self, *, function: MXUFunction | None = None, implementation: MXUImplementation | None = None,
                 **options):
        if (function is None) != (implementation is None) or (function is not None and options):
            raise TypeError("MXU takes function and implementation together, or the options, not both")
        if function is None:
            function, implementation = resolve(**options)
        self.function, self.implementation = function, implementation
        for config in (function, implementation):
            for f in fields(config):
                setattr(self, f.name, getattr(config, f.name))
        self.out_fmt, self.acc_addr_width = function.out_fmt, function.acc_addr_width
        # The column's facts (Column: point_rows, point_latency, round_stages, result_register,
        # anchor_wait), as attributes of the array.
        self.column = self.accumulation.column(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, rows=self.rows,
                                               cols=self.cols, mul_stages=self.mul_stages, element=self._element)
        for name in ("point_rows", "point_latency", "round_stages", "result_register", "anchor_wait"):
            setattr(self, name, getattr(self.column, name))
        self._streams = streams(function, self.acc_addr_width, self.out_fmt)
        super().__init__(ports(function, self.axi_stream, self._streams))
        if self.fifo_ram == "ecp5" and self.fifo_depth > FIFO_ECP5_DEPTH:
            raise ValueError(f"fifo_ram='ecp5' holds at most {FIFO_ECP5_DEPTH} rows (one DP16KD's 36-bit rows), "
                             f"and this array needs fifo_depth {self.fifo_depth} (latency {self.latency}): "
                             "use fifo_ram block or lut, or fewer rows or stages")

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
    def _element(self) -> ProcessingElement:
        """A probe of the processing element (``processing_element()``), for its timing."""
        if not hasattr(self, "_probe_element"):
            self._probe_element = MXU.processing_element(self)  # the real element, also where a subclass abstracts it
            unused(self._probe_element)
        return self._probe_element

    @property
    def accumulator(self):
        """golden's description of the column sum (``Accumulation.golden``): None or a
        ``ColumnAccumulator``."""
        return self.accumulation.golden

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

    def elaborate(self, platform):
        m = Module()
        # The control state, for formal harnesses (sim.formal.stream_mxu) to state invariants over.
        self.internals = SimpleNamespace()
        w_in, x_in, y_out = axi_streams(m, self, self._streams) if self.axi_stream else (self.w, self.x, self.y)
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
        return ProcessingElement(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, mul_stages=self.mul_stages,
                                 add_stages=self.add_stages, fused=self.fused_pe, accumulator=self.accumulation,
                                 terms=self.rows, mul_dsp=self.mul_dsp)

    def shared_parts(self) -> dict:
        """The parts a build converts once as Verilog modules of their own: name -> (the
        component's factory, ``use(module, reset)``: instantiate that module, with an ``rst``
        port if ``reset``, wherever the part is used). The processing element (``pe``), and
        the column's own (``Column.parts``: ``point``, a normalisation point)."""
        def use(attribute):
            return lambda module, reset: setattr(self, attribute, (module, reset))
        parts = {"pe": (self.processing_element, use("_pe_module"))}
        parts.update({name: (getattr(self, factory), use(f"_{name}_module"))
                      for name, factory in self.column.parts().items()})
        return parts

    _pe_module = _point_module = None

    def _normalisation_point(self, m, k, j):
        """The normalisation point above element ``(k, j)``, added to ``m`` (as
        ``_processing_element``)."""
        return self._instance(m, f"point_{k}_{j}", self.normalisation_point(), self._point_module)

    def _processing_element(self, m, k, j):
        """Processing element ``(k, j)`` added to ``m``: the component, or an instance of
        ``shared_parts``' module with a signal per port."""
        return self._instance(m, f"pe_{k}_{j}", self.processing_element(), self._pe_module)

    @staticmethod
    def _instance(m, name: str, component, module):
        """``component`` added to ``m`` as submodule ``name``, or, with ``module`` (``(Verilog
        module, has rst)``), an instance of that module with a signal per port."""
        if module is None:
            m.submodules[name] = component
            return component
        module, reset = module
        unused(component)                               # only its signature is used
        members = component.signature.members
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
