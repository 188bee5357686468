"""The accumulators experiment's reading of its rows (golden.experiments.accumulators): the
smallest window meeting the criterion (median and 99th percentile of the relative error at
most sequential fp32's), the tables of docs/numerics-column.md and the plot."""

from __future__ import annotations

import math
from pathlib import Path

from ..column import ANCHORS, ColumnAccumulator
from ..tools.cli import save_figure

#: The data kind and K of the criterion the first tables apply.
CRITERION = ("normal", 128)
#: Where the plot draws an error of 0 (log axes).
FLOOR = 1e-10


def _kinds(rows) -> list[str]:
    """The rows' data kinds, in the order the experiment made them."""
    return list(dict.fromkeys(r["data"] for r in rows))


def matching_window(rows, group=0, sticky=False, anchor="running", data=CRITERION[0], k=CRITERION[1]):
    """The smallest window whose median and 99th-percentile relative error at ``(data, k)``
    are at most sequential fp32's, for the given group, sticky and anchor; None if none is
    (or the rows have none of that anchor)."""
    return min(_good_windows(rows, group, sticky, anchor, data, k), default=None)


def _good_windows(rows, group, sticky, anchor, data, k):
    """The windows meeting the criterion at ``(data, k)`` (a set)."""
    at = [r for r in rows if r["data"] == data and r["k"] == k]
    fp32 = next(r for r in at if r["accumulator"] == "fp32")
    return {r["window"] for r in at if r["accumulator"] != "fp32" and (r["group"], bool(r["sticky"]), r["anchor"])
            == (group, sticky, anchor) and r["rel_median"] <= fp32["rel_median"] and r["rel_p99"] <= fp32["rel_p99"]}


def window_everywhere(rows, group=0, sticky=False, anchor="exact"):
    """The smallest window of the rows that meets the criterion at every data kind and K
    (and every larger window of the rows does too, so a lucky narrow one is not picked);
    None if none does."""
    cells = {(r["data"], r["k"]) for r in rows}
    good = set.intersection(*(_good_windows(rows, group, sticky, anchor, d, k) for d, k in cells))
    tried = sorted({r["window"] for r in rows if r["accumulator"] != "fp32" and r["anchor"] == anchor})
    return next((w for w in tried if all(v in good for v in tried if v >= w)), None)


def _find(rows, data, k, accumulator):
    return next(r for r in rows if (r["data"], r["k"], r["accumulator"]) == (data, k, accumulator))


def _window(w):
    return "none" if w is None else str(w)


