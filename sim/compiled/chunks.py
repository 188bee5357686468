"""Chunks of a compiled check: each a pure function of (configuration, chunk index).

A ``Plan`` names a unit configuration and its input space. Exhaustive plans enumerate
every input: vector ``v`` gives the operands by splitting its bits (``a`` the high part).
Sampled plans (more than 2**32 inputs) draw chunk ``i`` from ``default_rng([seed, i])``
with ``golden.vectors.random_encodings``; chunk 0 starts with every combination of
``corner_values``.

Random bits of a chunk (stochastic rounding): the stream of one xorshift32 lane
(``golden.xorshift.lane_rand``) seeded with ``chunk_seed(seed, i)``; a unit with a built-in
generator has that seed loaded before the chunk's first vector, a unit with a ``rand`` port
gets the stream on it. A clocked unit's bubble pattern is seeded with the same chunk seed.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

from golden import coverage, xorshift
from golden.formats import parse_format
from golden.ops import add, convert, multiply
from golden.vectors import corner_values, random_encodings

from .model import Model

__all__ = ["Plan", "chunk_seed", "check_chunk", "operand_formats", "MAX_EXHAUSTIVE_BITS", "SHOWN"]

#: Input spaces up to this many bits are enumerated; larger ones are sampled.
MAX_EXHAUSTIVE_BITS = 32
#: Mismatches a chunk reports in full (all are counted).
SHOWN = 10


@dataclass(frozen=True)
class Plan:
    """What to check: a configuration, its input space and how it is cut into chunks.

    ``params`` are ``hdl.build`` parameters as sorted (name, value) pairs (hashable);
    ``vectors`` is the size of the input space (exhaustive) or of the sample.
    """

    unit: str
    params: tuple
    vectors: int
    chunk: int
    exhaustive: bool
    seed: int = 1
    bubbles: float = 0.2
    situations: bool = True

    @property
    def chunks(self) -> int:
        return -(-self.vectors // self.chunk)

    def span(self, index: int) -> tuple[int, int]:
        """First vector and count of chunk ``index``."""
        start = index * self.chunk
        return start, min(self.chunk, self.vectors - start)

    def describe(self) -> dict:
        return {**asdict(self), "params": dict(self.params)}


def operand_formats(unit: str, params: dict):
    """(operand formats, result format) of a unit's parameters (after ``hdl.build`` defaults)."""
    if unit == "add":
        fmt = parse_format(params["fmt"])
        return [fmt, fmt], fmt
    fmts = [parse_format(params["in_fmt"])] * (2 if unit == "mul" else 1)
    return fmts, parse_format(params["out_fmt"])


def chunk_seed(seed: int, index: int) -> int:
    """The 32-bit seed of chunk ``index`` (SeedSequence mixing: neighbours are unrelated)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def _operands(plan: Plan, fmts, index: int) -> list[np.ndarray]:
    start, n = plan.span(index)
    if plan.exhaustive:
        v = np.arange(n, dtype=np.uint32) + np.uint32(start)        # spaces of at most 2**32
        out, shift = [], sum(f.width for f in fmts)
        for f in fmts:
            shift -= f.width
            out.append(((v >> np.uint32(shift)) & np.uint32((1 << f.width) - 1)).astype(f.dtype))
        return out
    rng = np.random.default_rng([plan.seed, index])
    out = [random_encodings(f, n, rng) for f in fmts]
    if index == 0:
        corners = list(zip(*itertools.product(*(corner_values(f) for f in fmts))))
        for x, c in zip(out, corners):
            k = min(n, len(c))
            x[:k] = np.array(c[:k], x.dtype)
    return out


def _golden(unit, params, fmts, out_fmt, operands, rounding, rand, sr_bits):
    if unit == "mul":
        return multiply(*operands, fmts[0], out_fmt, rounding, rand, sr_bits)
    if unit == "add":
        return add(*operands, fmts[0], rounding, rand, sr_bits)
    return convert(*operands, fmts[0], out_fmt, rounding, rand, sr_bits)


_MODELS = threading.local()      # one model per thread: Dask's threads must not share one


def model_of(plan: Plan, verilog=None) -> Model:
    """The compiled model of ``plan`` (a ``verilog`` edit applied), built once per thread."""
    cache = _MODELS.__dict__.setdefault("models", {})
    key = (plan.unit, plan.params, verilog)
    if key not in cache:
        cache[key] = Model(plan.unit, dict(plan.params), verilog=verilog)
    return cache[key]


def check_chunk(plan: Plan, index: int, verilog=None) -> dict:
    """Simulate chunk ``index`` of ``plan``, compare with golden, count what it covered.

    Returns ``index``, ``vectors``, ``mismatches``, the first ``SHOWN`` mismatches (hex
    inputs, expected and actual result and flags), ``classes`` and ``situations`` counts
    and ``seconds``. ``verilog``: a Verilog edit (see ``Model``), for mutation tests.
    """
    begin = time.perf_counter()
    model = model_of(plan, verilog)
    params = model.manifest["parameters"]
    fmts, out_fmt = operand_formats(plan.unit, params)
    operands = _operands(plan, fmts, index)
    names = [p for p in model.inputs if p != "rand"]
    inputs = dict(zip(names, operands))
    seed = chunk_seed(plan.seed, index)
    rand = None
    if model.rand_bits is not None:
        rand = xorshift.lane_rand(seed, 1, len(operands[0]), model.rand_bits)[:, 0]
        if "rand" in model.inputs:
            inputs["rand"] = rand
    got_bits, got_flags, cycles = model.run(
        inputs, seed=seed if "seed" in model.ports else None, bubbles=plan.bubbles, bubble_seed=seed)
    rounding, sr_bits = params["rounding"], params.get("sr_bits")
    want_bits, want_flags = _golden(plan.unit, params, fmts, out_fmt, operands, rounding, rand, sr_bits)
    bad = np.flatnonzero((got_bits != want_bits) | (got_flags != want_flags))
    hexes = (out_fmt.width + 3) // 4
    shown = [{**{p: f"{int(inputs[p][j]):#x}" for p in model.inputs},
              "expected": f"{int(want_bits[j]):#0{hexes + 2}x}", "expected_flags": f"{int(want_flags[j]):#07b}",
              "actual": f"{int(got_bits[j]):#0{hexes + 2}x}", "actual_flags": f"{int(got_flags[j]):#07b}",
              "vector": plan.span(index)[0] + int(j)} for j in bad[:SHOWN]]
    result = {"index": index, "vectors": len(got_bits), "mismatches": len(bad), "first_mismatches": shown,
              "cycles": cycles, "classes": coverage.classes(out_fmt, want_bits, want_flags)}
    if plan.situations:
        def again(select, mode, mode_rand, mode_sr_bits):
            chosen = [x[select] for x in operands]
            return _golden(plan.unit, params, fmts, out_fmt, chosen, mode, mode_rand, mode_sr_bits)
        result["situations"] = coverage.situations(out_fmt, want_bits, want_flags, again, fmts[0], operands,
                                                  rounding)
    result["seconds"] = time.perf_counter() - begin
    return result
