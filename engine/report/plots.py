"""Report plots with Matplotlib, for files and HTML reports.

Every function builds a :class:`matplotlib.figure.Figure` directly, with an Agg canvas and no
pyplot state, so plots can be made on any thread (the Leaderboard builds them on a worker).
Each returns ``None`` when the results hold nothing to plot. :func:`save` writes PNG or SVG
by the file's suffix.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .collect import Result, fill_truth_complexity, is_number
from .layouts import (
    CDE_GROUPS,
    LLMSR_GROUPS,
    NEWTON_GROUPS,
    SURFACE_GROUPS,
    BENCHMARK_ORDER,
    _erbench_levels,
)

PLOT_FORMATS = (".png", ".svg")
_GROUP_LABELS = dict(LLMSR_GROUPS + NEWTON_GROUPS + SURFACE_GROUPS + CDE_GROUPS)
_GROUP_ORDER = [g for g, _ in LLMSR_GROUPS + SURFACE_GROUPS + CDE_GROUPS + NEWTON_GROUPS]


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _group_sort_key(bench_group: tuple[str, str]):
    bench, group = bench_group
    b = BENCHMARK_ORDER.index(bench) if bench in BENCHMARK_ORDER else len(BENCHMARK_ORDER)
    g = _GROUP_ORDER.index(group) if group in _GROUP_ORDER else len(_GROUP_ORDER)
    return (b, g, bench, group)


def _methods(results: Iterable[Result]) -> list[str]:
    return sorted({r.method_label for r in results})


# ---------------------------------------------------------------------------- NMSE


def nmse_boxplot(results: Sequence[Result], split: str = "id") -> Figure | None:
    """NMSE on ``split`` per group × method as box plots on a log axis (each run one point).

    Exact fits (NMSE = 0) are drawn at a floor one decade below the smallest positive value;
    infinite or missing values are left out (the tables count them)."""
    data: dict[tuple, dict[str, list[float]]] = {}
    for r in results:
        v = (r.metrics.get(split) or {}).get("nmse")
        if not is_number(v) or math.isinf(float(v)) or float(v) < 0:
            continue
        data.setdefault((r.benchmark, r.group), {}).setdefault(r.method_label, []).append(float(v))
    if not data:
        return None
    positive = [v for per in data.values() for vs in per.values() for v in vs if v > 0]
    floor = (min(positive) / 10.0) if positive else 1e-12
    groups = sorted(data, key=_group_sort_key)
    methods = _methods(r for r in results if (r.benchmark, r.group) in data)
    colors = dict(zip(methods, _colors(len(methods))))
    width = 0.8 / max(len(methods), 1)
    fig = _figure(max(6.0, 1.2 * len(groups) * max(1, len(methods)) ** 0.5 + 2), 4.5)
    ax = fig.add_subplot()
    used: set[str] = set()
    for gi, key in enumerate(groups):
        for mi, method in enumerate(methods):
            vs = data[key].get(method)
            if not vs:
                continue
            vs = [v if v > 0 else floor for v in vs]
            pos = gi - 0.4 + width * (mi + 0.5)
            box = ax.boxplot([vs], positions=[pos], widths=width * 0.85, patch_artist=True, manage_ticks=False,
                             showfliers=True)
            for patch in box["boxes"]:
                patch.set_facecolor(colors[method])
                patch.set_alpha(0.75)
            for med in box["medians"]:
                med.set_color("black")
            if method not in used:
                box["boxes"][0].set_label(method)
                used.add(method)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{b}\n{_GROUP_LABELS.get(g, g)}" for b, g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(f"NMSE ({split.upper()}, log scale)")
    ax.set_title(f"NMSE per group and method ({split.upper()})")
    ax.grid(axis="y", alpha=0.3)
    if positive and any(v == 0 for per in data.values() for vs in per.values() for v in vs):
        ax.axhline(floor, color="grey", lw=0.8, ls=":")
        ax.annotate("exact fits (NMSE = 0)", (0.01, floor), xycoords=("axes fraction", "data"), fontsize=7,
                    color="grey", va="bottom")
    ax.legend(fontsize=8, loc="best")
    return fig


# ---------------------------------------------------------------------------- SA vs complexity


def _bins(values: Sequence[int], max_bins: int = 8) -> list[tuple[int, int]]:
    """Inclusive integer ranges covering ``values``: one per value when there are few distinct
    values, else about ``max_bins`` ranges with similar counts."""
    distinct = sorted(set(values))
    if len(distinct) <= max_bins:
        return [(v, v) for v in distinct]
    ordered = sorted(values)
    edges = []
    for i in range(1, max_bins):
        edges.append(ordered[min(len(ordered) - 1, round(i * len(ordered) / max_bins))])
    bins, low = [], distinct[0]
    for edge in sorted(set(edges)):
        if edge > low:
            bins.append((low, edge - 1))
            low = edge
    bins.append((low, distinct[-1]))
    return bins


def sa_vs_complexity(results: Sequence[Result]) -> Figure | None:
    """Symbolic accuracy (% of runs) per ground-truth complexity bin, one line per method.

    Complexity is the node count of the task's true expression; tasks whose truth is not an
    expression (Boolean networks, graphs, hidden lab laws) are left out. An undecided check
    counts as not recovered, as in the tables."""
    fill_truth_complexity(results)
    usable = [r for r in results if r.truth_complexity is not None]
    if not usable:
        return None
    bins = _bins([r.truth_complexity for r in usable])
    methods = _methods(usable)
    colors = dict(zip(methods, _colors(len(methods))))
    fig = _figure(max(6.0, 0.7 * len(bins) + 3), 4.2)
    ax = fig.add_subplot()
    for method in methods:
        xs, ys, ns = [], [], []
        for i, (lo, hi) in enumerate(bins):
            runs = [r for r in usable if r.method_label == method and lo <= r.truth_complexity <= hi]
            if runs:
                xs.append(i)
                ys.append(100.0 * sum(1 for r in runs if r.sa is True) / len(runs))
                ns.append(len(runs))
        ax.plot(xs, ys, marker="o", color=colors[method], label=method)
        for x, y, n in zip(xs, ys, ns):
            ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(0, 5), fontsize=6, ha="center",
                        color=colors[method])
    ax.set_xticks(range(len(bins)))
    ax.set_xticklabels([str(lo) if lo == hi else f"{lo}–{hi}" for lo, hi in bins], fontsize=8)
    ax.set_xlabel("ground-truth complexity (expression-tree nodes)")
    ax.set_ylabel("symbolic accuracy (% of runs)")
    ax.set_ylim(-3, 103)
    ax.set_title("Symbolic accuracy vs. complexity of the true law (numbers: runs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return fig


# ---------------------------------------------------------------------------- ERBench robustness


def recovery_vs_axis(results: Sequence[Result]) -> Figure | None:
    """ERBench: recovery rate (% of decided runs) against the level of each robustness axis,
    one panel per axis and one line per method."""
    variants = [r for r in results if r.axis]
    if not variants:
        return None
    try:
        from ..tasks.variants import AXES, AXIS_LABELS
    except Exception:  # pragma: no cover - the variants module is part of the engine
        AXES, AXIS_LABELS = (), {}
    axes = [a for a in AXES if any(r.axis == a for r in variants)]
    axes += sorted({r.axis for r in variants} - set(axes))
    methods = _methods(variants)
    colors = dict(zip(methods, _colors(len(methods))))
    fig = _figure(max(5.0, 3.6 * len(axes)), 3.8)
    panels = fig.subplots(1, len(axes), squeeze=False)[0]
    plotted = False
    for ax, axis in zip(panels, axes):
        levels = _erbench_levels(variants, axis)
        for method in methods:
            xs, ys = [], []
            for i, lv in enumerate(levels):
                decided = [r.recovered for r in variants
                           if r.axis == axis and r.level == lv and r.method_label == method and r.recovered is not None]
                if decided:
                    xs.append(i)
                    ys.append(100.0 * sum(decided) / len(decided))
            if xs:
                plotted = True
                ax.plot(xs, ys, marker="o", color=colors[method], label=method)
        ax.set_xticks(range(len(levels)))
        ax.set_xticklabels(levels, fontsize=8, rotation=30 if len(levels) > 4 else 0)
        ax.set_title(AXIS_LABELS.get(axis, axis), fontsize=10)
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
    panels[0].set_ylabel("recovery (% of decided runs)")
    if not plotted:
        return None
    handles, labels = panels[0].get_legend_handles_labels()
    for ax in panels[1:]:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab):
            if ll not in labels:
                handles.append(hh)
                labels.append(ll)
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncols=min(len(labels), 4))
    fig.suptitle("ERBench: structure recovery by robustness axis")
    return fig


# ---------------------------------------------------------------------------- files


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as PNG or SVG, chosen by the suffix of ``path``."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise ValueError(f"plot files must end in .png or .svg, not '{path.suffix or path.name}'")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=suffix[1:], dpi=150)
    return path


def save_all(results: Sequence[Result], directory: str | Path, fmt: str = "png") -> list[Path]:
    """Every plot that has something to show, saved in ``directory`` as ``<name>.<fmt>``."""
    fmt = fmt.lower().lstrip(".")
    if f".{fmt}" not in PLOT_FORMATS:
        raise ValueError(f"plot format must be png or svg, not '{fmt}'")
    directory = Path(directory)
    made = []
    for name, build in (
        ("nmse_id", lambda: nmse_boxplot(results, "id")),
        ("nmse_ood", lambda: nmse_boxplot(results, "ood")),
        ("sa_vs_complexity", lambda: sa_vs_complexity(results)),
        ("recovery_vs_axis", lambda: recovery_vs_axis(results)),
    ):
        fig = build()
        if fig is not None:
            made.append(save(fig, directory / f"{name}.{fmt}"))
    return made
