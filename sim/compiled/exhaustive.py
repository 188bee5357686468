"""Check every input of a unit against golden through its compiled model.

``python -m sim.compiled.exhaustive UNIT [the unit's hdl.build flags] [--part I/N] [--report PATH]``

Input spaces of at most 2**32 vectors are enumerated (bf16 x bf16, fp32 -> bf16, 8-bit
pairs); larger ones (fp32 adder and multiplier) take ``--vectors`` seeded random and
edge-case vectors. Finished chunks are journalled next to the report
(``REPORT.journal.jsonl``): a rerun skips them. The report (JSON) holds ``vectors``,
``mismatches``, ``seconds``, the configuration and the coverage counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from golden.coverage import merge
from golden.tools.cli import Parser, build_dir, check_output, command
from hdl.units import UNITS, module_name
from hdl.build import add_unit_arguments

from golden.tools import executor
from .chunks import MAX_EXHAUSTIVE_BITS, SHOWN, Plan, check_chunk, model_of, operand_formats

__all__ = ["main", "plan_of", "part_range", "run"]

CHECKABLE = ("mul", "add", "rounder")
DEFAULT_CHUNK = 1 << 24
DEFAULT_SAMPLE = 1 << 30


def plan_of(unit: str, params: dict, *, chunk: int = DEFAULT_CHUNK, vectors: int | None = None, seed: int = 1,
            bubbles: float = 0.2, situations: bool = True) -> Plan:
    """The plan of a configuration: exhaustive when its inputs fit ``MAX_EXHAUSTIVE_BITS``
    bits and ``vectors`` is not given, else a sample of ``vectors`` (default 2**30)."""
    plan, values = UNITS[unit].plan(**params)      # validates the parameters
    fmts, _ = operand_formats(unit, {k: getattr(plan, k, v) for k, v in values.items()})
    bits = sum(f.width for f in fmts)
    exhaustive = vectors is None and bits <= MAX_EXHAUSTIVE_BITS
    total = 1 << bits if exhaustive else (vectors or DEFAULT_SAMPLE)
    return Plan(unit, tuple(sorted(values.items())), total, min(chunk, total), exhaustive, seed, bubbles, situations)


def part_range(chunks: int, part: int, parts: int) -> range:
    """Chunk indices of part ``part`` (1-based) of ``parts`` equal parts."""
    return range((part - 1) * chunks // parts, part * chunks // parts)


def _journal(report: Path) -> Path:
    return report.with_name(report.name + ".journal.jsonl")


def _read_journal(path: Path, header: dict) -> tuple[dict, float]:
    """Finished chunks (index -> result) and seconds spent so far, if the journal is this run's."""
    if not path.exists():
        return {}, 0.0
    lines = path.read_text().splitlines()
    if not lines or json.loads(lines[0]) != header:
        raise ValueError(f"{path} journals another configuration: delete it or give another --report")
    done, seconds = {}, 0.0
    for line in lines[1:]:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:      # a line cut by an interrupt: its chunk runs again
            continue
        if "session_seconds" in entry:
            seconds += entry["session_seconds"]
        else:
            done[entry["index"]] = entry
    return done, seconds


def run(plan: Plan, indices: range, report: Path, *, workers: int = executor.DEFAULT_WORKERS,
        scheduler: str | None = None, progress: bool | None = None, verilog=None) -> dict:
    """Check the chunks ``indices`` of ``plan``, journalling each; write and return the report."""
    from functools import partial

    from tqdm import tqdm

    # The design's hash in the journal: a changed unit never resumes an old run's chunks.
    design = model_of(plan, verilog).verilog_sha256
    header = {"plan": plan.describe(), "chunks": [indices.start, indices.stop], "verilog_sha256": design}
    journal = _journal(report)
    done, seconds = _read_journal(journal, header)
    todo = [i for i in indices if i not in done]
    report.parent.mkdir(parents=True, exist_ok=True)
    if not journal.exists():
        journal.write_text(json.dumps(header) + "\n")
    begin = time.perf_counter()
    total_vectors = sum(plan.span(i)[1] for i in indices)
    bar = tqdm(total=total_vectors, initial=sum(d["vectors"] for d in done.values()), unit="vec", unit_scale=True,
               disable=not sys.stderr.isatty() if progress is None else not progress, smoothing=0.1)
    try:
        with open(journal, "a") as log:
            jobs = executor.unordered(partial(check_chunk, plan, verilog=verilog), todo, workers=workers,
                                      scheduler=scheduler)
            for k, result, error in jobs:
                if error is not None:
                    raise RuntimeError(f"chunk {todo[k]} failed: {error}") from error
                done[result["index"]] = result
                log.write(json.dumps(result) + "\n")
                log.flush()
                bar.update(result["vectors"])
    finally:
        bar.close()
        with open(journal, "a") as log:
            log.write(json.dumps({"session_seconds": time.perf_counter() - begin}) + "\n")
    seconds += time.perf_counter() - begin
    results = [done[i] for i in indices]
    classes, situations, shown = {}, {}, []
    for r in results:
        classes = merge(classes, r["classes"])
        situations = merge(situations, r.get("situations", {}))
        shown += r["first_mismatches"][:SHOWN - len(shown)]
    vectors = sum(r["vectors"] for r in results)
    out = {"configuration": {**plan.describe(), "module": _module(plan), "chunks": [indices.start, indices.stop],
                             "of_chunks": plan.chunks, "verilog_sha256": design},
           "vectors": vectors, "mismatches": sum(r["mismatches"] for r in results), "seconds": round(seconds, 2),
           "vectors_per_s": round(vectors / seconds) if seconds else None,
           "executor": executor.describe(workers, scheduler), "cycles": sum(r["cycles"] for r in results),
           "classes": classes, "first_mismatches": shown}
    if plan.situations:
        out["situations"] = situations
    partial_path = report.with_name(report.name + ".partial")
    partial_path.write_text(json.dumps(out, indent=2) + "\n")
    partial_path.replace(report)
    return out


