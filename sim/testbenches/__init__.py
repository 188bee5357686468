"""cocotb testbenches: one module per unit (``test_*``), their shared driving and checking
(``harness``), the runner that builds a configuration with Verilator or Icarus and runs its
module (``runner``), a datasheet-only MXU testbench (``mxu_example``) and the cocotb
throughput bench (``python -m sim.testbenches.bench``)."""
