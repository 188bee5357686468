"""cocotb testbenches and their simulator runner (see README)."""
