"""The MXU at volume: its Verilog compiled by Verilator, one C++ call clocking a whole stream.

``python -m sim.compiled.mxu --rows 4 --cols 4 --vectors 100000`` drives random X rows
(with random swap marks loading new tiles mid-stream), the weight tiles on ``w``, random
bubbles on ``x`` and ``w`` and random backpressure on ``y``; every ``y`` transfer is
recorded in order with the sticky ``flags`` at the end, then compared bit for bit with
``golden.mxu.stream`` (no row lost, duplicated or reordered). Prints and writes (JSON,
under the build folder) the rows, mismatches, seconds and MACs checked per second.

Handshake pattern (documented so a run can be replayed): one C++ xorshift32 seeded with
``handshake_seed`` (0 becomes 2463534242) steps three times per cycle, for ``w``, ``x`` and
``y`` in that order; a channel's draw is "active" when its top 8 bits are at or above
``round(256 * rate)`` (``rate``: the bubble or backpressure fraction). An offered row stays
offered, unchanged, until it is accepted (AXI-Stream rules); a new row is offered only on
an active draw.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import re
import time
from pathlib import Path

import numpy as np

from golden.tools.cli import Parser, build_dir, check_output, command, write_text
from golden.formats import format_param
from golden.mxu import stream
from hdl.units import UNITS, module_name
from hdl.build import add_unit_arguments

from .model import compile_unit
from golden.vectors import cancelling, rows_and_tiles

__all__ = ["MxuModel", "pack_words", "unpack_words", "check", "main"]

_SHIM = r"""
#include "Vunit.h"
#include "verilated.h"
#include <cstdint>

struct Unit { VerilatedContext ctx; Vunit* top; };

static inline uint32_t xs32(uint32_t y) { y ^= y << 13; y ^= y >> 17; return y ^ (y << 5); }
static inline void tick(Vunit* m) { m->clk = 0; m->eval(); m->clk = 1; m->eval(); }

