"""The ECP5's ``MULT18X18D`` with its own input and output registers, instantiated.

Yosys maps a ``*`` onto a MULT18X18D without its registers: the operands then come from
fabric flip-flops and the product goes to fabric flip-flops, so one path holds a route in,
the block and a route out, where with the block's input registers it holds the block and
one route: a faster clock (the figures: docs/mxu.md, "The multiplier block's own
registers"). ``mul_dsp="ecp5"`` on a multiplier instantiates the block with its registers
at the multiplier's ``operands`` and ``product`` cut points. Yosys ships no simulation
model of the block: ``MODEL`` is ours, for the parameter values used here only (unsigned
operands, parallel inputs, ``CLK0``, ``CE0``, ``RST0``); ``hdl.build`` writes it beside the
Verilog.
"""

from __future__ import annotations

from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Signal

from .params import choice_param

__all__ = ["DSPS", "MODEL", "dsp_param", "ecp5_multiply"]

#: ``inferred``: a ``*`` (synthesis maps it, no register in the block); ``ecp5``: a MULT18X18D
#: with its input and output registers.
DSPS = ("inferred", "ecp5")
#: The simulation model of the block (Verilog), for the simulators.
MODEL = Path(__file__).with_name("ecp5_mult18x18d_sim.v")
#: Operand bits of the block.
WIDTH = 18


def dsp_param(value, in_fmt) -> str:
    """``value`` checked: one of ``DSPS``, and ``ecp5`` only for an ``in_fmt`` whose
    significands fit the block's operands."""
    choice_param("mul_dsp", value, DSPS)
    if value == "ecp5" and in_fmt.precision > WIDTH:
        raise ValueError(f"mul_dsp='ecp5' needs in_fmt with at most {WIDTH} significand bits (a MULT18X18D's "
                         f"operand), not {in_fmt.name} ({in_fmt.precision})")
    return value


def ecp5_multiply(m, a, b, *, input_registers: bool, output_register: bool, name: str) -> Signal:
    """``a * b`` (unsigned, at most ``WIDTH`` bits each) from a MULT18X18D, through its
    input registers and its output register where asked; returns the ``2 * WIDTH``-bit
    product."""
    assert len(a) <= WIDTH and len(b) <= WIDTH, (len(a), len(b))
    product = Signal(2 * WIDTH, name=f"{name}_p")
    # Named operands: a pin per bit of an expression would be an expression per pin.
    a_sig, b_sig = Signal(len(a), name=f"{name}_a"), Signal(len(b), name=f"{name}_b")
    m.d.comb += [a_sig.eq(a), b_sig.eq(b)]
    a, b = a_sig, b_sig
    clocked = {True: "CLK0", False: "NONE"}
    pins = {**{f"i_A{i}": a[i] if i < len(a) else 0 for i in range(WIDTH)},
            **{f"i_B{i}": b[i] if i < len(b) else 0 for i in range(WIDTH)},
            **{f"o_P{i}": product[i] for i in range(2 * WIDTH)}}
    m.submodules[name] = Instance(
        "MULT18X18D",
        p_REG_INPUTA_CLK=clocked[input_registers], p_REG_INPUTB_CLK=clocked[input_registers],
        p_REG_OUTPUT_CLK=clocked[output_register], p_GSR="DISABLED",
        i_SIGNEDA=0, i_SIGNEDB=0, i_SOURCEA=0, i_SOURCEB=0,
        i_CLK0=ClockSignal(), i_CE0=1, i_RST0=0, **pins)
    return product
