"""The column accumulator's units alone (``window_add``, ``window_round``, ``norm_point``):
their vectors and golden.column's results for them (``window_add``, ``window_round``), the
cocotb regression their testbench modules run, and the same check in Amaranth's simulator.

Struct ports (windows, raw products) are packed by the fields their manifest lists
(``hdl.ports``). A window's sum stays within its headroom less one term, so adding a term
never overflows it, as in a column of ``terms`` terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from golden.bits import unpack as unpack_encodings
from golden.column import ColumnAccumulator, accumulation_param, headroom, window_add, window_round
from golden.formats import FloatFormat, parse_format
from golden.ops import multiply
from golden.vectors import corner_values, random_encodings
from hdl.units import UNITS
from hdl.ports import signature_ports

from .harness import Config, Timed, compare, mismatches, pack, save_summary, simulate, start, stream

__all__ = ["Column", "vectors", "regress", "check_amaranth"]


@dataclass(frozen=True)
class Column:
    """A column unit's configuration as golden sees it (from ``hdl.build`` parameters)."""

    in_fmt: FloatFormat
    acc_fmt: FloatFormat
    acc: ColumnAccumulator
    terms: int
    term: str = "product"
    late_sum: bool = False

    @classmethod
    def of(cls, params: dict) -> Column:
        """From a manifest's ``parameters`` (or ``Unit.build``'s values)."""
        return cls(parse_format(params["in_fmt"]), parse_format(params["acc_fmt"]),
                   accumulation_param("accumulation", params["accumulation"]), params["terms"],
                   params.get("term", "product"), params.get("late_sum", False))

    @property
    def bound(self) -> bool:
        """The adder keeps its window's anchor (a bound anchor adding products)."""
        return self.acc.anchor == "bound" and self.term == "product"

    @property
    def top(self) -> int:
        """Magnitude bits of a sum a term can still be added to: the headroom less one."""
        return self.acc.window + headroom(self.terms) - 1

    @property
    def emax(self) -> int:
        """The largest anchor: a finite exponent field."""
        return self.acc_fmt.exp_max_field - 1


def _sums(col: Column, rng, n: int) -> np.ndarray:
    """Signed sums of every magnitude up to ``col.top`` bits, an eighth zero, an eighth
    exact ties of ``acc_fmt``'s RNE (``precision + 1`` bits ending in 1, shifted)."""
    bits = rng.integers(0, col.top + 1, n)
    sums = rng.integers(0, 1 << 62, n) >> (62 - bits)
    p = col.acc_fmt.precision
    if col.top > p:
        tie = (rng.integers(1 << p, 1 << (p + 1), n) | 1) << rng.integers(0, col.top - p, n)
        sums = np.where(rng.random(n) < 1 / 8, tie, sums)
    sums = np.where(rng.random(n) < 1 / 8, 0, sums)
    return np.where(rng.random(n) < 0.5, -sums, sums)


def _windows(col: Column, rng, exp, sums=None) -> dict:
    """Windows at anchors ``exp``, random ``sums`` unless given; an eighth of each flag set."""
    n = len(exp)
    fields = {"sum": _sums(col, rng, n) if sums is None else np.asarray(sums, np.int64),
              "exp": np.asarray(exp, np.int64)}
    fields.update({name: rng.random(n) < 1 / 8 for name in ("dropped", "nan", "inf", "inf_sign")})
    return fields


def _exponents(col: Column, rng, n: int) -> np.ndarray:
    """Anchors over the whole range, a quarter at its ends (underflow, overflow)."""
    edge = col.top + 3
    ends = np.concatenate([np.arange(edge), col.emax - np.arange(edge)])
    return np.where(rng.random(n) < 1 / 4, rng.choice(ends, n), rng.integers(0, col.emax + 1, n))


