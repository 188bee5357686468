"""The MXU's streams and ports: ``w``, ``x``, ``y`` (``amaranth.lib.stream``), named as
they are or in the AXI4-Stream convention, and the flags and seed ports."""

from __future__ import annotations

from amaranth.hdl import Cat, unsigned
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

__all__ = ["streams", "ports", "axi_streams"]


def streams(function, acc_addr_width: int, out_fmt) -> dict:
    """The stream signatures, by name: ``w`` (a weight row), ``x`` (an activation row with
    its ``swap`` bit and, with output accumulators, ``addr``, ``first``, ``last``), ``y``."""
    row = lambda n, fmt: data.ArrayLayout(unsigned(fmt.width), n)
    in_port_fmt = function.acc_fmt if function.convert_inputs else function.in_fmt
    x_fields = {"data": row(function.rows, in_port_fmt), "swap": unsigned(1)}
    if function.acc_depth:
        x_fields.update(addr=unsigned(acc_addr_width), first=unsigned(1), last=unsigned(1))
    return {"w": stream.Signature(row(function.cols, in_port_fmt)),
            "x": stream.Signature(data.StructLayout(x_fields)),
            "y": stream.Signature(row(function.cols, out_fmt))}


def ports(function, axi_stream: bool, signatures: dict) -> dict:
    """The MXU's ports: the streams (as they are, or as AXI4-Stream ``tdata``/``tuser``,
    ``tvalid``, ``tready``), ``flags``, ``flags_clear`` and, with a stochastic output
    rounding, ``seed`` and ``seed_load``."""
    if axi_stream:
        members = {}
        for name, sig in signatures.items():
            port, inward = (f"m_axis_{name}_", Out) if name == "y" else (f"s_axis_{name}_", In)
            outward = Out if inward is In else In
            layout = sig.members["payload"].shape
            if name == "x":
                members.update({port + "tdata": In(layout["data"].shape),
                                port + "tuser": In(layout.size - layout["data"].shape.size)})
            else:
                members[port + "tdata"] = inward(layout)
            members.update({port + "tvalid": inward(1), port + "tready": outward(1)})
    else:
        members = {name: (Out if name == "y" else In)(sig) for name, sig in signatures.items()}
    members.update(flags=Out(data.ArrayLayout(unsigned(5), function.cols)), flags_clear=In(1))
    if function.rand_bits is not None:
        members.update(seed=In(32), seed_load=In(1))
    return members


def axi_streams(m, mxu, signatures: dict):
    """The ``w``, ``x``, ``y`` streams wired to ``mxu``'s AXI4-Stream ports."""
    w, x = signatures["w"].create(), signatures["x"].create()
    y = signatures["y"].flip().create()
    m.d.comb += [
        w.payload.eq(mxu.s_axis_w_tdata), w.valid.eq(mxu.s_axis_w_tvalid), mxu.s_axis_w_tready.eq(w.ready),
        x.payload.eq(Cat(mxu.s_axis_x_tdata, mxu.s_axis_x_tuser)), x.valid.eq(mxu.s_axis_x_tvalid),
        mxu.s_axis_x_tready.eq(x.ready),
        mxu.m_axis_y_tdata.eq(y.payload), mxu.m_axis_y_tvalid.eq(y.valid), y.ready.eq(mxu.m_axis_y_tready),
    ]
    return w, x, y
