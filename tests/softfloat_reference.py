"""Berkeley SoftFloat (``softfloatpy``, SoftFloat 3e) as a second, independent reference for
fp32 add and multiply, with the project's TPU mode put around it, and TestFloat-style
operand sets (docs/verification.md, "SoftFloat").

SoftFloat implements IEEE 754 without flush-to-zero; the adaptation, from the contract's
words (docs/semantics.md), is:

* inputs: a subnormal reads as a zero of its sign (DAZ), before SoftFloat sees it;
* SoftFloat runs with round to nearest even and tininess detected after rounding;
* result: a NaN becomes the canonical quiet NaN ``0x7FC00000``; a result SoftFloat flags
  underflow (tiny after rounding with an unbounded exponent: also one that rounded up to
  the smallest normal in the bounded format, e.g. ``2^-126 x (1 - 2^-24)``), or a subnormal
  result (tiny and exact, which IEEE leaves unflagged), becomes a zero of the result's
  sign with underflow and inexact raised.

Operand sets, in the manner of TestFloat's levels (values chosen here, not TestFloat's
tables): every sign, a set of biased exponents (zero/subnormal, the smallest normals,
around the bias, the largest finite, inf/NaN) and of significand patterns (zero, one, runs
of ones from the top and from the bottom, alternating bits, the largest). Level 1: 216
values, all 46,656 ordered pairs; level 2: 2,640 values, all 6,969,600 pairs.
"""

import numpy as np
import softfloatpy as sf

from golden import Flags

#: Biased exponents of level 1 and of level 2.
EXPONENTS = {
    1: (0, 1, 2, 24, 103, 126, 127, 128, 151, 252, 254, 255),
    2: (0, 1, 2, 3, 22, 23, 24, 25, 103, 125, 126, 127, 128, 129, 150, 151, 152, 230, 252, 253, 254, 255),
}


def _significands(level: int) -> list[int]:
    if level == 1:
        return [0, 1, 2, 0x000100, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFE, 0x7FFFFF]
    top = [((1 << k) - 1) << (23 - k) for k in range(1, 24)]
    bottom = [(1 << k) - 1 for k in range(1, 23)]
    single = [1 << i for i in range(23)]
    patterns = [0, 0x555555, 0x2AAAAA, 0x400001, 0x7FFFFE, 0x000100, 0x3FFF80, 0x1]
    values = list(dict.fromkeys(patterns + top + bottom + single))
    return values[:60]


def operands(level: int) -> np.ndarray:
    """The level's fp32 operand set (uint32)."""
    if level not in EXPONENTS:
        raise ValueError(f"level must be 1 or 2, not {level}")
    return np.array([(sign << 31) | (exp << 23) | sig for sign in (0, 1) for exp in EXPONENTS[level]
                     for sig in _significands(level)], np.uint32)


def pairs(level: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the level's operands: ``(a, b)``."""
    values = operands(level)
    return np.repeat(values, len(values)), np.tile(values, len(values))


def _daz(bits: np.ndarray) -> np.ndarray:
    subnormal = ((bits & 0x7F800000) == 0) & ((bits & 0x7FFFFF) != 0)
    return np.where(subnormal, bits & 0x80000000, bits).astype(np.uint32)


_OPS = {"add": sf.f32_add, "mul": sf.f32_mul}


def tpu(op: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SoftFloat's ``op`` (``add`` or ``mul``) of fp32 encodings, in TPU mode: (bits, flags)."""
    fn = _OPS[op]
    sf.set_rounding_mode(sf.RoundingMode.NEAR_EVEN)
    sf.set_tininess_mode(sf.TininessMode.AFTER_ROUNDING)
    out = np.empty(len(a), np.uint32)
    flags = np.empty(len(a), np.uint8)
    from_bytes = sf.Float32.from_bytes
    tiny = int(Flags.UNDERFLOW | Flags.INEXACT)
    for i, (x, y) in enumerate(zip(_daz(np.asarray(a)).tolist(), _daz(np.asarray(b)).tolist())):
        sf.set_exception_flags(0)
        value = int.from_bytes(fn(from_bytes(x.to_bytes(4, "big")), from_bytes(y.to_bytes(4, "big"))).to_bytes(),
                               "big")
        raised = int(sf.get_exception_flags())
        exponent, significand = value & 0x7F800000, value & 0x7FFFFF
        if exponent == 0x7F800000 and significand:
            value = 0x7FC00000
        elif raised & Flags.UNDERFLOW or (exponent == 0 and significand):
            value, raised = value & 0x80000000, raised | tiny
        out[i], flags[i] = value, raised
    return out, flags