extern "C" {
void* unit_new() { Unit* u = new Unit; u->top = new Vunit{&u->ctx}; return u; }
void unit_free(void* p) { Unit* u = (Unit*)p; delete u->top; delete u; }

/* Reset (then load ``seed`` if asked), stream nw weight rows and nx X rows (uint32 words,
   @WW@ and @XW@ per row) with the handshake pattern, record up to ny y rows (@YW@ words
   each), then ``drain`` cycles with y ready and nothing offered (extra rows are counted).
   ``corrupt`` > 0 flips bit 0 of recorded row corrupt - 1 (a mutant of the recording).
   Returns the y transfers seen; ``flags`` gets the sticky flags at the end (@FW@ words). */
uint64_t mxu_run(void* p, uint64_t nw, const uint32_t* w, uint64_t nx, const uint32_t* x,
                 uint64_t ny, uint32_t* y, uint32_t* flags, uint32_t seed, int load_seed,
                 uint32_t handshake_seed, uint32_t w_idle, uint32_t x_idle, uint32_t y_stall,
                 uint64_t drain, uint64_t limit, uint64_t corrupt, uint64_t* cycles) {
    Vunit* m = ((Unit*)p)->top;
    m->w__valid = 0; m->x__valid = 0; m->y__ready = 0; m->flags_clear = 0;
    m->rst = 1; tick(m); tick(m); m->rst = 0;
    @SEED@
    uint32_t r = handshake_seed ? handshake_seed : 2463534242u;
    uint64_t wi = 0, xi = 0, got = 0, c = 0, idle = 0;
    bool w_on = false, x_on = false;
    while (idle < drain && c < limit) {
        bool done = xi >= nx && got >= ny;
        r = xs32(r);
        if (!w_on && wi < nw && (r >> 24) >= w_idle) { const uint32_t* s = w + wi * @WW@; @PUT_W@ w_on = true; }
        r = xs32(r);
        if (!x_on && xi < nx && (r >> 24) >= x_idle) { const uint32_t* s = x + xi * @XW@; @PUT_X@ x_on = true; }
        r = xs32(r);
        m->w__valid = w_on; m->x__valid = x_on;
        m->y__ready = done || (r >> 24) >= y_stall;
        m->clk = 0;
        m->eval();
        if (w_on && m->w__ready) { w_on = false; wi++; }
        if (x_on && m->x__ready) { x_on = false; xi++; }
        if (m->y__valid && m->y__ready) {
            if (got < ny) { uint32_t* d = y + got * @YW@; @GET_Y@ if (got + 1 == corrupt) d[0] ^= 1; }
            got++;
        }
        m->clk = 1;
        m->eval();
        c++;
        if (done) idle++;
    }
    { uint32_t* d = flags; @GET_F@ }
    *cycles = c;
    return got;
}
}
"""

_SEED = "if (load_seed) { m->seed = seed; m->seed_load = 1; tick(m); m->seed_load = 0; }"


def _words(width: int) -> int:
    return (width + 31) // 32


def _put(port: str, width: int) -> str:
    """C++ copying the words at ``s`` onto ``port`` (Verilator: up to 64 bits an integer,
    wider a ``VlWide`` of 32-bit words)."""
    if width > 64:
        return " ".join(f"m->{port}[{k}] = s[{k}];" for k in range(_words(width)))
    value = " | ".join(f"((uint64_t)s[{k}] << {32 * k})" for k in range(_words(width)))
    return f"m->{port} = {value};"


def _get(port: str, width: int) -> str:
    """C++ copying ``port`` into the words at ``d``."""
    if width > 64:
        return " ".join(f"d[{k}] = m->{port}[{k}];" for k in range(_words(width)))
    return " ".join(f"d[{k}] = (uint32_t)((uint64_t)m->{port} >> {32 * k});" for k in range(_words(width)))


def pack_words(fields: list[tuple[np.ndarray, int]]) -> np.ndarray:
    """Rows of fields (each ``(values, width)``, ``values`` of shape (M,), least significant
    field first) packed into an (M, words) array of little-endian uint32 words."""
    bits = np.concatenate([(np.asarray(v, np.uint64)[:, None] >> np.arange(w, dtype=np.uint64)) & np.uint64(1)
                           for v, w in fields], axis=1).astype(np.uint8)
    bits = np.pad(bits, ((0, 0), (0, -bits.shape[1] % 32)))
    return np.packbits(bits, axis=1, bitorder="little").view("<u4")


def unpack_words(words: np.ndarray, width: int, count: int) -> np.ndarray:
    """The inverse of :func:`pack_words` for ``count`` fields of ``width`` bits: (M, count) uint64."""
    bits = np.unpackbits(np.ascontiguousarray(words, "<u4").view(np.uint8), axis=1, bitorder="little")
    fields = bits[:, :width * count].reshape(len(words), count, width).astype(np.uint64)
    return (fields << np.arange(width, dtype=np.uint64)).sum(axis=2, dtype=np.uint64)


class MxuModel:
    """One MXU configuration (``hdl.build`` parameters) compiled with the stream-driving
    shim; ``verilog(text) -> text`` alters the generated Verilog first (to break the unit
    on purpose). With output accumulators (``acc_depth``) every X row carries ``(addr,
    first, last)`` (``run``'s ``control``)."""

    def __init__(self, params: dict, *, verilog=None):
        self.params = params

        def prepare(manifest, text):
            self.verilog_sha256 = hashlib.sha256(text.encode()).hexdigest()   # the design checked
            self.widths = {p["name"]: p["width"] for p in manifest["ports"]}
            wd = self.widths
            shim = (_SHIM.replace("@SEED@", _SEED if "seed" in wd else "")
                    .replace("@PUT_W@", _put("w__payload", wd["w__payload"]))
                    .replace("@PUT_X@", _put("x__payload", wd["x__payload"]))
                    .replace("@GET_Y@", _get("y__payload", wd["y__payload"]))
                    .replace("@GET_F@", _get("flags", wd["flags"])))
            for tag, port in (("@WW@", "w__payload"), ("@XW@", "x__payload"), ("@YW@", "y__payload"),
                              ("@FW@", "flags")):
                shim = shim.replace(tag, str(_words(wd[port])))
            # Verilator spells ``__`` in a port name as ``___05F``.
            return text, None, re.sub(r"(m->[a-z]+)__", r"\1___05F", shim)

        self.name, self.manifest, self.folder, library = compile_unit("mxu", params, prepare, verilog=verilog)
        self.lib = ctypes.CDLL(str(library))
        self.lib.unit_new.restype = ctypes.c_void_p
        self.lib.unit_free.argtypes = [ctypes.c_void_p]
        self.lib.mxu_run.restype = ctypes.c_uint64
        u64, u32, ptr = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p
        self.lib.mxu_run.argtypes = [ptr, u64, ptr, u64, ptr, u64, ptr, ptr, u32, ctypes.c_int, u32, u32, u32, u32,
                                     u64, u64, u64, ptr]
        self._handle = ctypes.c_void_p(self.lib.unit_new())
        p = self.manifest["parameters"]
        self.k, self.n, self.latency = p["rows"], p["cols"], self.manifest["latency"]
        self.in_fmt, self.acc_fmt = format_param("in_fmt", p["in_fmt"]), format_param("acc_fmt", p["acc_fmt"])
        self.port_fmt = self.acc_fmt if p["convert_inputs"] else self.in_fmt
        self.out_fmt = self.acc_fmt if p["out_rounding"] is None else self.in_fmt
        self.has_seed = "seed" in self.widths
        self.acc_depth = p["acc_depth"]

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self.lib.unit_free(handle)

    def run(self, xs, tiles, swaps, *, control=None, seed: int = 0, handshake_seed: int = 1,
            x_bubbles: float = 0.25, w_bubbles: float = 0.2, y_stalls: float = 0.3, corrupt: int = 0) -> dict:
        """Stream ``xs`` (M x K, with ``swaps`` marks and, with accumulators, ``control``:
        one ``(addr, first, last)`` per row) and ``tiles`` (loaded in order) through the
        model; return ``y`` (the recorded rows, (rows, N) uint64; one per ``last`` row with
        accumulators), ``transfers`` (every ``y`` transfer, recorded or not), ``flags`` (the
        sticky flags at the end), ``cycles``. ``corrupt`` > 0 flips bit 0 of the
        ``corrupt``-th recorded row (a mutant)."""
        for name, rate in (("x_bubbles", x_bubbles), ("w_bubbles", w_bubbles), ("y_stalls", y_stalls)):
            if not 0 <= rate < 1:
                raise ValueError(f"{name} must be in [0, 1), not {rate}")
        width = self.port_fmt.width
        xs = np.asarray(xs)
        fields = [(xs[:, i], width) for i in range(self.k)] + [(np.asarray(swaps, np.uint64), 1)]
        ny = len(xs)
        if self.acc_depth:
            control = np.asarray(control, np.uint64).reshape(-1, 3) if control is not None else None
            if control is None or len(control) != len(xs):
                raise ValueError(f"acc_depth={self.acc_depth} needs control: one (addr, first, last) per X row")
            if (control[:, 0] >= self.acc_depth).any():
                raise ValueError(f"control addr must be in 0..{self.acc_depth - 1}, not {int(control[:, 0].max())}")
            fields += [(control[:, 0], max(self.acc_depth - 1, 0).bit_length()), (control[:, 1], 1),
                       (control[:, 2], 1)]
            ny = int(control[:, 2].astype(bool).sum())
        elif control is not None:
            raise ValueError("control needs output accumulators (acc_depth > 0)")
        x = pack_words(fields)
        w_rows = np.concatenate([np.asarray(t) for t in tiles]) if len(tiles) else np.zeros((0, self.n))
        w = pack_words([(w_rows[:, j], width) for j in range(self.n)])
        y = np.zeros((ny, _words(self.widths["y__payload"])), np.uint32)
        flags = np.zeros(_words(self.widths["flags"]), np.uint32)
        cycles = ctypes.c_uint64()
        x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
        limit = 64 * (len(xs) + len(w_rows)) + 100 * self.latency + 1000
        got = self.lib.mxu_run(self._handle, len(w_rows), w.ctypes.data, len(xs), x.ctypes.data, ny, y.ctypes.data,
                               flags.ctypes.data, seed & 0xFFFFFFFF, self.has_seed, handshake_seed & 0xFFFFFFFF,
                               round(256 * w_bubbles), round(256 * x_bubbles), round(256 * y_stalls),
                               self.latency + 8, limit, corrupt, ctypes.byref(cycles))
        recorded = min(got, ny)
        return {"y": unpack_words(y[:recorded], self.out_fmt.width, self.n), "transfers": int(got),
                "flags": int(unpack_words(flags[None], self.widths["flags"], 1)[0, 0]), "cycles": cycles.value}


def check(model: MxuModel, vectors: int, seed: int, *, swap_rate: float = 1 / 8, golden_swaps=None, **run) -> dict:
    """Random rows, tiles and swaps from ``seed``, run through ``model`` and compared with
    ``golden.mxu.stream``. ``golden_swaps(swaps) -> swaps`` alters the marks golden sees
    (a mutant). Returns the figures and the first mismatching rows."""
    rng = np.random.default_rng(seed)
    xs, tiles, swaps = rows_and_tiles(model.k, model.n, vectors, model.port_fmt, rng, swap_rate)
    cancelling(xs, tiles, model.port_fmt, rng)
    mxu_seed = int(rng.integers(0, 2 ** 32))
    start = time.perf_counter()
    out = model.run(xs, tiles, swaps, seed=mxu_seed, handshake_seed=int(rng.integers(1, 2 ** 32)), **run)
    simulated = time.perf_counter()
    p = model.manifest["parameters"]
    want = stream(xs, tiles, swaps if golden_swaps is None else golden_swaps(swaps.copy()), in_fmt=model.in_fmt,
                  acc_fmt=model.acc_fmt, convert_inputs=p["convert_inputs"], out_rounding=p["out_rounding"],
                  seed=mxu_seed, sr_bits=p["sr_bits"], accumulation=p.get("accumulation"))
    sticky = np.bitwise_or.reduce(want.row_flags, axis=0) if len(xs) else np.zeros(model.n, np.uint8)
    want_flags = sum(int(f) << (5 * j) for j, f in enumerate(sticky))
    got = out["y"]
    rows = min(len(got), len(want.y))
    bad = np.flatnonzero((got[:rows] != want.y[:rows]).any(axis=1))
    seconds = time.perf_counter() - start
    macs = vectors * model.k * model.n
    return {"module": model.name, "verilog_sha256": model.verilog_sha256, "rows": vectors, "tiles": len(tiles), "transfers": out["transfers"],
            "golden_rows": len(want.y), "mismatches": int(len(bad)) + abs(out["transfers"] - len(want.y)),
            "flags": out["flags"], "golden_flags": want_flags, "flags_match": out["flags"] == want_flags,
            "first_mismatches": [{"row": int(i), "got": [hex(v) for v in got[i]], "golden": [hex(v) for v in want.y[i]]}
                                 for i in bad[:5]],
            "cycles": out["cycles"], "seconds": seconds, "simulation_seconds": simulated - start,
            "macs": macs, "macs_per_s": macs / seconds, "seed": seed, "swap_rate": swap_rate,
            "handshakes": run}


@command("python -m sim.compiled.mxu")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.compiled.mxu", description=__doc__.splitlines()[0])
    add_unit_arguments(parser, UNITS["mxu"], skip=("acc_depth", "axi_stream"))
    parser.add_argument("--vectors", type=int, default=100_000, help="X rows, 1..10**8 (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the rows, tiles, swaps and handshakes (default 1)")
    parser.add_argument("--swap-rate", type=float, default=1 / 8, help="fraction of rows loading a new tile (default 1/8)")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON report (default build/results/compiled_mxu_MODULE.json)")
    args = parser.parse_args(argv)
    if not 1 <= args.vectors <= 10 ** 8:
        parser.error(f"--vectors must be in 1..10**8, not {args.vectors}")
    if not 0 <= args.seed < 2 ** 63:
        parser.error(f"--seed must be in 0..2**63-1, not {args.seed}")
    if not 0 <= args.swap_rate <= 1:
        parser.error(f"--swap-rate must be in [0, 1], not {args.swap_rate}")
    params = {p.name: getattr(args, p.name) for p in UNITS["mxu"].params if p.name not in ("acc_depth", "axi_stream")}
    if params["out_rounding"] == "none":
        params["out_rounding"] = None
    unit = UNITS["mxu"]
    plan = unit.plan(**params)[0]
    out = args.out or build_dir("results", f"compiled_mxu_{module_name(unit, plan)}.json")
    check_output(out, "--out")                              # before the build
    model = MxuModel(params)
    report = check(model, args.vectors, args.seed, swap_rate=args.swap_rate)
    print(f"{report['module']}: {report['rows']} rows, {report['tiles']} tiles, {report['transfers']} y transfers "
          f"(golden {report['golden_rows']}), {report['mismatches']} mismatches, flags "
          f"{'match' if report['flags_match'] else 'DIFFER'}, {report['cycles']} cycles, "
          f"{report['seconds']:.2f} s ({report['simulation_seconds']:.2f} s simulating), "
          f"{report['macs_per_s']:.3g} MACs checked/s")
    write_text(out, json.dumps(report, indent=2) + "\n")
    print(f"report: {out}")
    return 0 if report["mismatches"] == 0 and report["flags_match"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
