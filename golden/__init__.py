"""Bit-exact NumPy golden model of the project's arithmetic (docs/contract.md, docs/semantics.md)."""

from .bits import Unpacked, from_float64, pack, to_float64, unpack
from .formats import BF16, FP16, FP32, FP8_E4M3, FP8_E5M2, NAMED_FORMATS, TF32, FloatFormat, parse_format
from .ops import add, convert, multiply
from .rounding import Flags, Rounding
from .tiled import PRESETS, Product, matmul

__all__ = [
    "FloatFormat", "FP32", "BF16", "FP16", "TF32", "FP8_E5M2", "FP8_E4M3", "NAMED_FORMATS",
    "parse_format", "Rounding", "Flags", "Unpacked", "unpack", "pack", "to_float64",
    "from_float64", "convert", "multiply", "add", "matmul", "Product", "PRESETS",
]


def __getattr__(name):
    # ``golden.jax`` needs the jax extra: imported on first use, so golden itself works without JAX.
    if name == "jax":
        import importlib
        return importlib.import_module(".jax", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
