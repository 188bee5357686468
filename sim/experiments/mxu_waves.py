"""Timing diagrams for docs/mxu-timing.md: ``python -m sim.experiments.mxu_waves`` (``--help``).

Simulates a 2x2 MXU (bf16 in, fp32 out, no register stages: latency 8, FIFO depth 16)
with Amaranth's simulator through four scripted scenarios, records the stream handshakes
every cycle, and writes each as WaveDrom JSON (``docs/mxu-NAME.json``) rendered to SVG with
the ``wavedrom`` package (``docs/mxu-NAME.svg``). The diagrams are the simulation's, not drawn.
"""

from __future__ import annotations

import json
from pathlib import Path

from amaranth.sim import Simulator

from golden.tools.cli import Parser, build_dir, check_output, command, write_text
from hdl.mxu import MXU

def scenarios(latency: int, credits: int) -> dict:
    """name -> (caption, w rows, x rows as (label, swap), y.ready per cycle, x held back until
    cycle, cycles), for an MXU of ``latency`` and ``credits`` (its ``fifo_depth``)."""
    full, stalled = 8, credits + 4
    return {
        "tile-load": ("Defined start: x waits for the first complete tile, which its first row swaps in",
                      ["A0", "A1"], [("x0", 0), ("x1", 0)], "1" * (latency + 7), {"A0": 2}, latency + 7),
        "swap": ("B loads into the shadow buffer once A's drain is over; x2's swap waits until B is "
                 "complete; C likewise for x4", ["A0", "A1", "B0", "B1", "C0", "C1"],
                 [("x0", 1), ("x1", 0), ("x2", 1), ("x3", 0), ("x4", 1), ("x5", 0)],
                 "1" * (latency + 16), {}, latency + 16),
        "full-rate": (f"Full rate with y always ready: one row per cycle, y latency ({latency}) cycles after x",
                      ["A0", "A1"], [(f"x{i}", 0) for i in range(full)], "1" * (full + latency + 2), {},
                      full + latency + 2),
        "backpressure": (f"y stalled: rows fill the output FIFO; x.ready falls when the {credits} credits are "
                         "taken (a registered count, not y.ready); nothing lost", ["A0", "A1"],
                         [(f"x{i}", 0) for i in range(stalled)], "0" * stalled + "1" * (stalled + 3), {},
                         2 * stalled + 3),
    }


def _wave(values, data=False):
    """WaveDrom wave string (and data labels) of one value per cycle."""
    wave, labels, last = "", [], object()
    for v in values:
        if v == last:
            wave += "."
        elif data:
            wave += "x" if v is None else "="
            if v is not None:
                labels.append(v)
        else:
            wave += str(v)
        last = v
    return {"wave": wave, **({"data": labels} if data else {})}


def simulate(w_rows, x_rows, y_ready, w_gaps, cycles) -> list[dict]:
    """Drive the 2x2 MXU; return one dict of port values (labels for payloads) per cycle."""
    dut = MXU(rows=2, cols=2)
    trace = []

    async def bench(ctx):
        w_next = x_next = y_count = 0
        for cycle in range(cycles):
            w_valid = w_next < len(w_rows) and cycle >= w_gaps.get(w_rows[w_next], 0)
            x_valid = x_next < len(x_rows)
            ctx.set(dut.w.valid, w_valid)
            ctx.set(dut.w.payload, [0x3F80, 0x4000])
            ctx.set(dut.x.valid, x_valid)
            ctx.set(dut.x.payload.data, [0x3F80, 0x3F80])
            ctx.set(dut.x.payload.swap, x_rows[x_next][1] if x_valid else 0)
            ctx.set(dut.y.ready, int(y_ready[cycle]))
            row = {"w.valid": int(w_valid), "w.ready": ctx.get(dut.w.ready),
                   "w.payload": w_rows[w_next] if w_valid else None,
                   "x.valid": int(x_valid), "x.ready": ctx.get(dut.x.ready),
                   "x.payload": x_rows[x_next][0] if x_valid else None,
                   "x.payload.swap": x_rows[x_next][1] if x_valid else 0,
                   "y.valid": ctx.get(dut.y.valid), "y.ready": int(y_ready[cycle]),
                   "y.payload": f"y{y_count}" if ctx.get(dut.y.valid) else None}
            trace.append(row)
            w_next += w_valid and row["w.ready"]
            x_next += x_valid and row["x.ready"]
            y_count += row["y.valid"] and row["y.ready"]
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return trace


def wavedrom(caption: str, trace: list[dict]) -> dict:
    signals = [{"name": "clk", "wave": "p" + "." * (len(trace) - 1)}]
    for name in trace[0]:
        signals.append({"name": name, **_wave([t[name] for t in trace], data=name.endswith("payload"))})
    return {"signal": signals, "head": {"text": caption, "tick": 0}, "config": {"hscale": 1}}


@command("python -m sim.experiments.mxu_waves")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.experiments.mxu_waves", description=__doc__.splitlines()[0])
    out = build_dir("results", "mxu-waves")
    parser.add_argument("--out", type=Path, default=out,
                        help=f"folder for the JSON and SVG (default {out}; --out docs publishes)")
    args = parser.parse_args(argv)
    check_output(args.out, "--out", folder=True)
    import wavedrom as renderer

    mxu = MXU.plan(rows=2, cols=2)
    for name, (caption, w_rows, x_rows, y_ready, w_gaps, cycles) in scenarios(mxu.latency, mxu.fifo_depth).items():
        source = json.dumps(wavedrom(caption, simulate(w_rows, x_rows, y_ready, w_gaps, cycles)), indent=1)
        svg = '<?xml version="1.0" encoding="utf-8" ?>\n' + renderer.render(source).tostring()
        write_text(args.out / f"mxu-{name}.json", source + "\n")
        write_text(args.out / f"mxu-{name}.svg", svg)
        print(f"wrote {args.out / f'mxu-{name}.json'} and .svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
