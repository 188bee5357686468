"""Synthesis sweeps: area and Fmax on open-source flows (see README)."""

from pathlib import Path

#: The repository's root, whose sources and docs/ the sweeps read.
ROOT = Path(__file__).resolve().parent.parent
