"""Amaranth hardware: the arithmetic units (see README)."""
