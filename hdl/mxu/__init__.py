"""The weight-stationary matrix unit: the array (``array.MXU``), its processing element, its
control and output side, and the ways a column sums its products (``accumulation``)."""

from .array import MXU

__all__ = ["MXU"]
