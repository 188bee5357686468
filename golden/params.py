"""Parameter checks: errors name the parameter and the allowed range."""

from __future__ import annotations

import operator

__all__ = ["int_param"]


def int_param(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``lo..hi``, or a TypeError/ValueError naming ``name``."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, not {value}")
    return value
