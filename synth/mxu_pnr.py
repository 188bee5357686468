"""The MXU placed and routed on real parts: Fmax, utilisation and peak GMAC/s per array size.

``python -m synth.mxu_pnr --arch ecp5 --sizes 2x2:m6a9,8x8:m6a9`` places and routes each
array from the files ``python -m hdl.build mxu`` writes (``--source verilog``, the default:
the Verilog and its floorplan script, ``hdl.floorplan``) or from Amaranth's own netlist
(``--source rtlil``, the runs before), inside ``synth/pnr.py``'s ``FmaxHarness`` (every
input from a scrambled shift register, every output registered), one run at a time, caching
each result under ``build/results/mxu-pnr/`` as it comes and merging it into the CSV
(``--csv``) after each. ``--verilog NAME.json`` places an array a user generated, with the
scripts beside it. The harness scrambles its inputs (``FmaxHarness(scramble=True)``; the
CSV's ``harness`` column: ``shift`` for the runs made before) so that the array's delay
registers stay its own. A run that does not fit the part is recorded with nextpnr's
reason (its log's ERROR line); a tool that stops for any other reason (a crash, a missing
file) is reported as FAILED, nothing is recorded or cached, and the command exits 1. Peak GMAC/s is ``rows * cols * Fmax`` (one multiply-accumulate per PE
per cycle: the array never stalls). On ECP5 each PE's multiplier is pinned to a DSP site
(``--floorplan dsp``, the default there: ``NAME_lfe5u85f.ys``; ``none`` leaves the sites to
nextpnr); the Verilog keeps the weight path's and the buffer tag's registers apart
(``hdl.keep``; the CSV's ``keep`` column), so ``--floorplan none`` is the plain flow: the
Verilog alone through plain ``synth_ecp5`` and nextpnr.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from golden.column import OLD_SEQUENTIAL, SEQUENTIAL, accumulation_param
from golden.tools.cli import Parser, build_dir, check_output, command, merge_csv, progress
from hdl.designs import identity
from hdl.target import mxu_identity, mxu_row_config
from hdl.units import UNITS, emit
from hdl.floorplan import mxu_plan, script_paths, yosys_script
from hdl.keep import keep_script

from . import ROOT
from .pnr import TARGET_MHZ, VerilogDesign, VerilogUnit
from hdl.toolchain import tool_versions

from .timing.runs import HARDWARE, harness_ffs, locked

__all__ = ["parse_size", "run", "main"]

COLUMNS = ["arch", "rows", "cols", "mul_stages", "add_stages", "pe", "accumulation", "mul_dsp", "fifo_ram", "source", "clock_mhz", "floorplan",
           "harness", "keep", "sync_resets", "latency", "fits", "fmax_mhz", "gmac_s", "lut", "lut_total", "util_pct", "ff", "dsp", "path_from",
           "path_to", "path_logic_ns", "path_route_ns", "y_from", "seconds", "seed", "design", "tools", "note"]
#: What ``hdl.keep`` keeps, in the CSV's ``keep`` column (runs before the tag was kept too:
#: ``weight path``; without the keep script that kept them before the Verilog did: ``none``).
KEPT = "weight path, tag"
_SIZE = re.compile(r"^(\d+)x(\d+):m(\d+)a(\d+)$")


def parse_size(text: str) -> tuple[int, int, int, int]:
    """``RxC:mMaA`` -> (rows, cols, mul_stages, add_stages)."""
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"--sizes {text!r}: use RxC:mMaA, e.g. 8x8:m6a9")
    return tuple(int(g) for g in match.groups())


def _design(size, source: str, floorplan: str, work: Path, manifest: Path | None):
    """What to place (the MXU component, or the ``VerilogDesign`` of its ``hdl.build``
    files, a ``VerilogUnit`` only when placed), its parameters and the Yosys scripts before
    (``hdl.keep.keep_script`` for Amaranth's netlist; the Verilog carries it) and after
    synthesis."""
    if manifest is not None:
        unit = VerilogDesign.read(manifest)
        params, name, out = unit.parameters, unit.module, manifest.parent
    else:
        rows, cols, mul_stages, add_stages = size
        component, values = UNITS["mxu"].build(rows=rows, cols=cols, mul_stages=mul_stages, add_stages=add_stages)
        params = {"rows": rows, "cols": cols, "mul_stages": mul_stages, "add_stages": add_stages,
                  "fused_pe": component.fused_pe}
        if source == "rtlil":
            plan = mxu_plan(rows, cols) if floorplan == "dsp" else None
            return component, params, keep_script(), yosys_script(plan) if plan else ""
        out = work / "verilog"
        out.mkdir(parents=True, exist_ok=True)
        v_path, j_path = emit(UNITS["mxu"], component, values, out)
        unit, name = VerilogDesign.read(j_path), v_path.stem
    scripts = script_paths(params["rows"], params["cols"], name, out)
    if floorplan == "dsp" and not scripts:
        raise ValueError(f"{name}: no {name}_lfe5u85f.ys beside it (python -m hdl.build mxu writes it)")
    return unit, params, "", scripts[0].read_text() if floorplan == "dsp" else ""


def y_drivers(netlist: Path) -> str:
    """What drives the MXU's ``y`` payload in the synthesised netlist (Yosys ``top.json``): the
    cell types feeding the harness's ``out_y...payload`` registers, with counts, e.g.
    ``TRELLIS_FF 128`` (fabric flip-flops) or ``DP16KD 128`` (a block RAM's read port)."""
    module = json.loads(netlist.read_text())["modules"]["top"]
    driver = {bit: cell["type"] for cell in module["cells"].values()
              for port, bits in cell["connections"].items() if cell["port_directions"].get(port) == "output"
              for bit in bits}
    counts: dict[str, int] = {}
    for name, cell in module["cells"].items():
        if name.startswith("out_y_") and "payload" in name and "FF" in cell["type"]:
            for port in ("DI", "D"):          # ECP5's TRELLIS_FF, iCE40's SB_DFF*
                for bit in cell["connections"].get(port, []):
                    kind = driver.get(bit, "constant")
                    counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))


