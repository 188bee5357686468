"""Parameter checks: errors name the parameter and the allowed range."""

from __future__ import annotations

import operator

import numpy as np

__all__ = ["int_param", "real_param", "choice_param", "rng_param", "bits_param"]


def int_param(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``lo..hi``, or a TypeError/ValueError naming ``name``."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, not {value}")
    return value


def real_param(name: str, value, lo: float, hi: float) -> float:
    """``value`` as a float in ``lo..hi``, or a TypeError/ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, not {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, not {value}")
    return float(value)


def choice_param(name: str, value, choices):
    """``value`` if it is one of ``choices`` (an iterable of names), else a ValueError
    naming ``name`` and listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}")
    return value


def rng_param(name: str, value) -> np.random.Generator:
    """``value`` if it is a NumPy ``Generator``, else a TypeError naming ``name``."""
    if not isinstance(value, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator "
                        f"(numpy.random.default_rng(seed)), not {type(value).__name__}")
    return value


def bits_param(name: str, value, ndim: int | None = None) -> np.ndarray:
    """``value`` as an array of integer bit patterns (of ``ndim`` dimensions if given)."""
    array = np.asarray(value)
    if array.dtype.kind not in "ui":
        raise TypeError(f"{name} must hold integer bit patterns, not {array.dtype}")
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, not {array.ndim}-D (shape {array.shape})")
    return array
