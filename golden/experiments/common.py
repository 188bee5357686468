"""What the experiments share: option checks, CSV output, the training experiments' options and plot."""

from __future__ import annotations

from pathlib import Path

from ..tools.cli import csv_text, save_figure, write_text

__all__ = ["check_ranges", "write_csv", "add_training_arguments", "training_variants", "plot_training"]


def check_ranges(parser, checks):
    """``parser.error`` (one line, exit 2) for the first ``(name, value, lo, hi)`` out of range."""
    for name, value, lo, hi in checks:
        if not lo <= value <= hi:
            parser.error(f"{name} must be in {lo}..{hi}, not {value}")


def write_csv(rows, path: Path):
    """Write ``rows`` (dicts with the same keys) to ``path`` whole (``golden.tools.cli.write_text``)."""
    if not rows:
        raise ValueError(f"no rows to write to {path}")
    write_text(path, csv_text(rows, list(rows[0])))


def add_training_arguments(p, *, epochs: int, variants) -> None:
    """The options of an experiment that trains the digits MLP: ``epochs`` by default, a
    subset of ``variants`` (names)."""
    p.add_argument("--epochs", type=int, default=epochs, help=f"epochs, 1..1000 (default {epochs})")
    p.add_argument("--hidden", type=int, default=32, help="hidden units, 1..1024 (default 32)")
    p.add_argument("--batch", type=int, default=32, help="batch size, 1..1024 (default 32)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate, 1e-6..10 (default 0.05)")
    p.add_argument("--seed", type=int, default=1, help="seed of data split, weights, batches, xorshift, 0..2**20")
    p.add_argument("--variants", default=",".join(variants),
                   help=f"comma-separated subset of {','.join(variants)} (default: all)")


def training_variants(args, p, variants) -> list[str]:
    """Apply ``--quick`` (2 epochs, at most 16 hidden units), check the ranges of
    ``add_training_arguments``' options and return the variant names chosen; a bad option
    ends in ``p.error``."""
    if args.quick:
        args.epochs, args.hidden = min(args.epochs, 2), min(args.hidden, 16)
    check_ranges(p, (("--epochs", args.epochs, 1, 1000), ("--hidden", args.hidden, 1, 1024),
                     ("--batch", args.batch, 1, 1024), ("--lr", args.lr, 1e-6, 10.0),
                     ("--seed", args.seed, 0, 1 << 20)))
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    if not names or any(n not in variants for n in names):
        p.error(f"--variants must name some of {','.join(variants)}, not {args.variants!r}")
    return names


def plot_training(rows, path: Path, title: str, dashed) -> None:
    """Training loss, test loss and test accuracy against the epoch, a line per variant
    (``dashed(name)``: drawn dashed), saved to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    cmap = plt.get_cmap("tab10")
    for i, name in enumerate(dict.fromkeys(r["variant"] for r in rows)):
        sel = [r for r in rows if r["variant"] == name]
        for ax, key in zip(axes, ("train_loss", "test_loss", "test_accuracy")):
            ax.plot([r["epoch"] for r in sel], [r[key] for r in sel], "--" if dashed(name) else "-",
                    color=cmap(i), marker="o", markersize=3, label=name)
    for ax, title_of in zip(axes, ("training loss (mean over the epoch)", "test loss", "test accuracy")):
        ax.set_title(title_of, fontsize=10)
        ax.set_xlabel("epoch")
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
