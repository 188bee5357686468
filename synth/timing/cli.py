"""``python -m synth.timing``'s command line: the runs the options select, their outputs, the
model's refit."""

from __future__ import annotations

from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, progress
from hdl import timing

from .. import ROOT
from .designs import PLAN, UNITS
from .model import fit, write_model
from .report import csv_rows, markdown, write_outputs, write_seeds
from .runs import cached_rows, latest, run

def _seeds(parser, text):
    if text is None:
        return []
    try:
        seeds = sorted({int(s) for s in text.split(",")})
    except ValueError:
        parser.error(f"--seeds {text}: give integers, e.g. 1,2,3")
    if not all(0 <= s < 2 ** 31 for s in seeds):
        parser.error(f"--seeds {text}: each in 0..2147483647")
    return seeds


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="ecp5", help="ecp5, ice40 or ecp5,ice40 (default ecp5)")
    parser.add_argument("--cache", type=Path, default=build_dir("results", "timing"),
                        help="run cache (default build/results/timing)")
    out = build_dir("results", "timing-out")
    parser.add_argument("--docs", type=Path, default=out,
                        help=f"folder of timing.csv, timing-seeds.csv and the plot, merged by key (default {out}; "
                             "--docs docs publishes)")
    parser.add_argument("--lock", default=None, help="a file to flock around each place and route")
    parser.add_argument("--cached-only", action="store_true", help="write the outputs from cached runs only")
    parser.add_argument("--fit", action="store_true", help="refit the delay model from the runs (to --model-out)")
    parser.add_argument("--seeds", default=None, metavar="S,S,...",
                        help="also place and route with these nextpnr seeds (e.g. 1,2,3): each design's median, "
                             "min and max go to --docs/timing-seeds.csv (merged by part, module and seed)")
    parser.add_argument("--fit-only", action="store_true",
                        help="refit the delay model from every row of docs/timing.csv (the published "
                             "measurements) to --model-out, and write timing.csv with its predictions to "
                             "--docs; place and route nothing")
    model_out = build_dir("results", "timing-out", "timing_model.json")
    parser.add_argument("--model-out", type=Path, default=model_out,
                        help=f"where --fit and --fit-only write the model (default {model_out}; "
                             f"--model-out hdl/timing_model.json publishes the one hdl.build --target-mhz uses)")
    parser.add_argument("--only", default=None, help="run only these designs, e.g. add,pe or add:9,pe:6x9 (default all of "
                        f"{', '.join(UNITS)})")
    return parser


def _plan(parser, args) -> list[tuple]:
    """``(arch, kind, stages)`` of every design the options select; a bad one ends in
    ``parser.error``."""
    arches = args.arch.split(",")
    bad = [a for a in arches if a not in PLAN]
    if bad:
        parser.error(f"--arch {args.arch}: unknown architecture {bad[0]!r} (ecp5, ice40)")
    wanted = args.only.split(",") if args.only is not None else list(UNITS)
    bad = [w for w in wanted if w.split(":")[0] not in UNITS]
    if bad:
        parser.error(f"--only {args.only}: unknown design {bad[0]!r} ({', '.join(UNITS)})")

    def selected(kind, stages):
        depth = "{}x{}".format(*stages) if isinstance(stages, tuple) else str(stages)
        return kind in wanted or f"{kind}:{depth}" in wanted
    plan = [(arch, kind, stages) for arch in arches for kind, stages in PLAN[arch] if selected(kind, stages)]
    if not plan:
        parser.error(f"--only {args.only}: no design of the plan on {args.arch}")
    return plan


@command("python -m synth.timing")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    check_output(args.docs, "--docs", folder=True)
    if args.fit or args.fit_only:
        check_output(args.model_out, "--model-out")
    if args.fit_only:
        model = fit(csv_rows(ROOT / "docs" / "timing.csv"), timing.load_model())
        write_model(model, args.model_out)
        write_outputs(csv_rows(ROOT / "docs" / "timing.csv"), args.docs, model)
        print(f"wrote {args.docs / 'timing.csv'} with the model's predictions")
        return 0
    plan = _plan(parser, args)
    seeds = _seeds(parser, args.seeds)
    rows = []
    model = timing.load_model()
    with progress(len(plan), "place and route", "design") as bar:
        for arch, kind, stages in plan:
            bar.update()
            if args.cached_only:
                result = latest(args.cache, arch, kind, stages)
                if result is None:
                    continue
            else:
                try:
                    result = run(arch, kind, stages, args.cache, args.lock)
                except Exception as error:          # one failed run is reported, the rest go on
                    bar.write(f"FAILED {arch} {kind} {stages}: {' '.join(str(error).split())[:300]}")
                    continue
            rows.append(result)
            bar.write(f"{arch} {result['module']}: {result['fmax_mhz']:.1f} MHz, latency {result['latency']}, "
                      f"LUT {result['lut']}, FF {result['ff']} (alone: LUT {result.get('lut_alone', '-')}, "
                      f"FF {result.get('ff_alone', '-')}), DSP {result['dsp']}")
            write_outputs(cached_rows(args.cache), args.docs, model)
    if not rows:
        raise ValueError("no results: " + ("nothing of the plan is cached" if args.cached_only else "every run failed"))
    if seeds:
        runs = [run(arch, kind, stages, args.cache, args.lock, seed)
                for arch, kind, stages in plan for seed in seeds]
        print(write_seeds(runs, args.docs / "timing-seeds.csv"))
    if args.fit:
        model = fit(cached_rows(args.cache), model)
        write_model(model, args.model_out)
    rows = write_outputs(cached_rows(args.cache), args.docs, model)
    print(markdown(rows))
    return 0
