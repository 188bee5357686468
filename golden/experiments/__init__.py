"""Numerical experiments on the golden model: ``python -m golden.experiments EXPERIMENT``.

Each experiment is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args, parser)``; every one takes ``--out FOLDER`` and ``--quick``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..tools.cli import Parser, build_dir, check_output, command
from . import accumulators, jax_train, multipass, sr_dot, train
from .sr_dot import fp32_accumulate, narrow_accumulate

__all__ = ["main", "EXPERIMENTS", "fp32_accumulate", "narrow_accumulate"]

EXPERIMENTS = {m.NAME: m for m in (sr_dot, multipass, train, jax_train, accumulators)}


@command("python -m golden.experiments")
def main(argv=None) -> int:
    """Parse ``argv``, run one experiment; bad options exit 2 with one line on stderr."""
    parser = Parser(prog="python -m golden.experiments", description="Numerical experiments on the golden model.")
    sub = parser.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    parsers = {}
    for name, module in EXPERIMENTS.items():
        p = sub.add_parser(name, help=module.HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
                           description=module.__doc__.split("\n\n", 1)[1])
        module.add_arguments(p)
        out = build_dir("results", name)
        p.add_argument("--out", type=Path, default=out,
                       help=f"output folder for {name}.csv and {name}.png (default {out})")
        p.add_argument("--quick", action="store_true", help="a reduced run (under a minute)")
        parsers[name] = p
    args = parser.parse_args(argv)
    check_output(args.out, "--out", folder=True)
    return EXPERIMENTS[args.experiment].run(args, parsers[args.experiment])