def run(arch: str, size: tuple[int, int, int, int] | None, cache: Path, lock, clock_mhz: float,
        floorplan: str = "none", seed: int | None = None, source: str = "verilog",
        manifest: Path | None = None, sync_resets: bool = True) -> dict:
    """One place and route of the MXU ``size`` (or of the ``hdl.build`` files of ``manifest``)
    on ``arch``'s board with its clock constrained to ``clock_mhz``, its multipliers pinned by
    ``floorplan`` (``dsp`` or ``none``), built from ``source`` (``verilog`` or ``rtlil``);
    ``sync_resets=False``: synthesised without inferred synchronous resets
    (``pnr.NO_SYNC_RESETS``); cached by design, scripts, constraint, source and tool versions."""
    from .pnr import SEED, place_and_route

    seed = SEED if seed is None else seed
    name = (f"{arch}_" + (manifest.stem if manifest else "mxu_{}x{}_m{}a{}".format(*size))
            + f"_c{clock_mhz:g}_{source}" + _flow_suffix(floorplan, sync_resets) + f"_seed{seed}")
    work = cache / "work" / name
    unit, params, keep, script = _design(size, source, floorplan, work, manifest)
    design = (unit.verilog if source == "verilog" else
              "".join((ROOT / p).read_text() for p in [*HARDWARE, "hdl/mxu/array.py", "hdl/units.py", "hdl/ports.py"]))
    settings = [arch, seed, tool_versions(), clock_mhz, source, keep, script, _old_spelling(params)] + \
        ([] if sync_resets else ["nosr"])
    key = hashlib.sha256((json.dumps(settings) + design).encode()).hexdigest()[:16]
    path = cache / f"{name}_{key}.json"
    column = accumulation_param("accumulation", params.get("accumulation", params.get("accumulator")))
    accumulation = SEQUENTIAL if column is None else str(column)
    if path.exists():
        result = _renamed(json.loads(path.read_text()))
        if "accumulation" not in result:        # cached before the column was added
            result["accumulation"] = accumulation
            path.write_text(json.dumps(result))
        if "design" not in result and source == "verilog":
            # Cached before identities were recorded: the key holds the Verilog placed.
            result["design"] = identity(unit.verilog)
            path.write_text(json.dumps(result))
        return result
    rows, cols = params["rows"], params["cols"]
    start = time.perf_counter()
    result = {"arch": arch, "rows": rows, "cols": cols, "mul_stages": params["mul_stages"],
              "add_stages": params["add_stages"], "clock_mhz": clock_mhz, "floorplan": floorplan,
              "harness": "scrambled", "keep": KEPT, "source": source,
              "sync_resets": "inferred" if sync_resets else "none",
              "pe": "fused" if params["fused_pe"] else "generic", "accumulation": accumulation,
              "mul_dsp": params.get("mul_dsp", "inferred"),
              "fifo_ram": params.get("fifo_ram", "block"), "latency": unit.latency, "seed": seed, "tools": tool_versions()}
    # The design's identity (hdl.designs): the Verilog placed, or what hdl.build writes for
    # the array whose Amaranth netlist was placed.
    result["design"] = identity(unit.verilog) if source == "verilog" else mxu_identity(mxu_row_config(result))
    if isinstance(unit, VerilogDesign):
        unit = VerilogUnit(unit)
    try:
        with locked(lock):
            figures = place_and_route(unit, arch, work, details=True, clock_mhz=clock_mhz,
                                      script_after_read=keep, script_after_synth=script,
                                      scramble=True, seed=seed, sync_resets=sync_resets)
    except Exception as error:
        result.update(fits=False, note=_not_fitting(work, error), seconds=round(time.perf_counter() - start, 1))
    else:
        result.update(_figures(figures, unit, arch, rows, cols, work), seconds=round(time.perf_counter() - start, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def _flow_suffix(floorplan: str, sync_resets: bool) -> str:
    """A run's name's part for the flow options that are not the default."""
    return ("_fp" if floorplan == "dsp" else "") + ("" if sync_resets else "_nosr")


#: What nextpnr says of a design the part cannot hold (an ERROR line): anything else that
#: stops the flow is a failure, not a result.
_NOT_FITTING = re.compile(r"ERROR:.*(fit|utili[sz]ation|unable to place|failed to place|too many|exceed)", re.I)


class FlowFailed(RuntimeError):
    """A tool of the flow stopped for another reason than the design not fitting: nothing is
    recorded or cached."""


def _not_fitting(work: Path, error: Exception) -> str:
    """nextpnr's reason why the design does not fit the part (its log's ERROR line), or
    ``FlowFailed`` with the tool's error when the log gives none."""
    log = (work / "top.tim").read_text() if (work / "top.tim").exists() else ""
    reasons = [line for line in log.splitlines() if _NOT_FITTING.search(line)]
    if not reasons:
        raise FlowFailed(f"{type(error).__name__}: {error}") from error
    return reasons[-1].strip()[:300]


def _figures(figures: dict, unit, arch: str, rows: int, cols: int, work: Path) -> dict:
    """A placed design's row: Fmax, GMAC/s, cells, utilisation, the critical path."""
    cells = figures.pop("cells")
    lut_cell = "TRELLIS_COMB" if arch == "ecp5" else "ICESTORM_LC"
    fmax = figures[f"{arch}_fmax_mhz"]
    return dict(fits=True, fmax_mhz=fmax, gmac_s=round(rows * cols * fmax / 1000, 2),
                lut=cells.get(lut_cell, 0), util_pct=figures[f"{arch}_util_pct"],
                lut_total=figures[f"{arch}_pnr_total"],
                ff=(max(0, cells.get("TRELLIS_FF", 0) - harness_ffs(unit, scramble=True)) if arch == "ecp5" else None),
                dsp=cells.get("MULT18X18D", cells.get("ICESTORM_DSP", 0)),
                y_from=y_drivers(work / "top.json") if (work / "top.json").exists() else None,
                **{k: figures.get(k) for k in ("path_from", "path_to", "path_logic_ns", "path_route_ns")})


#: What tells two runs apart: a rerun of the same design replaces its row; a new design's
#: runs go beside the old ones, which stay as history (stale: ``python -m synth.stale``).
KEY = ["arch", "rows", "cols", "mul_stages", "add_stages", "pe", "accumulation", "mul_dsp", "fifo_ram", "source", "clock_mhz", "floorplan", "harness",
       "keep", "sync_resets", "seed", "design"]
#: The values of columns added later, for the runs made before them.
BEFORE = {"pe": "generic", "accumulation": SEQUENTIAL, "mul_dsp": "inferred", "fifo_ram": "block", "source": "rtlil", "floorplan": "none", "harness": "shift", "keep": "none",
          "sync_resets": "inferred", "seed": 1}


def run_key(r: dict) -> tuple:
    return tuple("" if r.get(k) is None else str(r.get(k)) for k in KEY)


def _renamed(r: dict) -> dict:
    """A run recorded before the column sum's scheme was renamed (cached results, CSV rows:
    ``accumulator``, ``fp32`` for ``sequential``) as recorded now (``accumulation``)."""
    if "accumulator" not in r:
        return r
    old = {k: v for k, v in r.items() if k != "accumulator"}
    return {**old, "accumulation": SEQUENTIAL if r["accumulator"] == OLD_SEQUENTIAL else r["accumulator"]}


def _old_spelling(params: dict) -> dict:
    """A manifest's parameters as they were spelled before the rename (``accumulator``,
    ``fp32``): the cache keys of the runs made before stay theirs."""
    return {("accumulator" if k == "accumulation" else k): (OLD_SEQUENTIAL if (k, v) == ("accumulation", SEQUENTIAL)
                                                             else v) for k, v in params.items()}


def write_csv(rows: list[dict], path: Path) -> None:
    """Merge ``rows`` into the CSV at ``path`` by ``KEY`` (``BEFORE`` and the part's default
    clock fill the columns older rows lack)."""
    def filled(r):
        r = _renamed(r)
        before = {**BEFORE, "clock_mhz": TARGET_MHZ[r["arch"]]}
        return {**before, **{k: v for k, v in r.items() if v not in ("", None) or k not in before}}
    merge_csv(path, rows, COLUMNS, run_key, normalise=filled)


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.mxu_pnr", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", choices=("ecp5", "ice40"), default="ecp5", help="default ecp5")
    parser.add_argument("--sizes", default=None, help="comma-separated RxC:mMaA (default 2x2:m6a9)")
    parser.add_argument("--source", choices=("verilog", "rtlil"), default="verilog",
                        help="verilog: the files python -m hdl.build mxu writes, with their synthesis "
                             "scripts (default); rtlil: Amaranth's netlist with the same scripts")
    parser.add_argument("--verilog", type=Path, default=None, metavar="NAME.json",
                        help="place an array python -m hdl.build mxu wrote (its manifest; NAME.v and "
                             "the NAME_*.ys scripts beside it) instead of --sizes")
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
    parser.add_argument("--no-sync-resets", action="store_true",
                        help="ecp5: synthesise without the synchronous resets Yosys infers from a register "
                             "fed by a zeroing multiplexer (synth.pnr.NO_SYNC_RESETS; docs/timing-elements.md)")
    parser.add_argument("--seeds", default="1", metavar="S,S,...",
                        help="nextpnr seeds, each size placed and routed with each (default 1)")
    return parser


def _designs(args, parser, floorplan: str):
    """``(sizes, manifest)``: the ``--sizes`` to build (each checked, with its DSP plan), or
    ``[None]`` and the ``--verilog`` manifest; a bad one ends in ``parser.error``."""
    if args.verilog is None:
        sizes = [parse_size(s) for s in (args.sizes or "2x2:m6a9").split(",")]
        for rows, cols, m, a in sizes:
            UNITS["mxu"].plan(rows=rows, cols=cols, mul_stages=m, add_stages=a)
            if floorplan == "dsp":
                try:
                    mxu_plan(rows, cols)
                except ValueError as error:
                    parser.error(f"--sizes {rows}x{cols}: {error} (--floorplan none leaves the sites to nextpnr)")
        return sizes, None
    if args.sizes is not None:
        parser.error("give --sizes or --verilog, not both")
    manifest = args.verilog.with_suffix(".json")
    try:
        facts = json.loads(manifest.read_text())
        if facts.get("unit") != "mxu" or not manifest.with_suffix(".v").exists():
            raise ValueError("not an MXU's manifest beside its .v")
        params = facts["parameters"]
        if floorplan == "dsp" and not script_paths(params["rows"], params["cols"], facts["module"], manifest.parent):
            raise ValueError("the array has no DSP plan on the LFE5U-85F (--floorplan none)")
    except (OSError, ValueError, KeyError) as error:
        parser.error(f"--verilog {args.verilog}: {error}")
    return [None], manifest


@command("python -m synth.mxu_pnr")
def main(argv=None) -> int:
    parser = _parser()
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
    if args.no_sync_resets and args.arch != "ecp5":
        parser.error("--no-sync-resets is a synth_ecp5 flow: give --arch ecp5")
    sizes, manifest = _designs(args, parser, floorplan)
    check_output(args.csv, "--csv")
    check_output(args.cache, "--cache", folder=True)
    with progress(len(sizes) * len(seeds), "place and route", "design") as bar:
        failed = 0
        for size, seed in ((size, seed) for size in sizes for seed in seeds):
            try:
                r = run(args.arch, size, args.cache, args.lock, clock_mhz, floorplan, seed,
                        "verilog" if manifest else args.source, manifest, sync_resets=not args.no_sync_resets)
            except FlowFailed as error:
                failed += 1
                design = "{}x{}:m{}a{}".format(*size) if size else manifest.stem
                bar.write(f"{args.arch} {design} seed {seed}: FAILED ({error}); nothing recorded")
                bar.update()
                continue
            bar.write(f"{args.arch} {r['rows']}x{r['cols']} m{r['mul_stages']}a{r['add_stages']} seed {seed} "
                      f"({r['source']}, clock {clock_mhz:g} MHz, floorplan {floorplan}"
                      + (", no inferred sync resets" if args.no_sync_resets else "") + "): "
                      + (f"{r['fmax_mhz']:.1f} MHz, {r['gmac_s']} GMAC/s, LUT {r['lut']} ({r['util_pct']} %), "
                         f"latency {r['latency']}" if r["fits"] else f"does not fit: {r['note']}"))
            write_csv([r], args.csv)
            bar.update()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