def print_tables(rows, ks, windows, groups, anchors=ANCHORS):
    """The tables of docs/numerics-column.md (Markdown); returns the window the criterion picks
    (G = 0, running anchor, truncation), or None."""
    print_everywhere(rows, ks, groups, anchors)
    if "running" not in anchors:
        return None
    data, k = CRITERION
    print(f"\nRelative error at K = {k}, {data} data (G = 0, running anchor):\n")
    print("| accumulator | median | 99th percentile | max | mean signed | sticky: median | sticky: 99th percentile |")
    print("|---|---|---|---|---|---|---|")
    for w in (None,) + tuple(windows):
        r = _find(rows, data, k, "fp32" if w is None else str(ColumnAccumulator(window=w)))
        sticky = "| |" if w is None else "| {rel_median:.2e} | {rel_p99:.2e} |".format(
            **_find(rows, data, k, str(ColumnAccumulator(window=w, sticky=True))))
        print(f"| `{r['accumulator']}` | {r['rel_median']:.2e} | {r['rel_p99']:.2e} | {r['rel_max']:.2e} | "
              f"{r['rel_mean_signed']:+.1e} {sticky}")
    print(f"\nSmallest W with median and 99th percentile at most fp32's (K = {k}, {data} data):\n")
    print("| G | " + " | ".join(f"{t}, {a}" for a in anchors for t in ("truncation", "sticky")) + " |")
    print("|---|" + "---|" * 2 * len(anchors))
    for g in groups:
        print(f"| {g} | " + " | ".join(_window(matching_window(rows, g, s, a)) for a in anchors for s in (False, True))
              + " |")
    for anchor in anchors:
        print(f"\nThe same per data and K (G = 0, {anchor} anchor; truncation / sticky):\n")
        print("| data | " + " | ".join(f"K = {kk}" for kk in ks) + " |")
        print("|---|" + "---|" * len(ks))
        for kind in _kinds(rows):
            print(f"| {kind} | " + " | ".join(
                "/".join(_window(matching_window(rows, 0, s, anchor, kind, kk)) for s in (False, True)) for kk in ks)
                + " |")
    print("\nBits by which the bound anchor exceeds the largest product (median / 99th percentile):\n")
    print("| data | " + " | ".join(f"K = {kk}" for kk in ks) + " |")
    print("|---|" + "---|" * len(ks))
    for kind in _kinds(rows):
        print(f"| {kind} | " + " | ".join("{bound_slack_median:g} / {bound_slack_p99:g}".format(
            **_find(rows, kind, kk, "fp32")) for kk in ks) + " |")
    chosen = matching_window(rows)
    if chosen is None:
        print("\nno window meets the criterion with G = 0, running anchor, truncation")
        return None
    print(f"\nfp32 against column:w={chosen}, median / 99th percentile of the relative error "
          "and of the error relative to sum |x w|:\n")
    print(f"| data | K | condition | fp32 | column:w={chosen} | fp32 / sum |x w| | w={chosen} / sum |x w| |")
    print("|---|---|---|---|---|---|---|")
    for kind in _kinds(rows):
        for kk in ks:
            a, b = _find(rows, kind, kk, "fp32"), _find(rows, kind, kk, f"column:w={chosen}")
            print(f"| {kind} | {kk} | {a['condition_median']:.3g} | {a['rel_median']:.1e} / {a['rel_p99']:.1e} | "
                  f"{b['rel_median']:.1e} / {b['rel_p99']:.1e} | {a['abs_sum_rel_median']:.1e} / "
                  f"{a['abs_sum_rel_p99']:.1e} | {b['abs_sum_rel_median']:.1e} / {b['abs_sum_rel_p99']:.1e} |")
    variants = [ColumnAccumulator(window=chosen, group=g) for g in groups] + [
        ColumnAccumulator(window=chosen, sticky=True)] + [
        ColumnAccumulator(window=chosen, sticky=s, anchor=a) for a in anchors if a != "running" for s in (False, True)]
    print(f"\nVariants of column:w={chosen} at K = {max(ks)}: median / 99th percentile; mean signed error:\n")
    print("| data | fp32 | " + " | ".join(f"`{v}`" for v in variants) + " |")
    print("|---|---|" + "---|" * len(variants))
    for kind in _kinds(rows):
        cells = [_find(rows, kind, max(ks), name) for name in ["fp32"] + [str(v) for v in variants]]
        print(f"| {kind} | " + " | ".join(
            f"{c['rel_median']:.1e} / {c['rel_p99']:.1e}; {c['rel_mean_signed']:+.0e}" for c in cells) + " |")
    return chosen


