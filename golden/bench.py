"""Throughput of the golden model on one core: ``python -m golden.bench``.

Prints operations per second (median of repeats) and writes them as JSON.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import numpy as np

from . import mxu
from .tools.cli import Parser, build_dir, check_output, command, write_text
from .formats import BF16, FP32
from .ops import add, convert, multiply
from .tiled import matmul
from .vectors import random_encodings

CHUNK = 1 << 16  # elements per call: large enough to amortise calls, small enough for cache
MAX_SIZE = 1 << 25  # about 1 GB of operands and temporaries
MATMUL_SIDE = 256  # M = K = N of the matmul rows


def _rate(fn, n: int, repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return n / statistics.median(times)


def _chunked(op, operands, n):
    def run():
        for i in range(0, n, CHUNK):
            op(*(x[i:i + CHUNK] for x in operands))
    return run


def run(size: int, repeat: int, mxu_shape: tuple[int, int, int]) -> dict[str, float]:
    rng = np.random.default_rng(0)
    a16, b16 = random_encodings(BF16, size, rng), random_encodings(BF16, size, rng)
    a32, b32 = random_encodings(FP32, size, rng), random_encodings(FP32, size, rng)
    rand16 = rng.integers(0, 1 << 16, size, dtype=np.uint64)
    cases = {
        "bf16 x bf16 -> fp32 multiplies/s": (lambda a, b: multiply(a, b, BF16, FP32), (a16, b16)),
        "bf16 x bf16 -> bf16 (rne) multiplies/s": (lambda a, b: multiply(a, b, BF16, BF16), (a16, b16)),
        "fp32 + fp32 (rne) adds/s": (lambda a, b: add(a, b, FP32), (a32, b32)),
        "fp32 -> bf16 (rne) conversions/s": (lambda a: convert(a, FP32, BF16), (a32,)),
        "fp32 -> bf16 (sr) conversions/s": (lambda a, r: convert(a, FP32, BF16, "sr", r), (a32, rand16)),
    }
    results = {name: _rate(_chunked(op, operands, size), size, repeat)
               for name, (op, operands) in cases.items()}
    m, k, n = mxu_shape
    x, w = random_encodings(BF16, m * k, rng).reshape(m, k), random_encodings(BF16, k * n, rng).reshape(k, n)
    results[f"MXU model MACs/s ({m}x{k} . {k}x{n})"] = _rate(lambda: mxu.mxu(x, w), m * k * n, repeat)
    results.update(matmul_rates(repeat, rng))
    return results


def matmul_rates(repeat: int, rng, side: int = MATMUL_SIDE) -> dict[str, float]:
    """``golden.matmul`` MAC/s on ``side``-cubed products of normal fp32 data (user MACs:
    ``side^3`` per call whatever the passes), the integer model alone, and NumPy's own float32
    loop over k (no flags, no flush, not the MXU's numerics: the speed of light here)."""
    x = rng.standard_normal((side, side)).astype(np.float32)
    w = rng.standard_normal((side, side)).astype(np.float32)
    xb, wb = (a.view(np.uint32) for a in (x, w))
    macs = side ** 3
    shape = f"{side}x{side} . {side}x{side}"
    rates = {f"matmul {p} MACs/s ({shape})": _rate(lambda p=p: matmul(xb, wb, precision=p), macs, repeat)
             for p in ("BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6")}
    rates[f"matmul BF16_BF16_F32, integer model only, MACs/s ({shape})"] = _rate(
        lambda: matmul(xb, wb, fast_path=False), macs, min(repeat, 3))

    def float32_loop():
        acc = np.zeros((side, side), np.float32)
        for j in range(side):
            acc += x[:, j, None] * w[j]
    rates[f"NumPy float32 loop over k, MACs/s ({shape})"] = _rate(float32_loop, macs, repeat)
    return rates


@command("python -m golden.bench")
def main(argv=None) -> int:
    parser = Parser(prog="python -m golden.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 22,
                        help=f"elements per measured run, {CHUNK}..{MAX_SIZE} (default 4194304)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the median is quoted (1..100)")
    out = build_dir("results", "golden_bench.json")
    parser.add_argument("--out", type=Path, default=out, help=f"JSON file for the figures (default {out})")
    args = parser.parse_args(argv)
    if not CHUNK <= args.size <= MAX_SIZE:
        parser.error(f"--size must be in {CHUNK}..{MAX_SIZE}, not {args.size}")
    if not 1 <= args.repeat <= 100:
        parser.error(f"--repeat must be in 1..100, not {args.repeat}")
    check_output(args.out, "--out")

    results = run(args.size, args.repeat, (256, 128, 128))
    width = max(map(len, results))
    print(f"golden model throughput, one core, median of {args.repeat} runs of {args.size} elements")
    for name, rate in results.items():
        print(f"  {name:<{width}}  {rate / 1e6:8.2f} M")
    per_pair = 1 / results["bf16 x bf16 -> fp32 multiplies/s"]
    print(f"  all 2^32 bf16 x bf16 pairs: {2 ** 32 * per_pair / 60:.1f} minutes of model time")
    write_text(args.out, json.dumps({"size": args.size, "repeat": args.repeat, "per_second": results}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
