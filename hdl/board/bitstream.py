"""Build the board's ULX3S 85F bitstream: ``python -m hdl.board`` (``--help``).

The gateware (``hdl.board.top.Board``) wired to the ULX3S's UART pins, synthesised by Yosys
and placed and routed by nextpnr (the ``yowasp`` tools, ``hdl.toolchain``) at the board's
25 MHz clock; writes ``NAME.bit`` and ``NAME.json`` (the figures). The host driver is
``python -m hdl.board.host``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from amaranth.hdl import Elaboratable, Module

from golden.tools.cli import Parser, build_dir, check_output, command, write_text

from ..params import int_param
from ..toolchain import parse_details, parse_report, tool_env, tool_versions
from .top import CLOCK_HZ, MAX_SIZE, Board, divisor_for

__all__ = ["build", "main"]


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
            "seed": seed, "tools": tool_versions()}


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