def _module(plan: Plan) -> str:
    return module_name(UNITS[plan.unit], UNITS[plan.unit].plan(**dict(plan.params))[0])


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim.compiled.exhaustive", description=__doc__.split("\n\n")[0],
                                     epilog="Example: python -m sim.compiled.exhaustive mul --out-fmt bf16 --rounding rne")
    sub = parser.add_subparsers(dest="unit", metavar="UNIT", required=True)
    for key in CHECKABLE:
        unit = UNITS[key]
        p = sub.add_parser(key, help=unit.help, description=f"{unit.help} ({unit.cls.__name__})")
        add_unit_arguments(p, unit)
        p.add_argument("--part", default="1/1", metavar="I/N", help="check only part I (1..N) of N equal parts")
        p.add_argument("--report", type=Path, default=None,
                       help="report JSON (default build/results/exhaustive/MODULE[_partIofN].json)")
        p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run the chunks on this dask.distributed scheduler (tcp://host:8786)")
        p.add_argument("--workers", type=int, default=executor.DEFAULT_WORKERS,
                       help=f"local worker processes without --scheduler, 1..64 (default {executor.DEFAULT_WORKERS})")
        p.add_argument("--chunk", type=int, default=DEFAULT_CHUNK,
                       help=f"vectors per chunk, 1024..2**28 (default 2**24 = {DEFAULT_CHUNK})")
        p.add_argument("--vectors", type=int, default=None,
                       help="sample this many seeded random and edge-case vectors, 1..2**40 (default: every input "
                            f"when there are at most 2**{MAX_EXHAUSTIVE_BITS}, else 2**30)")
        p.add_argument("--seed", type=int, default=1, help="seed of samples, random bits and bubbles, 0..2**32-1")
        p.add_argument("--bubbles", type=float, default=0.2,
                       help="fraction of idle cycles fed to a clocked unit, 0..0.9 (default 0.2)")
        p.add_argument("--no-situations", dest="situations", action="store_false",
                       help="count result classes only (skip ties, carries, ...: about twice as fast)")
    return parser


@command("python -m sim.compiled.exhaustive")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)

    try:
        part, parts = (int(x) for x in args.part.split("/"))
    except ValueError:
        raise ValueError(f"--part must be I/N with integers, not {args.part!r}") from None
    for name, value, lo, hi in (("--chunk", args.chunk, 1024, 1 << 28), ("--workers", args.workers, 1, 64),
                                ("--seed", args.seed, 0, (1 << 32) - 1), ("--bubbles", args.bubbles, 0, 0.9)):
        if not lo <= value <= hi:
            raise ValueError(f"{name} must be in {lo}..{hi}, not {value}")
    if args.vectors is not None and not 1 <= args.vectors <= 1 << 40:
        raise ValueError(f"--vectors must be in 1..{1 << 40}, not {args.vectors}")
    params = {p.name: getattr(args, p.name) for p in UNITS[args.unit].params}
    plan = plan_of(args.unit, params, chunk=args.chunk, vectors=args.vectors, seed=args.seed,
                   bubbles=args.bubbles, situations=args.situations)
    if not 1 <= parts <= plan.chunks or not 1 <= part <= parts:
        raise ValueError(f"--part {args.part}: N must be in 1..{plan.chunks} (the chunks) and I in 1..N")
    suffix = f"_part{part}of{parts}" if parts > 1 else ""
    report = check_output(args.report or build_dir("results", "exhaustive") / f"{_module(plan)}{suffix}.json",
                          "--report")
    out = run(plan, part_range(plan.chunks, part, parts), report, workers=args.workers, scheduler=args.scheduler)
    what = "every input" if plan.exhaustive and parts == 1 else f"part {part}/{parts}" if plan.exhaustive else "a sample"
    print(f"{out['configuration']['module']}: {out['vectors']} vectors ({what}), {out['mismatches']} mismatches, "
          f"{out['seconds']:.1f} s, {out['vectors_per_s']:.3g} vectors/s on {out['executor']}; wrote {report}")
    for row in out["first_mismatches"]:
        print("  mismatch: " + ", ".join(f"{k}={v}" for k, v in row.items()))
    return 1 if out["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
