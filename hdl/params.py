"""Parameter checks shared by the units: errors name the parameter and the allowed values."""

from __future__ import annotations

from golden.formats import format_param
from golden.params import choice_param, int_param
from golden.rounding import Rounding

__all__ = ["format_param", "rounding_param", "int_param", "choice_param", "check_exact_products"]


def rounding_param(value, allowed=tuple(Rounding), name: str = "rounding") -> Rounding:
    try:
        rounding = Rounding.parse(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if rounding not in allowed:
        names = ", ".join(r.value for r in allowed)
        raise ValueError(f"{name} must be one of {names}, not {rounding.value}")
    return rounding



def check_exact_products(in_fmt, acc_fmt) -> None:
    """``acc_fmt`` must hold every ``in_fmt`` product exactly (a ValueError naming both)."""
    if acc_fmt.precision < 2 * in_fmt.precision:
        raise ValueError(f"acc_fmt {acc_fmt} must hold an exact {in_fmt} product "
                         f"(precision >= {2 * in_fmt.precision}, not {acc_fmt.precision})")