def print_everywhere(rows, ks, groups, anchors):
    """The smallest window meeting the criterion at every data kind and K, per anchor, G and
    truncation or sticky; then, for the exact anchor's (G = 0), every cell against fp32
    and the bound and running anchors at that window."""
    print("\nSmallest W with median and 99th percentile at most fp32's at every data kind and K:\n")
    print("| G | " + " | ".join(f"{t}, {a}" for a in anchors for t in ("truncation", "sticky")) + " |")
    print("|---|" + "---|" * 2 * len(anchors))
    for g in groups:
        print(f"| {g} | " + " | ".join(_window(window_everywhere(rows, g, s, a)) for a in anchors
                                       for s in (False, True)) + " |")
    if "exact" not in anchors:
        return
    for sticky in (False, True):
        chosen = window_everywhere(rows, 0, sticky, "exact")
        if chosen is None:
            continue
        exact = ColumnAccumulator(window=chosen, sticky=sticky, anchor="exact")
        others = [ColumnAccumulator(window=chosen, sticky=sticky, anchor=a) for a in anchors if a != "exact"]
        print(f"\n`{exact}` against fp32 (median / 99th percentile of the relative error; margin: the "
              "smaller of fp32's median and 99th percentile over the exact anchor's, of those that are not 0), "
              "and the other anchors:\n")
        print(f"| data | K | fp32 | `{exact}` | margin |" + "".join(f" `{o}` |" for o in others))
        print("|---|---|---|---|---|" + "---|" * len(others))
        for kind in _kinds(rows):
            for kk in ks:
                a, b = _find(rows, kind, kk, "fp32"), _find(rows, kind, kk, str(exact))
                margin = _margin(a, b)
                cells = [_find(rows, kind, kk, str(o)) for o in others]
                print(f"| {kind} | {kk} | {a['rel_median']:.2e} / {a['rel_p99']:.2e} | "
                      f"{b['rel_median']:.2e} / {b['rel_p99']:.2e} | "
                      f"{'-' if margin is None else f'{margin:.2f}x'} |"
                      + "".join(f" {c['rel_median']:.2e} / {c['rel_p99']:.2e} |" for c in cells))


def _margin(fp32, row):
    """The smaller of fp32's median and 99th percentile over ``row``'s, of those where fp32's
    is not 0 (where it is, the criterion asks for 0 too: no margin to speak of); None if
    both are 0."""
    ratios = [fp32[q] / row[q] if row[q] else math.inf for q in ("rel_median", "rel_p99") if fp32[q]]
    return min(ratios, default=None)


def plot(rows, path: Path, windows, chosen):
    """Median and 99th percentile of the relative error against K, a panel per data kind:
    fp32, the window sweep (G = 0, running, truncation), and variants of the chosen window."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(_kinds(rows)), figsize=(17, 8.5), sharex=True)
    cmap = plt.get_cmap("viridis")
    lines = [("fp32", dict(color="black", linewidth=2.5))]
    lines += [(str(ColumnAccumulator(window=w)), dict(color=cmap(0.9 * i / max(len(windows) - 1, 1))))
              for i, w in enumerate(windows)]
    if chosen is not None:
        groups = sorted({r["group"] for r in rows if r["group"] not in ("", 0)})
        lines += [(str(ColumnAccumulator(window=chosen, group=g)), dict(color="tab:red", linestyle=style))
                  for g, style in zip(groups, ("--", ":"))]
        lines += [(str(ColumnAccumulator(window=chosen, sticky=True)), dict(color="tab:orange", linestyle="--")),
                  (str(ColumnAccumulator(window=chosen, anchor="bound")), dict(color="magenta", linestyle="--")),
                  (str(ColumnAccumulator(window=chosen, anchor="exact")), dict(color="tab:cyan", linestyle="--"))]
    for col, kind in enumerate(_kinds(rows)):
        for row, (key, label) in enumerate((("rel_median", "median"), ("rel_p99", "99th percentile"))):
            ax = axes[row, col]
            for name, style in lines:
                sel = [r for r in rows if r["data"] == kind and r["accumulator"] == name]
                ax.plot([r["k"] for r in sel], [max(r[key], FLOOR) for r in sel], marker="o", markersize=3,
                        label=name, **style)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.3)
            ax.set_title(f"{kind}: {label}", fontsize=10)
            if row == 1:
                ax.set_xlabel("K (products in the column)")
            if col == 0:
                ax.set_ylabel(f"relative error |y - s| / |s|, {label}")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("One column of K bf16 products: sequential fp32 and column accumulators against the exact sum "
                 f"({rows[0]['trials']} trials; an error of 0 is drawn at {FLOOR:g})")
    fig.tight_layout()
    save_figure(fig, path, dpi=80)
    plt.close(fig)
