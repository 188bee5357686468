"""Parameter checks shared by the units: errors name the parameter and the allowed values."""

from __future__ import annotations

from dataclasses import dataclass

from golden.formats import format_param
from golden.params import choice_param, int_param
from golden.rounding import Rounding

__all__ = ["Param", "format_param", "rounding_param", "int_param", "choice_param", "bool_param",
           "check_exact_products"]


@dataclass(frozen=True)
class Param:
    """One option of a unit, described once for every place that shows it: the command
    lines' flags and ``--help``, the manifest and a datasheet's parameter table.

    ``kind``: ``format``, ``rounding``, ``optional-rounding``, ``int``, ``optional-int``,
    ``bool``, ``str`` or ``column`` (a golden.column spelling, resolved before the
    component sees it); ``values``: the allowed values as a datasheet states them."""

    name: str          # keyword of the component
    kind: str
    default: object
    help: str
    values: str = ""


def rounding_param(value, allowed=tuple(Rounding), name: str = "rounding") -> Rounding:
    try:
        rounding = Rounding.parse(value)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if rounding not in allowed:
        names = ", ".join(r.value for r in allowed)
        raise ValueError(f"{name} must be one of {names}, not {rounding.value}")
    return rounding



def bool_param(name: str, value) -> bool:
    """``value`` if it is True or False, else a TypeError naming the parameter."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def check_exact_products(in_fmt, acc_fmt) -> None:
    """``acc_fmt`` must hold every ``in_fmt`` product exactly (a ValueError naming both)."""
    if acc_fmt.precision < 2 * in_fmt.precision:
        raise ValueError(f"acc_fmt {acc_fmt} must hold an exact {in_fmt} product "
                         f"(precision >= {2 * in_fmt.precision}, not {acc_fmt.precision})")
