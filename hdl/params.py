"""Parameter checks shared by the units: errors name the parameter and the allowed values."""

from __future__ import annotations

from golden.formats import format_param
from golden.params import int_param
from golden.rounding import Rounding

__all__ = ["format_param", "rounding_param", "int_param"]


def rounding_param(value, allowed=tuple(Rounding), name: str = "rounding") -> Rounding:
    try:
        rounding = Rounding.parse(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if rounding not in allowed:
        names = ", ".join(r.value for r in allowed)
        raise ValueError(f"{name} must be one of {names}, not {rounding.value}")
    return rounding

