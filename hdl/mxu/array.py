"""``MXU``: a ``rows x cols`` weight-stationary systolic matrix unit: the array of processing
elements with its entry, skew and de-skew (datasheet: docs/mxu.md; options: config.py; ports:
streams.py; components: the ``TileController`` (control.py) and the ``OutputStage``
(output.py); how a column sums: accumulation/).

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

from amaranth.hdl import Cat, ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from ..adder import FPAdder
from .control import TileController, write_layout
from .element import ProcessingElement
from .output import OutputStage, tag_layout
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
        w_in, x_in, y_out = axi_streams(m, self, self._streams) if self.axi_stream else (
            wiring.flipped(self.w), wiring.flipped(self.x), wiring.flipped(self.y))
        m.submodules.controller = control = self.tile_controller()
        m.submodules.output = out = self.output_stage()
        wiring.connect(m, w_in, control.w)
        wiring.connect(m, x_in, control.x)
        wiring.connect(m, out.y, y_out)
        m.d.comb += [control.returned.eq(out.returned), out.flags_clear.eq(self.flags_clear),
                     self.flags.eq(out.flags)]
        if self.rand_bits is not None:
            m.d.comb += [out.seed.eq(self.seed), out.seed_load.eq(self.seed_load)]
        w_writes = self._weight_writes(m, control.w_write)
        tile = self.column.tile_state(m, w_writes, list(control.w_row))
        psums, col_flags = self._array(m, list(control.x_row), control.x_sel, w_writes, tile)
        m.d.comb += [out.psums.eq(Cat(*psums)), out.col_flags.eq(Cat(*col_flags)),
                     out.tag.eq(self._row_tags(m, x_in, control.take))]
        # The control state, for formal harnesses (sim.formal.stream_mxu) to state invariants over.
        self.internals = SimpleNamespace(
            fifo=out.fifo, returned=out.returned, w_writes=w_writes, pes=self._pes,
            **{name: getattr(control, name) for name in (
                "free", "returned_late", "credit", "swap_open", "active", "started", "shadow_full", "load_row",
                "drain", "w_open", "wload_open")})
        if platform == "formal" and self.acc_depth:
            self.internals.acc_rows = out.accumulator_rows(m)
        return m

    def tile_controller(self) -> TileController:
        """The array's tile controller, unelaborated."""
        return TileController(plan=self, streams=self._streams)

    def output_stage(self) -> OutputStage:
        """The array's output stage, unelaborated."""
        return OutputStage(plan=self, y=self._streams["y"], accumulator_adder=self.accumulator_adder)

    def _weight_writes(self, m, entry):
        """The weight writes as they travel down each column: ``writes[k][j]``, the
        registered write (``we``, tile ``row``, buffer ``buf``, ``data``) at PE ``(k, j)``,
        which stores it when ``row == k``; ``entry[j]``: the controller's write into column ``j``.

        A ``w`` row accepted in cycle ``T`` is at row ``k`` in cycle ``T + 1 + k`` and lands
        at its end, so every PE's write enable comes from a register beside it, not from one
        net that reaches every weight register from the controller (such a net spans the
        array, and its delay grows with the array's size). A swap row is accepted from the
        cycle after the tile's last ``w`` row on (``shadow_full``) and reaches row ``k``
        through the entry register ``1 + k * psum_latency >= 1 + k`` cycles later, when that
        row's write has landed.
        """
        layout = write_layout(self.rows, self.in_fmt)
        writes = []
        for k in range(self.rows):
            stage = []
            for j in range(self.cols):
                reg = Signal(layout, name=f"wload{k}_{j}")
                m.d.sync += reg.eq(writes[k - 1][j] if k else entry[j])
                stage.append(reg)
            writes.append(stage)
        return writes

    def _row_tags(self, m, x_in, take):
        """The accepted row's tag (``tag_layout``), delayed the array's latency."""
        tag = Signal(tag_layout(self))
        m.d.comb += tag.valid.eq(take)
        if self.acc_depth:
            m.d.comb += [tag.addr.eq(x_in.payload.addr), tag.first.eq(x_in.payload.first),
                         tag.last.eq(x_in.payload.last)]
        for d in range(self.array_latency):
            r = Signal(tag_layout(self), name=f"tag_{d}")
            m.d.sync += r.eq(tag)
            tag = r
        return tag

    def _array(self, m, x_row, x_sel, w_writes, tile):
        """The processing elements with their entry, skew and de-skew registers, and the
        column's own logic (``column``: top, normalisation points, edge); advances every
        cycle. Returns each column's sum and flags as they leave, aligned."""
        k_rows, n_cols, column = self.rows, self.cols, self.column
        pes = [[self._processing_element(m, k, j) for j in range(n_cols)] for k in range(k_rows)]
        self._pes = pes
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
