"""What the experiments share: option checks, CSV output, the progress bar."""

from __future__ import annotations

import csv
import os
from pathlib import Path

__all__ = ["check_ranges", "write_csv", "progress_bar"]


def check_ranges(parser, checks):
    """``parser.error`` (one line, exit 2) for the first ``(name, value, lo, hi)`` out of range."""
    for name, value, lo, hi in checks:
        if not lo <= value <= hi:
            parser.error(f"{name} must be in {lo}..{hi}, not {value}")


def write_csv(rows, path: Path):
    """Write ``rows`` (dicts with the same keys) to ``path``; never leaves a truncated file.

    The rows go to a temporary file first, renamed over ``path`` once complete.
    """
    if not rows:
        raise ValueError(f"no rows to write to {path}")
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def progress_bar(total: int, desc: str):
    """A tqdm bar on stderr, silent when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=None, leave=False, dynamic_ncols=True)
