"""The compiled path: a unit's Verilog compiled by Verilator into a shared library that
NumPy drives in batches (``model``), checked against golden in chunks (``chunks``):
``python -m sim.compiled.exhaustive`` (every input), the MXU at volume (``mxu``), any-size
matrix products on the RTL (``matmul``) and the benches (``bench``, ``mxu_bench``).
It shares the unit configurations (``sim.configs``) and golden with the cocotb testbenches."""
