"""Synthesis sweeps: area and Fmax on open-source flows (see README)."""
