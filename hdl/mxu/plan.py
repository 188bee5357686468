"""``MXUPlan``: an MXU's configuration (hdl/mxu/config.py) and the facts that follow from it
(the element's and the column's plans, latencies, the output FIFO's depth), without its
hardware. ``MXU`` is its plan with ports and ``elaborate``."""

from __future__ import annotations

from dataclasses import fields

from ..ecp5_bram import MAX_DEPTH as FIFO_ECP5_DEPTH
from .config import MXUFunction, MXUImplementation, resolve
from .element import ElementPlan
from .output_fifo import fifo_latency

__all__ = ["MXUPlan"]


class MXUPlan:
    """What an MXU computes and how it is built, and what follows.

    Parameters (keyword-only)
    -------------------------
    function, implementation : MXUFunction, MXUImplementation, optional
        The two descriptions (``config.resolve``), or instead:
    **options
        The options of ``config.OPTIONS`` (docs/mxu.md's table), resolved once: ``rows`` and
        ``cols`` (required), ``in_fmt``, ``acc_fmt``, ``convert_inputs``, ``out_rounding``,
        ``sr_bits``, ``acc_depth``, ``accumulation`` (a spelling, or an ``Accumulation`` of
        hdl/mxu/accumulation/; ``accumulator``: its old name), ``mul_stages``, ``add_stages``,
        ``fused_pe``, ``axi_stream``, ``mul_dsp``, ``fifo_ram``.

    Every option is an attribute (``rows``, ``accumulation``, ...), as resolved, and so are
    the column's facts (``Column``: ``point_rows``, ``point_latency``, ``round_stages``,
    ``result_register``, ``anchor_wait``).
    """

    def __init__(self, *, function: MXUFunction | None = None, implementation: MXUImplementation | None = None,
                 **options):
        if (function is None) != (implementation is None) or (function is not None and options):
            raise TypeError("an MXU takes function and implementation together, or the options, not both")
        if function is None:
            function, implementation = resolve(**options)
        self.function, self.implementation = function, implementation
        for config in (function, implementation):
            for f in fields(config):
                setattr(self, f.name, getattr(config, f.name))
        self.out_fmt, self.acc_addr_width = function.out_fmt, function.acc_addr_width
        self._element = ElementPlan(**self._element_params())
        self.column = self.accumulation.column(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt, rows=self.rows,
                                               cols=self.cols, mul_stages=self.mul_stages, element=self._element)
        for name in ("point_rows", "point_latency", "round_stages", "result_register", "anchor_wait"):
            setattr(self, name, getattr(self.column, name))
        if self.fifo_ram == "ecp5" and self.fifo_depth > FIFO_ECP5_DEPTH:
            raise ValueError(f"fifo_ram='ecp5' holds at most {FIFO_ECP5_DEPTH} rows (one DP16KD's 36-bit rows), "
                             f"and this array needs fifo_depth {self.fifo_depth} (latency {self.latency}): "
                             "use fifo_ram block or lut, or fewer rows or stages")

    def _element_params(self) -> dict:
        """The processing elements' parameters (``ProcessingElement``'s and its plan's)."""
        return {"in_fmt": self.in_fmt, "acc_fmt": self.acc_fmt, "mul_stages": self.mul_stages,
                "add_stages": self.add_stages, "fused": self.fused_pe, "accumulation": self.accumulation,
                "terms": self.rows, "mul_dsp": self.mul_dsp}

    @property
    def accumulator(self):
        """golden's description of the column sum (``Accumulation.golden``): None or a
        ``ColumnAccumulator``."""
        return self.accumulation.golden

    @property
    def psum_latency(self) -> int:
        """Cycles a partial sum spends in one processing element (the element's)."""
        return self._element.psum_latency

    @property
    def sum_wait(self) -> int:
        """Cycles an element's product waits for the partial sum (the element's)."""
        return self._element.sum_wait

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
        """Output FIFO rows (credits): the smallest power of two >= ``latency + 3``.

        A credit is taken when a ``y``-producing row is accepted and returned two cycles
        after its ``y`` row is transferred (through ``returned`` and ``returned_late``),
        ``latency + 2`` cycles later at the earliest; ``x.ready`` is a function of the
        registered credit count, so full rate needs ``latency + 3``.
        """
        return 1 << (self.latency + 2).bit_length()

    @property
    def drain_cycles(self) -> int:
        """Cycles after a swap row is accepted during which rows before it may still read
        the old tile (the last, row ``rows - 1`` of column ``cols - 1``, in the last of them):
        ``w.ready`` stays low for them (``(rows - 1) * psum_latency + points *
        point_latency + cols - 1 + anchor_wait``)."""
        return self.column.row_skew(self.rows - 1) + self.cols - 1 + self.anchor_wait
