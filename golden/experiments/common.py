"""What the experiments share: option checks, CSV output, the progress bar."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..cli import write_text

__all__ = ["check_ranges", "write_csv"]


def check_ranges(parser, checks):
    """``parser.error`` (one line, exit 2) for the first ``(name, value, lo, hi)`` out of range."""
    for name, value, lo, hi in checks:
        if not lo <= value <= hi:
            parser.error(f"{name} must be in {lo}..{hi}, not {value}")


def write_csv(rows, path: Path):
    """Write ``rows`` (dicts with the same keys) to ``path`` whole (``golden.cli.write_text``)."""
    if not rows:
        raise ValueError(f"no rows to write to {path}")
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, text.getvalue())
