"""``Board``: the MXU behind a UART host link; ``python -m hdl.board`` builds its ULX3S 85F bitstream.

The link protocol (docs/board.md) is stop-and-wait: the host sends one command frame and
waits for its reply before the next, so the receiver never has a byte it cannot take.
Every reply starts with the command byte. Values are little-endian, element 0 first.

=======  ===============================  ==========================================
command  payload (host -> board)          reply (board -> host), sent when ...
=======  ===============================  ==========================================
``I``    none                             ``I`` rows, cols, fifo_depth (16 bits each)
``W``    one weight row: ``cols`` bf16    ``W`` once the MXU accepted the row
``X``    control byte (bit 0: swap),      ``X`` once the MXU accepted the row
         one X row: ``rows`` bf16
``Y``    none                             ``Y`` and the next y row: ``cols`` fp32
``F``    none                             ``F`` and one byte per column: its sticky flags
``C``    none                             ``C``: the flags are cleared
other    none                             ``?``
=======  ===============================  ==========================================
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Elaboratable, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.cli import Parser, build_dir, check_output, command, write_text

from .mxu import MXU
from .params import int_param
from .uart import MAX_DIVISOR, MIN_DIVISOR, UartRx, UartTx

__all__ = ["Board", "COMMANDS", "MAX_SIZE", "CLOCK_HZ", "divisor_for", "main"]

#: Command bytes (docs/board.md).
COMMANDS = {name: ord(name) for name in "IWXYFC"}
UNKNOWN = ord("?")
#: Rows and columns of the board's MXU: the frames are then at most 65 bytes.
MAX_SIZE = 16
#: The ULX3S oscillator; the design runs on it directly (no PLL).
CLOCK_HZ = 25_000_000
#: Largest baud-rate error the link accepts (the receiver samples mid-bit over 10 bits).
MAX_BAUD_ERROR = 0.02


def divisor_for(baud: int, clock_hz: int = CLOCK_HZ) -> int:
    """Clock cycles per bit for ``baud``, or a ValueError if the rate is off by over 2 %."""
    baud = int_param("baud", baud, 1, clock_hz // MIN_DIVISOR)
    divisor = round(clock_hz / baud)
    error = abs(clock_hz / divisor - baud) / baud
    if not MIN_DIVISOR <= divisor <= MAX_DIVISOR or error > MAX_BAUD_ERROR:
        raise ValueError(f"baud {baud} is {100 * error:.1f} % off at {clock_hz / 1e6:g} MHz "
                         f"(divisor {divisor}); allowed: at most {100 * MAX_BAUD_ERROR:g} %")
    return divisor


class Board(wiring.Component):
    """A bf16 x bf16 -> fp32 MXU (no output rounding, no accumulators) driven over ``rx``/``tx``.

    Parameters (keyword-only)
    -------------------------
    rows, cols : int
        The MXU's size, 1..16 each.
    mul_stages, add_stages : int
        Register stages of each processing element (``MXU``): multiplier 0..9, adder 0..21 (fp32).
    divisor : int
        Clock cycles per UART bit, 4..2**20 (``divisor_for(baud)``).
    """

    def __init__(self, *, rows=2, cols=2, mul_stages=1, add_stages=1, divisor=divisor_for(115200)):
        self.rows = int_param("rows", rows, 1, MAX_SIZE)
        self.cols = int_param("cols", cols, 1, MAX_SIZE)
        self.divisor = int_param("divisor", divisor, MIN_DIVISOR, MAX_DIVISOR)
        self.mxu = MXU(rows=self.rows, cols=self.cols, mul_stages=mul_stages, add_stages=add_stages)
        self.mul_stages, self.add_stages = self.mxu.mul_stages, self.mxu.add_stages
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1)})

    @property
    def latency(self) -> int:
        """The MXU's latency (cycles; the link adds whole UART frames)."""
        return self.mxu.latency

    @property
    def frame_bytes(self) -> dict:
        """Bytes after the command byte, per command that has any: host -> board (``W``,
        ``X``) and board -> host (``I``, ``Y``, ``F``)."""
        return {"W": 2 * self.cols, "X": 1 + 2 * self.rows, "I": 6, "Y": 4 * self.cols, "F": self.cols}

    def elaborate(self, platform):
        m = Module()
        m.submodules.mxu = mxu = self.mxu
        m.submodules.rx = rx = UartRx(divisor=self.divisor)
        m.submodules.tx = tx = UartTx(divisor=self.divisor)
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx)]
        self._protocol(m, mxu, rx, tx, self._buffers(m, mxu, tx))
        return m

    def _buffers(self, m, mxu, tx) -> SimpleNamespace:
        """The frame buffers: payload bytes shift into ``inbuf`` from the top (an N-byte
        frame ends in its top N bytes, which feed the MXU's ``w`` and ``x``); a reply goes
        out of ``outbuf`` from the bottom byte up (``left`` bytes)."""
        size = self.frame_bytes
        in_bits = 8 * max(size["W"], size["X"])
        inbuf = Signal(in_bits)
        w_frame, x_frame = inbuf[in_bits - 8 * size["W"]:], inbuf[in_bits - 8 * size["X"]:]
        m.d.comb += [mxu.w.payload.eq(w_frame), mxu.x.payload.swap.eq(x_frame[0]),
                     mxu.x.payload.data.eq(x_frame[8:])]
        need = Signal(range(max(size["W"], size["X"]) + 1))
        is_x = Signal()
        out_bits = 8 * (1 + max(size["I"], size["Y"], size["F"]))
        outbuf = Signal(out_bits)
        left = Signal(range(out_bits // 8 + 1))
        m.d.comb += tx.data.payload.eq(outbuf[:8])
        return SimpleNamespace(inbuf=inbuf, need=need, is_x=is_x, outbuf=outbuf, left=left)

    def _protocol(self, m, mxu, rx, tx, buf: SimpleNamespace) -> None:
        """The command state machine (the module docstring's table)."""
        size = self.frame_bytes
        inbuf, need, is_x, outbuf, left = buf.inbuf, buf.need, buf.is_x, buf.outbuf, buf.left

        def reply(*fields):
            value = Cat(*fields)
            return [outbuf.eq(value), left.eq(len(value) // 8)]

        flags = [Cat(mxu.flags[j], Const(0, 3)) for j in range(self.cols)]
        with m.FSM():
            with m.State("idle"):
                with m.If(rx.data.valid):
                    with m.Switch(rx.data.payload):
                        for name in "WX":
                            with m.Case(COMMANDS[name]):
                                m.d.sync += [need.eq(size[name]), is_x.eq(name == "X")]
                                m.next = "receive"
                        with m.Case(COMMANDS["Y"]):
                            m.next = "y"
                        with m.Case(COMMANDS["I"]):
                            m.d.sync += reply(Const(COMMANDS["I"], 8), Const(self.rows, 16), Const(self.cols, 16),
                                              Const(mxu.fifo_depth, 16))
                            m.next = "send"
                        with m.Case(COMMANDS["F"]):
                            m.d.sync += reply(Const(COMMANDS["F"], 8), *flags)
                            m.next = "send"
                        with m.Case(COMMANDS["C"]):
                            m.d.comb += mxu.flags_clear.eq(1)
                            m.d.sync += reply(Const(COMMANDS["C"], 8))
                            m.next = "send"
                        with m.Default():
                            m.d.sync += reply(Const(UNKNOWN, 8))
                            m.next = "send"
            with m.State("receive"):
                with m.If(rx.data.valid):
                    m.d.sync += [inbuf.eq(Cat(inbuf[8:], rx.data.payload)), need.eq(need - 1)]
                    with m.If(need == 1):
                        m.next = "push"
            with m.State("push"):
                m.d.comb += [mxu.w.valid.eq(~is_x), mxu.x.valid.eq(is_x)]
                with m.If(is_x & mxu.x.ready):
                    m.d.sync += reply(Const(COMMANDS["X"], 8))
                    m.next = "send"
                with m.If(~is_x & mxu.w.ready):
                    m.d.sync += reply(Const(COMMANDS["W"], 8))
                    m.next = "send"
            with m.State("y"):
                m.d.comb += mxu.y.ready.eq(1)
                with m.If(mxu.y.valid):
                    m.d.sync += reply(Const(COMMANDS["Y"], 8), mxu.y.payload)
                    m.next = "send"
            with m.State("send"):
                m.d.comb += tx.data.valid.eq(1)
                with m.If(tx.data.ready):
                    m.d.sync += [outbuf.eq(outbuf >> 8), left.eq(left - 1)]
                    with m.If(left == 1):
                        m.next = "idle"


class _Pins(Elaboratable):
    """``board`` wired to the platform's UART (the FTDI chip's pins on the ULX3S)."""

    def __init__(self, board: Board):
        self.board = board

    def elaborate(self, platform):
        m = Module()
        m.submodules.board = board = self.board
        uart = platform.request("uart", 0)
        m.d.comb += [board.rx.eq(uart.rx.i), uart.tx.o.eq(board.tx)]
        return m


def build(board: Board, work: Path, seed: int) -> dict:
    """Place and route ``board`` for the ULX3S 85F at its 25 MHz clock (nextpnr fails if
    timing is not met); returns the bitstream's path and the nextpnr figures."""
    from amaranth_boards.ulx3s import ULX3S_85F_Platform

    from synth.pnr import parse_details, parse_report, tool_env
    from synth.timing import tools

    platform = ULX3S_85F_Platform()
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    plan = platform.build(_Pins(board), name="top", build_dir=str(work), do_build=False,
                          nextpnr_opts=f"--seed {seed}")
    plan.execute_local(str(work), env=tool_env())
    log = (work / "top.tim").read_text()
    figures, details = parse_report(log, "ecp5"), parse_details(log)
    return {"bitstream": work / "top.bit", "seconds": round(time.monotonic() - start, 1),
            "clock_mhz": CLOCK_HZ / 1e6, "fmax_mhz": figures["ecp5_fmax_mhz"],
            "timing_met": figures["ecp5_fmax_mhz"] >= CLOCK_HZ / 1e6, "util_pct": figures["ecp5_util_pct"],
            "cells": {k: n for k, n in details.pop("cells").items() if n}, "critical_path": details,
            "seed": seed, "tools": tools()}


def _parser() -> argparse.ArgumentParser:
    out = build_dir("board")
    parser = Parser(prog="python -m hdl.board", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2, help=f"MXU rows (K), 1..{MAX_SIZE} (default 2)")
    parser.add_argument("--cols", type=int, default=2, help=f"MXU columns (N), 1..{MAX_SIZE} (default 2)")
    parser.add_argument("--mul-stages", type=int, default=1, help="multiplier stages per PE, 0..9 (default 1)")
    parser.add_argument("--add-stages", type=int, default=1, help="adder stages per PE, 0..21 (default 1)")
    parser.add_argument("--baud", type=int, default=115200,
                        help="UART rate; within 2 %% of 25 MHz / an integer >= 4 (default 115200)")
    parser.add_argument("--seed", type=int, default=1, help="nextpnr placer seed (default 1)")
    parser.add_argument("--out", type=Path, default=out,
                        help=f"output folder: NAME.bit, NAME.json; tools' files in NAME/ (default {out})")
    parser.add_argument("--elaborate-only", action="store_true",
                        help="check the options and elaborate the design, write nothing")
    return parser


def name_of(board: Board, baud: int) -> str:
    """The bitstream's file name stem: size, stages and baud rate."""
    return f"ulx3s85f_mxu{board.rows}x{board.cols}_m{board.mul_stages}a{board.add_stages}_{baud}"


@command("python -m hdl.board")
def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    int_param("seed", args.seed, 0, 0xFFFFFFFF)
    board = Board(rows=args.rows, cols=args.cols, mul_stages=args.mul_stages, add_stages=args.add_stages,
                  divisor=divisor_for(args.baud))
    if args.elaborate_only:
        from amaranth.hdl import Fragment
        Fragment.get(board, None)
        print(f"{name_of(board, args.baud)}: elaborated (MXU latency {board.latency} cycles)")
        return 0
    check_output(args.out, "--out", folder=True)
    name = name_of(board, args.baud)
    facts = build(board, args.out / name, args.seed)
    bit = args.out / f"{name}.bit"
    write_text(bit, facts.pop("bitstream").read_bytes())
    report = {"bitstream": bit.name, "rows": board.rows, "cols": board.cols, "mul_stages": board.mul_stages,
              "add_stages": board.add_stages, "baud": args.baud, "divisor": board.divisor,
              "mxu_latency": board.latency, "fifo_depth": board.mxu.fifo_depth, **facts}
    write_text(args.out / f"{name}.json", json.dumps(report, indent=2) + "\n")
    met = "met" if report["timing_met"] else "NOT met"
    print(f"wrote {bit} in {report['seconds']} s: Fmax {report['fmax_mhz']} MHz at a {report['clock_mhz']:g} MHz "
          f"clock (timing {met}), {report['cells'].get('TRELLIS_COMB')} LUT cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
