"""The column accumulator: a column's sum as a fixed-point window, rounded once.

The default accumulation (``"sequential"``) rounds every add of a column to ``acc_fmt`` (RNE).
A :class:`ColumnAccumulator` instead carries a column's partial sum down the array as a
two's-complement integer ``S`` in a window of ``window`` significand bits under an anchor
exponent ``E`` (docs/semantics.md, *The column accumulator*):

* a term (an exact product, or at a normalisation point the rounded partial sum) with
  exponent field ``e`` and significand ``sig`` (``p`` bits) is worth
  ``floor(+-sig * 2**(window - p - (E - e)))`` window units: bits below the window are
  truncated (two's complement: toward minus infinity); with ``sticky`` a term or sum that
  loses nonzero bits has its lowest bit set (round to odd);
* ``anchor="running"``: ``E`` is the largest exponent seen so far in the column segment
  (the window moves up, truncating the sum, when a term is larger); ``anchor="bound"``:
  ``E`` is fixed before the column starts from the row's and the tile's largest exponents;
  ``anchor="exact"``: ``E`` is fixed before each segment starts from the largest sum of its
  products' exponent fields (:func:`exact_anchor`), at most one above its largest product;
* the window never overflows: it has ``headroom(n) = n.bit_length()`` integer bits above
  its top for ``n`` terms;
* every ``group`` terms (normalisation points) and at the column's end the window is
  normalised and rounded to ``acc_fmt`` with RNE, which starts the next segment as its
  first term.

Specials (NaN, infinities) travel beside the window with the sequential adder's rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .bits import unpack
from .formats import FloatFormat
from .ops import bit_length, multiply
from .params import choice_param, int_param
from .rounding import Flags, Rounding, round_raw

__all__ = ["ColumnAccumulator", "SEQUENTIAL", "OLD_SEQUENTIAL", "spelling", "accumulation_param", "accumulation_arg",
           "headroom", "reduce_column", "WINDOW_RANGE", "MAX_TERMS", "WINDOW_FIELDS", "window_add", "window_round",
           "product_anchor", "exact_anchor"]

#: The default accumulation's name: every add rounded to ``acc_fmt`` (RNE).
SEQUENTIAL = "sequential"
#: Its old spelling, still accepted.
OLD_SEQUENTIAL = "fp32"
#: Allowed window widths (the model's sums are int64: window + headroom + sign <= 63).
WINDOW_RANGE = (8, 48)
#: Most terms in one segment (headroom 14 bits: window + 14 + sign <= 63).
MAX_TERMS = 1 << 13
ANCHORS = ("running", "bound", "exact")


def spelling(anchors=ANCHORS) -> str:
    """The column accumulator's spelling, as every help and error shows it (``anchors``: the
    ones a tool builds)."""
    return f"column[:w=W][,g=G][,sticky][,anchor={'|'.join(anchors)}]"
#: Each anchor's suffix in :attr:`ColumnAccumulator.key`.
ANCHOR_KEYS = {"running": "", "bound": "b", "exact": "x"}
#: The window the bare name ``column`` gets: the narrowest whose median and 99th-percentile
#: error at K = 128 on normal data are sequential fp32's or better (docs/numerics-column.md).
DEFAULT_WINDOW = 26


@dataclass(frozen=True)
class ColumnAccumulator:
    """A column accumulator's parameters (see the module docstring).

    Parameters
    ----------
    window : int
        Significand bits of the window below and including its anchor bit, 8..48.
    group : int
        Terms between normalisation points; 0: only at the column's end.
    sticky : bool
        Bits truncated from a term or the sum set its lowest bit (round to odd).
    anchor : str
        ``running`` (the largest exponent so far), ``bound`` (fixed before the column from
        the row's and the tile column's largest exponents) or ``exact`` (fixed before each
        segment from its largest product exponent).
    """

    window: int = DEFAULT_WINDOW
    group: int = 0
    sticky: bool = False
    anchor: str = "running"

    def __post_init__(self):
        lo, hi = WINDOW_RANGE
        if not isinstance(self.window, int) or isinstance(self.window, bool) or not lo <= self.window <= hi:
            # The lower end is the narrowest products' (fp8): each format's is checked later.
            raise ValueError(f"column window w must be from the products' significand bits (twice the input "
                             f"precision: 16 for bf16, 8 for fp8) to {hi}, not {self.window!r}")
        int_param("column group g", self.group, 0, MAX_TERMS)
        if not isinstance(self.sticky, bool):
            raise TypeError(f"column sticky must be True or False, not {self.sticky!r}")
        choice_param("column anchor", self.anchor, ANCHORS)

    def __str__(self):
        parts = [f"w={self.window}"] + ([f"g={self.group}"] if self.group else []) + \
            (["sticky"] if self.sticky else []) + ([f"anchor={self.anchor}"] if self.anchor != "running" else [])
        return "column:" + ",".join(parts)

    @property
    def key(self) -> str:
        """A short name for file and module names: ``colw28``, ``colw28g8sb``, ``colw26x``."""
        return (f"colw{self.window}" + (f"g{self.group}" if self.group else "") + ("s" if self.sticky else "")
                + ANCHOR_KEYS[self.anchor])

    def check(self, acc_fmt: FloatFormat, product_precision: int) -> None:
        """A ValueError naming the parameter if the window cannot hold one exact product of
        ``product_precision`` bits, or ``acc_fmt`` has no infinities."""
        if self.window < product_precision:
            raise ValueError(f"column window w must be at least the products' {product_precision} significand "
                             f"bits, not {self.window}")
        if not acc_fmt.ieee:
            raise ValueError(f"the column accumulator needs an IEEE-like acc_fmt, not {acc_fmt.name}")


def accumulation_arg(accumulation=None, accumulator=None):
    """The accumulation a public entry was given: ``accumulation``, or ``accumulator``, its
    old name, still accepted; a TypeError naming both if both are given and differ."""
    if accumulator is None:
        return accumulation
    if accumulation is not None and accumulation != accumulator:
        raise TypeError(f"accumulation={accumulation!r} and accumulator={accumulator!r} (its old name) differ: "
                        "give one")
    return accumulator


def accumulation_param(name: str, value) -> ColumnAccumulator | None:
    """``value`` as an accumulation: None for the sequential default (None, ``"sequential"``
    or its old spelling ``"fp32"``), else a :class:`ColumnAccumulator`, from itself or a
    string (``spelling()``); errors name ``name``."""
    if value is None or isinstance(value, ColumnAccumulator):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be '{SEQUENTIAL}', '{spelling()}' or a ColumnAccumulator, "
                        f"not {value!r}")
    spec = value.strip().lower()
    if spec in (SEQUENTIAL, OLD_SEQUENTIAL):
        return None
    match = re.fullmatch(r"column(?::(.*))?", spec)
    if not match:
        raise ValueError(f"{name} {value!r}: use {SEQUENTIAL} or {spelling()}")
    options = {}
    keys = {"w": "window", "window": "window", "g": "group", "group": "group", "anchor": "anchor"}
    for item in filter(None, (match[1] or "").split(",")):
        item = item.strip()
        if item == "sticky":
            options["sticky"] = True
            continue
        key, _, text = item.partition("=")
        if key not in keys or not text:
            raise ValueError(f"{name} {value!r}: unknown option {item!r} (use w=W, g=G, sticky, anchor=A)")
        options[keys[key]] = text if keys[key] == "anchor" else _integer(name, key, text)
    try:
        return ColumnAccumulator(**options)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None


def _integer(name, key, text):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name}: {key} must be an integer, not {text!r}") from None


def headroom(terms: int) -> int:
    """Integer bits above the window's top that ``terms`` terms cannot overflow: each
    term is below ``2**window`` units in magnitude, so ``terms`` of them below
    ``2**(window + headroom)``."""
    return terms.bit_length()


#: A window's state as the hardware carries it (hdl's ``window_layout``): sum, anchor, the
#: truncation's ``dropped`` and the specials.
WINDOW_FIELDS = ("sum", "exp", "dropped", "nan", "inf", "inf_sign")


class _Window:
    """The state of many column segments at once: anchor ``E`` (biased exponent field, 0
    while empty), sum ``S`` (int64 window units), specials and flags."""

    def __init__(self, shape, acc: ColumnAccumulator, fmt: FloatFormat):
        self.acc, self.fmt = acc, fmt
        self.exp = np.zeros(shape, np.int32)
        self.sum = np.zeros(shape, np.int64)
        self.nan = np.zeros(shape, bool)
        self.inf = np.zeros(shape, bool)
        self.inf_sign = np.zeros(shape, bool)
        self.invalid = np.zeros(shape, bool)
        self.dropped = np.zeros(shape, bool)      # a truncation lost nonzero bits

    @classmethod
    def of(cls, fields: dict, acc: ColumnAccumulator, fmt: FloatFormat) -> _Window:
        """Windows in the state ``fields`` (``WINDOW_FIELDS`` -> arrays of one shape), no
        inf - inf met yet."""
        window = cls(np.shape(fields["sum"]), acc, fmt)
        window.sum, window.exp = np.asarray(fields["sum"], np.int64), np.asarray(fields["exp"], np.int32)
        for name in WINDOW_FIELDS[2:]:
            setattr(window, name, np.asarray(fields[name], bool))
        return window

    def fields(self) -> dict:
        """The state as ``WINDOW_FIELDS`` -> arrays."""
        return {name: getattr(self, name).copy() for name in WINDOW_FIELDS}

    def add(self, terms, anchor=None):
        """Add ``terms`` (``fmt`` encodings), re-anchoring the window (running) or at ``anchor``."""
        fmt, acc = self.fmt, self.acc
        u = unpack(terms, fmt)
        finite = ~(u.is_inf | u.is_nan)
        zero = u.is_zero_daz | ~finite
        exp = np.where(zero, 0, u.exponent)
        sig = np.where(zero, 0, u.significand).astype(np.int64)
        new_exp = np.maximum(self.exp, exp) if anchor is None else np.maximum(np.maximum(self.exp, exp), anchor)
        self.sum = self._shift(self.sum, new_exp - self.exp)
        self.exp = new_exp
        # Place the term's significand at the window's top when its exponent is the anchor.
        left = max(acc.window - fmt.precision, 0)
        signed = np.where(u.sign == 1, -(sig << left), sig << left)
        self.sum = self.sum + self._shift(signed, self.exp - exp + max(fmt.precision - acc.window, 0))
        # Specials as the sequential adder combines them: NaN absorbs, inf - inf is invalid.
        inf_minus_inf = self.inf & ~self.nan & u.is_inf & (self.inf_sign != (u.sign == 1))
        self.invalid |= inf_minus_inf
        self.nan |= u.is_nan | inf_minus_inf
        self.inf_sign = np.where(u.is_inf & ~self.inf, u.sign == 1, self.inf_sign)
        self.inf |= u.is_inf

    def _shift(self, value, amount):
        """``floor(value / 2**amount)``, noting truncated nonzero bits (with ``sticky``
        they also set the lowest bit)."""
        amount = np.minimum(amount, 62).astype(np.int64)
        shifted = value >> amount
        lost = (value - (shifted << amount)) != 0
        self.dropped |= lost
        return shifted | lost if self.acc.sticky else shifted

    def rounded(self):
        """The window rounded to ``fmt`` (RNE, FTZ; a zero sum is +0), or the special
        result: ``(bits, flags)``. A finite result is inexact if a truncation lost bits or
        the rounding does; a special one is exact (invalid where inf - inf met)."""
        fmt, acc = self.fmt, self.acc
        negative = self.sum < 0
        magnitude = np.abs(self.sum).astype(np.uint64)
        n = bit_length(magnitude)
        sig = magnitude << (64 - np.maximum(n, 1)).astype(np.uint64)
        exp = self.exp - fmt.bias - (acc.window - 1) + (n - 1)
        bits, flags = round_raw(negative.astype(np.uint64), exp.astype(np.int32), sig, 64, fmt,
                                Rounding.NEAREST_EVEN)
        zero = magnitude == 0
        bits = np.where(zero, 0, bits)
        flags = np.where(zero, 0, flags) | self.dropped.view(np.uint8) * np.uint8(Flags.INEXACT)
        special = self.inf | self.nan
        bits = np.where(self.inf, (self.inf_sign.astype(np.uint64) << fmt.sign_shift) | fmt.inf, bits)
        bits = np.where(self.nan, fmt.canonical_nan, bits)
        flags = np.where(special, self.invalid.view(np.uint8) * np.uint8(Flags.INVALID), flags)
        return bits.astype(fmt.dtype), flags.astype(np.uint8)


def window_add(fields: dict, terms, acc: ColumnAccumulator, fmt: FloatFormat, anchor=None):
    """One step of many windows, vectorised: the windows ``fields`` (``WINDOW_FIELDS`` ->
    arrays; ``sum`` in signed window units) plus ``terms`` (``fmt`` encodings: exact
    products, or rounded sums), anchored at ``max(E, e)`` or ``max(E, e, anchor)``. Returns
    the new windows' fields and the step's flags (invalid where inf - inf met)."""
    window = _Window.of(fields, acc, fmt)
    window.add(terms, anchor)
    return window.fields(), window.invalid.view(np.uint8) * np.uint8(Flags.INVALID)


def window_round(fields: dict, acc: ColumnAccumulator, fmt: FloatFormat):
    """Many windows (``fields`` as ``window_add``'s) rounded to ``fmt`` as at a column's
    end (RNE, FTZ): ``(bits, flags)``."""
    return _Window.of(fields, acc, fmt).rounded()


#: Exponent field given to zeros, subnormals (DAZ), infinities and NaN in :func:`exact_anchor`:
#: any sum with it is below every real field sum, and clips to an anchor of 0.
_NO_EXPONENT = -(1 << 20)
#: Elements of ``x[m,k] + w[k,n]`` exponent sums :func:`exact_anchor` forms at once.
_CHUNK = 1 << 22


def _exponent_fields(a, fmt: FloatFormat, empty: int) -> np.ndarray:
    """The biased exponent fields of ``a``'s finite nonzero values (after DAZ), ``empty``
    for zeros, subnormals, infinities and NaN."""
    u = unpack(a, fmt)
    return np.where(u.is_inf | u.is_nan | u.is_zero_daz, empty, u.exponent)


def _anchor_field(exponent_sum, in_fmt: FloatFormat, acc_fmt: FloatFormat) -> np.ndarray:
    """The ``acc_fmt`` exponent field at or above every product whose operands' exponent
    fields sum to at most ``exponent_sum``: minus twice the input bias, plus one (two
    significands multiply to [1, 4)) and the accumulation bias, clipped to
    ``0..2**exp_bits - 2``."""
    anchor = exponent_sum - 2 * in_fmt.bias + 1 + acc_fmt.bias
    return np.clip(anchor, 0, acc_fmt.exp_max_field - 1).astype(np.int32)


def product_anchor(x, w, in_fmt: FloatFormat, acc_fmt: FloatFormat) -> np.ndarray:
    """``anchor="bound"``: per ``(m, n)``, an exponent field no finite product of row ``m``
    of ``x`` (M x K) and column ``n`` of ``w`` (K x N or M x K x N) exceeds: the largest
    exponent field of the row's finite nonzero values (0 if none) plus the column's, as
    :func:`_anchor_field` (minus twice the input bias, plus one and the accumulation bias,
    clipped to ``0..2**exp_bits - 2``)."""
    largest_x = _exponent_fields(x, in_fmt, 0).max(axis=1)[:, None]
    return _anchor_field(largest_x + _exponent_fields(w, in_fmt, 0).max(axis=-2), in_fmt, acc_fmt)


def exact_anchor(x, w, in_fmt: FloatFormat, acc_fmt: FloatFormat) -> np.ndarray:
    """``anchor="exact"``: per ``(m, n)``, the tightest anchor the exponent fields give for
    the products of row ``m`` of ``x`` (M x K: one column segment) and column ``n`` of
    ``w`` (K x N, 1 x K x N or M x K x N): the largest ``ex[m,k] + ew[k,n]`` over the pairs
    whose operands are both finite and nonzero (after DAZ), as :func:`_anchor_field`; 0 if
    no pair is. A (max, +) matrix product of the exponent fields: never below a product's
    exponent field, at most one above the largest."""
    ex = _exponent_fields(x, in_fmt, _NO_EXPONENT)
    ew = _exponent_fields(w, in_fmt, _NO_EXPONENT)
    ew = ew if ew.ndim == 3 else ew[None]
    largest = np.full((ex.shape[0], ew.shape[2]), 2 * _NO_EXPONENT, np.int32)
    step = max(1, _CHUNK // max(largest.size, 1))      # bounds the M x step x N sums' memory
    for k in range(0, ex.shape[1], step):
        sums = ex[:, k:k + step, None] + ew[:, k:k + step, :]
        np.maximum(largest, sums.max(axis=1), out=largest)
    return _anchor_field(largest, in_fmt, acc_fmt)


def reduce_column(x, w, in_fmt: FloatFormat, acc_fmt: FloatFormat, acc: ColumnAccumulator):
    """``(y, flags)`` of ``x`` (M x K) and ``w`` (1 x K x N, one tile; or M x K x N, a
    tile per row) with every column summed by ``acc``: the products ``x[m,k] * w[k,n]``
    (exact in ``acc_fmt``, the multiplier's flags) in order of ``k``, a normalisation point
    after every ``acc.group`` of them and at the end."""
    k_terms = x.shape[1]
    acc.check(acc_fmt, 2 * in_fmt.precision)
    group = acc.group or max(k_terms, 1)
    int_param("terms in one column segment (rows, or the accumulator's group)", min(group, k_terms) + 1,
              1, MAX_TERMS)
    shape = (x.shape[0], w.shape[2])
    tile_anchor = product_anchor(x, w, in_fmt, acc_fmt) if acc.anchor == "bound" else None

    def segment_anchor(start):
        """The fixed anchor of the segment of products from ``start`` (None: running)."""
        if acc.anchor != "exact":
            return tile_anchor
        return exact_anchor(x[:, start:start + group], w[:, start:start + group], in_fmt, acc_fmt)

    anchor = segment_anchor(0)
    state, carried = _Window(shape, acc, acc_fmt), None
    flags = np.zeros(shape, np.uint8)
    for k in range(k_terms):
        product, mul_flags = multiply(x[:, k, None], w[:, k, :], in_fmt, acc_fmt)
        flags |= mul_flags
        state.add(product, anchor)
        if (k + 1) % group == 0 or k + 1 == k_terms:
            carried, point_flags = state.rounded()
            flags |= point_flags
            if k + 1 < k_terms:           # the rounded sum starts the next segment
                anchor = segment_anchor(k + 1)
                state = _Window(shape, acc, acc_fmt)
                state.add(carried, anchor)
    if carried is None:
        carried = np.zeros(shape, acc_fmt.dtype)
    return carried, flags
