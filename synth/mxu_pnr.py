"""The MXU placed and routed on real parts: Fmax, utilisation and peak GMAC/s per array size.

``python -m synth.mxu_pnr --arch ecp5 --sizes 2x2:m6a9,8x8:m6a9`` places and routes each
array inside ``synth/pnr.py``'s ``FmaxHarness`` (every stream signal from the input shift
register, every output registered), one run at a time, caching each result under
``build/results/mxu-pnr/`` as it comes and rewriting ``docs/mxu-pnr.csv`` after each. The
harness scrambles its inputs (``FmaxHarness(scramble=True)``; the CSV's ``harness`` column:
``shift`` for the runs made before) so that the array's delay registers stay its own. A run
that does not fit the part is recorded with nextpnr's utilisation message. Peak GMAC/s is
``rows * cols * Fmax`` (one multiply-accumulate per PE per cycle: the array never stalls).
On ECP5 each PE's multiplier is pinned to a DSP site by ``synth.floorplan`` (``--floorplan
dsp``, the default there; ``none`` leaves the sites to nextpnr). ``KEEP_WEIGHT_PATH`` keeps
the weight path's per-column registers apart (the CSV's ``keep`` column).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import time
from pathlib import Path

from golden.cli import Parser, build_dir, check_output, command, progress, write_text
from hdl.build import UNITS

from .floorplan import mxu_plan, yosys_script
from .pnr import TARGET_MHZ
from .timing import HARDWARE, ROOT, _locked, harness_ffs, tools

__all__ = ["parse_size", "run", "main"]

COLUMNS = ["arch", "rows", "cols", "mul_stages", "add_stages", "pe", "clock_mhz", "floorplan", "harness", "keep",
           "latency", "fits", "fmax_mhz", "gmac_s", "lut", "lut_total", "util_pct", "ff", "dsp", "path_from",
           "path_to", "path_logic_ns", "path_route_ns", "seconds", "seed", "tools", "note"]
#: Yosys command (before synthesis) marking the flip-flops of the weight path (``wload*``: a
#: ``w`` row travelling down each column, docs/mxu.md) ``keep``. Every column's copy of a
#: row's write enable, tile row and buffer holds the same value, and Yosys merges identical
#: flip-flops, which turned the per-column registers back into one net across each row of
#: PEs (the 8x8's critical path); ``keep`` on the cells stops that (on the wires it does not).
KEEP_WEIGHT_PATH = "setattr -set keep 1 w:wload* %ci1:+$dff[Q] t:$dff %i"
_SIZE = re.compile(r"^(\d+)x(\d+):m(\d+)a(\d+)$")


def parse_size(text: str) -> tuple[int, int, int, int]:
    """``RxC:mMaA`` -> (rows, cols, mul_stages, add_stages)."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"--sizes {text!r}: use RxC:mMaA, e.g. 8x8:m6a9")
    return tuple(int(g) for g in match.groups())