def _terms(col: Column, rng, n: int, exhaustive: bool) -> np.ndarray:
    """``acc_fmt`` encodings of the terms: exact products of ``in_fmt`` operands (exhaustive:
    every distinct product of every operand pair), or ``acc_fmt`` values (corners first)."""
    if col.term == "rounded":
        return np.concatenate([corner_values(col.acc_fmt), random_encodings(col.acc_fmt, n, rng)])
    fmt = col.in_fmt
    if exhaustive:
        every = np.arange(1 << fmt.width, dtype=fmt.dtype)
        x, y = np.repeat(every, len(every)), np.tile(every, len(every))
    else:
        corners = corner_values(fmt)
        x = np.concatenate([np.repeat(corners, len(corners)), random_encodings(fmt, n, rng)])
        y = np.concatenate([np.tile(corners, len(corners)), random_encodings(fmt, n, rng)])
    products = multiply(x, y, fmt, col.acc_fmt)[0]
    return np.unique(products) if exhaustive else products


def _term_fields(col: Column, terms) -> dict:
    """``terms`` as the adder's ``b`` port takes them: an encoding's fields, a product's
    (``raw_product_layout``) with its mantissa's top ``2 * precision - 1`` bits and its class."""
    u = unpack_encodings(terms, col.acc_fmt)
    fields = {"mantissa": u.mantissa, "exponent": u.exponent, "sign": u.sign}
    if col.term == "product":
        fields["mantissa"] = u.mantissa >> (col.acc_fmt.man_bits - 2 * col.in_fmt.precision + 1)
        fields.update(zero=u.is_zero_daz, inf=u.is_inf, nan=u.is_nan)
    return fields


def _offsets(col: Column) -> list[int]:
    """The exhaustive windows' anchors relative to the term's exponent: at it, a binade and
    a window away, far (a bound anchor is never below a product)."""
    w = col.acc.window
    above = [0, 1, 2, w - 1, w, w + 1, 3 * w]
    return above if col.bound else above + [-k for k in above[1:]]


def _adder_vectors(col: Column, ports: dict, rng, n: int, exhaustive: bool):
    terms = _terms(col, rng, n, exhaustive)
    u = unpack_encodings(terms, col.acc_fmt)
    e = np.where(u.is_zero_daz | u.is_inf | u.is_nan, 0, u.exponent).astype(np.int64)
    if exhaustive:          # every term against every window of a small set
        offsets = _offsets(col)
        sums = [0, 1, -1, (1 << col.acc.window) - 1, -(1 << col.acc.window), (1 << col.top) - 1, -(1 << col.top),
                0x5A5A5A5A5A5A & ((1 << col.top) - 1)]
        count = len(offsets)
        terms, e = np.tile(terms, count), np.tile(e, count)
        offset = np.repeat(offsets, len(u.exponent))
        sums = np.repeat([sums[k % len(sums)] for k in range(count)], len(u.exponent))
    else:
        count = len(terms)
        near = rng.integers(0 if col.bound else -col.acc.window - 3, col.acc.window + 4, count)
        offset = np.where(rng.random(count) < 7 / 8, near, rng.integers(0, col.emax + 1, count))
        sums = None
    exp = np.clip(e + offset, 0, col.emax)
    if not col.bound and not exhaustive:        # a moving anchor: anywhere, half the time
        exp = np.where(rng.random(len(exp)) < 0.5, rng.integers(0, col.emax + 1, len(exp)), exp)
    window = _windows(col, rng, exp, sums)
    inputs = {"b": pack(ports["b"], _term_fields(col, terms))}
    if col.late_sum:        # the anchor on its own port; ``a.exp`` is not read
        inputs["anchor"] = window["exp"]
        inputs["a"] = pack(ports["a"], {**window, "exp": rng.integers(0, col.emax + 1, len(exp))})
    else:
        inputs["a"] = pack(ports["a"], window)
    result, flags = window_add(window, terms, col.acc, col.acc_fmt, window["exp"] if col.bound else None)
    return inputs, (pack(ports["result"], result), flags)


