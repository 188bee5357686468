"""Parameter checks shared by the units: errors name the parameter and the allowed values."""

from __future__ import annotations

from golden.formats import FloatFormat, parse_format
from golden.params import int_param
from golden.rounding import Rounding

__all__ = ["format_param", "rounding_param", "int_param"]


def format_param(name: str, value) -> FloatFormat:
    try:
        return parse_format(value)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None


def rounding_param(value, allowed=tuple(Rounding), name: str = "rounding") -> Rounding:
    try:
        rounding = Rounding.parse(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if rounding not in allowed:
        names = ", ".join(r.value for r in allowed)
        raise ValueError(f"{name} must be one of {names}, not {rounding.value}")
    return rounding