def run(arch: str, size: tuple[int, int, int, int], cache: Path, lock, clock_mhz: float,
        floorplan: str = "none", seed: int | None = None) -> dict:
    """One place and route of the MXU ``size`` on ``arch``'s board with its clock constrained
    to ``clock_mhz`` and its multipliers pinned by ``floorplan`` (``dsp`` or ``none``; cached
    by design, constraint, floorplan, source and tool versions)."""
    from .pnr import SEED, place_and_route

    seed = SEED if seed is None else seed
    rows, cols, mul_stages, add_stages = size
    unit, _ = UNITS["mxu"].build(rows=rows, cols=cols, mul_stages=mul_stages, add_stages=add_stages)
    # The units' sources and the array's own (HARDWARE leaves the array out: the unit runs
    # of synth.timing do not depend on it).
    script = yosys_script(mxu_plan(rows, cols)) if floorplan == "dsp" else ""
    settings = [arch, size, seed, tools(), clock_mhz, KEEP_WEIGHT_PATH] + ([script] if script else [])
    key_text = json.dumps(settings) + "".join((ROOT / p).read_text() for p in [*HARDWARE, "hdl/mxu.py"])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    name = (f"{arch}_{rows}x{cols}_m{mul_stages}a{add_stages}_c{clock_mhz:g}" + ("_fp" if script else "") + "_k"
            + ("" if seed == SEED else f"_seed{seed}"))
    path = cache / f"{arch}_mxu_{name.partition('_')[2]}_{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    work = cache / "work" / name
    start = time.perf_counter()
    result = {"arch": arch, "rows": rows, "cols": cols, "mul_stages": mul_stages, "add_stages": add_stages,
              "clock_mhz": clock_mhz, "floorplan": floorplan, "harness": "scrambled", "keep": "weight path",
              "pe": "fused" if unit.fused_pe else "generic", "latency": unit.latency, "seed": seed, "tools": tools()}
    try:
        with _locked(lock):
            figures = place_and_route(unit, arch, work, details=True, clock_mhz=clock_mhz,
                                      script_after_read=KEEP_WEIGHT_PATH, script_after_synth=script,
                                      scramble=True, seed=seed)
    except Exception as error:          # does not fit, or a tool failed: say which, from the log
        log = (work / "top.tim").read_text() if (work / "top.tim").exists() else ""
        lines = log.strip().splitlines() or str(error).strip().splitlines() or [type(error).__name__]
        errors = [line for line in lines if "ERROR" in line]      # nextpnr's reason, when it gave one
        result.update(fits=False, note=(errors or lines)[-1][:300], seconds=round(time.perf_counter() - start, 1))
    else:
        cells = figures.pop("cells")
        lut_cell = "TRELLIS_COMB" if arch == "ecp5" else "ICESTORM_LC"
        fmax = figures[f"{arch}_fmax_mhz"]
        result.update(fits=True, fmax_mhz=fmax, gmac_s=round(rows * cols * fmax / 1000, 2),
                      lut=cells.get(lut_cell, 0), util_pct=figures[f"{arch}_util_pct"],
                      lut_total=figures[f"{arch}_pnr_total"],
                      ff=(max(0, cells.get("TRELLIS_FF", 0) - harness_ffs(unit, scramble=True))
                          if arch == "ecp5" else None),
                      dsp=cells.get("MULT18X18D", cells.get("ICESTORM_DSP", 0)),
                      **{k: figures.get(k) for k in ("path_from", "path_to", "path_logic_ns", "path_route_ns")},
                      seconds=round(time.perf_counter() - start, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def cached(cache: Path) -> list[dict]:
    """The newest cached run of every (arch, size, clock constraint)."""
    newest = {}
    for p in sorted(cache.glob("*_mxu_*.json"), key=lambda p: p.stat().st_mtime):
        r = json.loads(p.read_text())
        r.setdefault("clock_mhz", TARGET_MHZ[r["arch"]])       # runs from before the options
        r.setdefault("floorplan", "none")
        r.setdefault("harness", "shift")        # inputs straight from the shift register
        r.setdefault("keep", "none")
        newest[(r["arch"], r["rows"], r["cols"], r["mul_stages"], r["add_stages"], r["clock_mhz"],
                r["floorplan"], r["harness"], r["keep"])] = r
    return [newest[k] for k in sorted(newest)]


#: What tells two runs apart: a rerun replaces the row with the same key, every other stays.
KEY = ["arch", "rows", "cols", "mul_stages", "add_stages", "pe", "clock_mhz", "floorplan", "harness", "keep", "seed"]


def write_csv(rows: list[dict], path: Path) -> None:
    """Merge ``rows`` into the CSV at ``path`` by ``KEY`` (rows from before the ``pe`` column
    were all of the generic processing element)."""
    key = lambda r: tuple(str(r.get(k)) for k in KEY)       # noqa: E731
    old = [{"pe": "generic", **{k: v for k, v in r.items() if v != "" or k != "pe"}}
           for r in (csv.DictReader(path.open()) if path.exists() else [])]
    merged = {key(r): r for r in old}
    merged.update({key(r): r for r in rows})
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(merged.values())
    write_text(path, out.getvalue())


@command("python -m synth.mxu_pnr")
def main(argv=None) -> int:
    parser = Parser(prog="python -m synth.mxu_pnr", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=("ecp5", "ice40"), default="ecp5", help="default ecp5")
    parser.add_argument("--sizes", default="2x2:m6a9", help="comma-separated RxC:mMaA (default 2x2:m6a9)")
    parser.add_argument("--cache", type=Path, default=build_dir("results", "mxu-pnr"),
                        help="run cache (default build/results/mxu-pnr)")
    parser.add_argument("--csv", type=Path, default=build_dir("results", "mxu-pnr.csv"),
                        help="CSV the runs are merged into by key (default build/results/mxu-pnr.csv; "
                             "--csv docs/mxu-pnr.csv publishes)")
    parser.add_argument("--clock-mhz", type=float, default=None,
                        help="clock constraint for nextpnr's timing-driven placement, 10..500 "
                             "(default 300 on ecp5, 100 on ice40: above every design)")
    parser.add_argument("--floorplan", choices=("dsp", "none"), default=None,
                        help="dsp: pin each PE's multiplier to a DSP site in array order (ecp5 "
                             "only, its default); none: nextpnr picks the sites (ice40's default)")
    parser.add_argument("--lock", default=None, help="a file to flock around each place and route")
    parser.add_argument("--seeds", default="1", metavar="S,S,...",
                        help="nextpnr seeds, each size placed and routed with each (default 1)")
    args = parser.parse_args(argv)
    try:
        seeds = sorted({int(s) for s in args.seeds.split(",")})
    except ValueError:
        parser.error(f"--seeds {args.seeds}: give integers, e.g. 1,2,3")
    if args.clock_mhz is not None and not 10 <= args.clock_mhz <= 500:
        parser.error(f"--clock-mhz must be in 10..500, not {args.clock_mhz:g}")
    clock_mhz = args.clock_mhz or TARGET_MHZ[args.arch]
    floorplan = args.floorplan or ("dsp" if args.arch == "ecp5" else "none")
    if floorplan == "dsp" and args.arch != "ecp5":
        parser.error("--floorplan dsp is for --arch ecp5 (the LFE5U-85F's DSP sites)")
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    for rows, cols, m, a in sizes:
        UNITS["mxu"].build(rows=rows, cols=cols, mul_stages=m, add_stages=a)[0]._MustUse__silence = True
        if floorplan == "dsp":
            try:
                mxu_plan(rows, cols)
            except ValueError as error:
                parser.error(f"--sizes {rows}x{cols}: {error} (--floorplan none leaves the sites to nextpnr)")
    check_output(args.csv, "--csv")
    check_output(args.cache, "--cache", folder=True)
    with progress(len(sizes) * len(seeds), "place and route", "design") as bar:
        for size, seed in ((size, seed) for size in sizes for seed in seeds):
            r = run(args.arch, size, args.cache, args.lock, clock_mhz, floorplan, seed)
            bar.write(f"{args.arch} {r['rows']}x{r['cols']} m{r['mul_stages']}a{r['add_stages']} seed {seed} "
                      f"(clock {clock_mhz:g} MHz, floorplan {floorplan}): "
                      + (f"{r['fmax_mhz']:.1f} MHz, {r['gmac_s']} GMAC/s, LUT {r['lut']} ({r['util_pct']} %), "
                         f"latency {r['latency']}" if r["fits"] else f"does not fit: {r['note']}"))
            write_csv(cached(args.cache), args.csv)
            bar.update()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