def _rounder_inputs(col: Column, ports: dict, rng, n: int, exhaustive: bool):
    """Windows and ``flags_in``: random, or (exhaustive) every sum at a set of anchors."""
    if exhaustive:
        sums = np.arange(-(1 << (col.top + 1)) + 1, 1 << (col.top + 1))
        anchors = sorted({0, 1, col.top, col.top + 2, col.acc_fmt.bias, col.emax - col.top - 1, col.emax - 1,
                          col.emax})
        window = _windows(col, rng, np.repeat(anchors, len(sums)), np.tile(sums, len(anchors)))
    else:
        window = _windows(col, rng, _exponents(col, rng, n))
    count = len(window["sum"])
    flags_in = np.where(rng.random(count) < 1 / 4, rng.integers(0, 32, count), 0).astype(np.uint8)
    return window, {"a": pack(ports["a"], window), "flags_in": flags_in}


def _round_vectors(col: Column, ports: dict, rng, n: int, exhaustive: bool):
    window, inputs = _rounder_inputs(col, ports, rng, n, exhaustive)
    bits, flags = window_round(window, col.acc, col.acc_fmt)
    return inputs, (bits, flags | inputs["flags_in"])


def _point_vectors(col: Column, ports: dict, rng, n: int, exhaustive: bool):
    """The window rounded, the rounded value the first term of a window at the bound
    ``anchor`` (0 with the running anchor, as the MXU drives it)."""
    window, inputs = _rounder_inputs(col, ports, rng, n, exhaustive)
    count = len(window["sum"])
    anchor = rng.integers(0, col.emax + 1, count) if col.acc.anchor == "bound" else np.zeros(count, np.int64)
    inputs["anchor"] = anchor
    bits, round_flags = window_round(window, col.acc, col.acc_fmt)
    fresh = {"sum": np.zeros(count, np.int64), "exp": anchor,
             **{name: np.zeros(count, bool) for name in ("dropped", "nan", "inf", "inf_sign")}}
    result, add_flags = window_add(fresh, bits, col.acc, col.acc_fmt)
    return inputs, (pack(ports["result"], result), round_flags | add_flags | inputs["flags_in"])


VECTORS = {"window_add": _adder_vectors, "window_round": _round_vectors, "norm_point": _point_vectors}


def vectors(unit: str, params: dict, ports: dict, rng: np.random.Generator, n: int, exhaustive: bool = False):
    """``(inputs, (results, flags))`` of ``unit`` (``hdl.build`` key) with ``params`` (its
    parameters) and ``ports`` (name -> manifest port): about ``n`` random vectors and the
    corners, or (``exhaustive``, for 8-bit ``in_fmt`` adders and narrow windows) every term
    against a set of windows, every sum at a set of anchors."""
    return VECTORS[unit](Column.of(params), ports, rng, n, exhaustive)


def _late(facts: dict) -> dict:
    """With ``late_sum`` the window joins ``sum_wait`` cycles after the term."""
    return {"a": facts["sum_wait"]} if facts.get("sum_wait") else {}


async def regress(dut, unit: str) -> None:
    """The cocotb regression of a column unit: ``UNIT_VECTORS`` random vectors and the
    corners, bit for bit against golden, flags included."""
    cfg = Config()
    rng = cfg.rng()
    ports = {p["name"]: p for p in cfg.manifest["ports"]}
    inputs, want = vectors(unit, cfg.params, ports, rng, cfg.vectors)
    await start(dut, cfg)
    with Timed() as t:
        got = await stream(dut, cfg, inputs, rng, late=_late(cfg.manifest))
    compare(got, want, inputs)
    save_summary(vectors=len(want[0]), cycles=got[2], seconds=t.seconds)


def check_amaranth(unit: str, params: dict, *, n: int = 2000, seed: int = 1, exhaustive: bool = False):
    """The regression in Amaranth's simulator: ``(mismatching vectors, the first of them,
    vectors)`` (``vectors``' ``n`` and ``exhaustive``)."""
    dut, values = UNITS[unit].build(**params)
    ports = {p["name"]: p for p in signature_ports(dut, clocked=False)}
    rng = np.random.default_rng([seed, 0])
    inputs, want = vectors(unit, values, ports, rng, n, exhaustive)
    late = {"a": dut.sum_wait} if getattr(dut, "late_sum", False) else {}
    got = simulate(dut, inputs, rng, latency=dut.latency, late=late)
    count, first = mismatches(got, want, inputs)
    return count, first, len(want[0])
