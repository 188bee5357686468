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

from types import SimpleNamespace

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ..adder import FPAdder
from .control import controller, credits, row_tags
from .element import ProcessingElement
from .output import output
from .plan import MXUPlan
from .streams import axi_streams, ports, streams

__all__ = ["MXU"]


class MXU(MXUPlan, wiring.Component):
    """Weight-stationary systolic array: its plan (``MXUPlan``: the options, as objects or
    keywords, and their facts) with ports and hardware; see the module docstring and
    docs/mxu.md."""

    def __init__(self, **params):
        MXUPlan.__init__(self, **params)
        self._streams = streams(self.function, self.acc_addr_width, self.out_fmt)
        wiring.Component.__init__(self, ports(self.function, self.axi_stream, self._streams))

    @classmethod
    def plan(cls, **params) -> MXUPlan:
        """The array's plan for ``params`` (``MXUPlan``'s): its facts without its hardware."""
        return MXUPlan(**params)

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
        column.connect(m, x_row, x_sel, pes, tile, self._normalisation_point)
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
