"""The ECP5's ``DP16KD`` block RAM as a 512x36 simple dual-port memory with its output register, instantiated.

Yosys maps an Amaranth memory onto DP16KD blocks without their output registers
(``REGMODE "NOREG"``): the read data then leaves the block late in the cycle, so that its
clock-to-out and one route into a fabric register bound an array's clock (the figures:
docs/mxu-timing.md). With the output register (``REGMODE_B "OUTREG"``) the data leaves
early in the cycle, a cycle later. ``ecp5_memory`` instantiates the blocks the way
Yosys's own mapping of a 36-bit simple dual-port memory connects them (port A writes, port B
reads, 36 bits each: the read data's low half leaves on the DOA pins, the high half on DOB)
and sets the output registers of both halves (``REGMODE_A`` and ``REGMODE_B``: with only
``REGMODE_B`` the DOA half stays unregistered and late), each half's output enable driven
alike, as nextpnr does for Lattice's 36-bit ``PDPW16KD``. Yosys ships the block as a black box
only: ``MODEL`` is ours, for the values used here; ``hdl.build`` writes it beside the Verilog.
"""

from __future__ import annotations

from pathlib import Path

from amaranth.hdl import ClockSignal, Instance, Signal

__all__ = ["MAX_DEPTH", "MODEL", "ecp5_memory"]

#: Rows of one block as 36 bits wide; the write and read addresses' bits 5..13.
MAX_DEPTH = 512
#: Bits per row of one block.
WIDTH = 36
#: The simulation model of the block (Verilog), for the simulators.
MODEL = Path(__file__).with_name("ecp5_dp16kd_sim.v")


def ecp5_memory(m, *, width: int, depth: int, w_addr, w_data, w_en, r_addr, r_en, out_en, name: str) -> Signal:
    """A ``width`` x ``depth`` memory of DP16KD blocks side by side: ``w_data`` is written
    at ``w_addr`` on a clock with ``w_en``; on a clock with ``r_en`` the row at ``r_addr``
    enters the blocks' read latch, and on a clock with ``out_en`` the latch enters the output
    register, which the returned signal is. A read of the row written in the same cycle
    gives whatever the block gives (not modelled): the caller must not use such a row."""
    assert 2 <= depth <= MAX_DEPTH and width >= 1, (width, depth)
    abits = (depth - 1).bit_length()
    data = Signal(width, name=f"{name}_data")
    blocks = -(-width // WIDTH)
    for i in range(blocks):
        lo = i * WIDTH
        di = [w_data[lo + b] if lo + b < width else 0 for b in range(WIDTH)]
        do = [data[lo + b] if lo + b < width else Signal(name=f"{name}_{i}_unused{b}") for b in range(WIDTH)]
        pins = {}
        for port, addr in (("A", w_addr), ("B", r_addr)):
            for bit in range(14):
                row_bit = bit - 5
                pins[f"i_AD{port}{bit}"] = addr[row_bit] if 0 <= row_bit < abits else 0
        for bit in range(4):  # port A's address bits 0..3: the byte enables of a 36-bit write
            pins[f"i_ADA{bit}"] = 1
        for port, half in (("A", 0), ("B", 1)):
            for bit in range(18):
                pins[f"i_DI{port}{bit}"] = di[half * 18 + bit]
                pins[f"o_DO{port}{bit}"] = do[half * 18 + bit]
            for bit in range(3):
                pins[f"i_CS{port}{bit}"] = 0
        m.submodules[f"{name}_{i}"] = Instance(
            "DP16KD",
            p_DATA_WIDTH_A=WIDTH, p_DATA_WIDTH_B=WIDTH, p_REGMODE_A="OUTREG", p_REGMODE_B="OUTREG",
            p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC", p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
            p_GSR="DISABLED",
            i_CLKA=ClockSignal(), i_CEA=w_en, i_WEA=1, i_OCEA=out_en, i_RSTA=0,
            i_CLKB=ClockSignal(), i_CEB=r_en, i_WEB=0, i_OCEB=out_en, i_RSTB=0,
            **pins)
    return data
