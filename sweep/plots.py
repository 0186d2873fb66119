"""Plot plumbing shared by the engine's cell figures (sweep/cell_outputs.py) and the paper
reproductions (reproduction/): a headless pyplot, saving as PNG, grouped bars, and the sweep figures
of MLflow's parent run (mean utility against a grid key with 95% intervals, in small multiples)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd


def pyplot():
    """matplotlib.pyplot on the Agg backend (no screen needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path, **kwargs) -> None:
    """Write `fig` as a PNG at 100 dpi and close it."""
    kwargs.setdefault("dpi", 100)
    fig.savefig(path, format="png", **kwargs)
    pyplot().close(fig)


def grouped_bars(
    table: pd.DataFrame,
    x: str,
    column: str,
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    path: Path,
    errors: str | None = None,
    labels: dict[str, str] | None = None,
    series: str = "mechanism",
) -> None:
    """One group of bars per value of `x` (in table order), one bar per `series` value, heights
    `column` and error bars `errors`; the legend below the plot."""
    plt = pyplot()
    values = list(dict.fromkeys(table[x]))
    members: Sequence[str] = list(dict.fromkeys(table[series]))
    width = 0.8 / len(members)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for j, member in enumerate(members):
        part = table[table[series] == member].set_index(x).reindex(values)
        ax.bar(
            np.arange(len(values)) + j * width,
            part[column],
            width,
            yerr=None if errors is None else part[errors],
            capsize=3,
            label=(labels or {}).get(member, member),
        )
    ax.set_xticks(np.arange(len(values)) + width * (len(members) - 1) / 2)
    ax.set_xticklabels([str(v) for v in values])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    many = len(members) > 5  # long names: one per row
    ax.legend(
        fontsize=8, ncol=1 if many else len(members), loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False
    )
    save(fig, path, bbox_inches="tight")


MAX_PANELS = 12  # small multiples per figure; past this the figure is too small to read


def interval_lines(summary: pd.DataFrame, key: str, others: Sequence[str], path: Path, top: int = 8) -> int:
    """Mean utility against the grid key ``key``, one line per mechanism with its Student-t 95%
    error bars, in one panel per combination of the ``others`` keys: the number of panels drawn,
    0 if there is nothing to draw (fewer than two values of ``key``).

    Averaging over the other keys hides where the best mechanism changes, so the figure splits
    whenever the combinations fit in ``MAX_PANELS`` panels, and otherwise too when the order of
    the mechanisms changes between them; the keys that do not fit are averaged within a panel,
    with the interval of that average (``mean_of_means``), and the title says which."""
    table = summary.dropna(subset=[key, "utility_mean"])
    if table[key].nunique() < 2:
        return 0
    mechanisms = _top_mechanisms(table, top)
    table = table[table["mechanism"].isin(mechanisms)]
    split = _split_keys(table, key, [k for k in others if k in table and table[k].nunique() > 1])
    averaged = [k for k in others if k in table and table[k].nunique() > 1 and k not in split]
    panels = list(table.groupby(split, sort=True, dropna=False)) if split else [((), table)]
    _draw_panels(panels, split, key, mechanisms, averaged, path, total=summary["mechanism"].nunique())
    return len(panels)


def _top_mechanisms(table: pd.DataFrame, top: int) -> list[str]:
    """The mechanisms in table order, or the ``top`` best by overall mean utility when there are more."""
    means = table.groupby("mechanism", sort=False)["utility_mean"].mean()
    if len(means) <= top:
        return [str(m) for m in means.index]
    best = set(means.sort_values(ascending=False).index[:top])
    return [str(m) for m in means.index if m in best]


def _split_keys(table: pd.DataFrame, key: str, others: list[str]) -> list[str]:
    """The other keys to draw a panel for: all of them when their combinations fit, else (the
    order of the mechanisms changing between them) the keys with the fewest values that fit;
    none when one panel, averaged, tells the same story."""
    if not others:
        return []
    if _combinations(table, others) <= MAX_PANELS:
        return list(others)
    if not _order_changes(table, key, others):
        return []
    chosen: list[str] = []
    for other in sorted(others, key=lambda k: table[k].nunique()):
        if _combinations(table, chosen + [other]) <= MAX_PANELS:
            chosen.append(other)
    return [k for k in others if k in chosen]


def _combinations(table: pd.DataFrame, keys: list[str]) -> int:
    return len(table[keys].drop_duplicates()) if keys else 1


def _order_changes(table: pd.DataFrame, key: str, others: list[str]) -> bool:
    """Whether, at some value of ``key``, the mechanisms rank differently in two combinations
    of the other keys (by mean utility)."""
    for _, at_x in table.groupby(key, sort=False):
        orders = {
            tuple(group.sort_values("utility_mean", ascending=False, kind="stable")["mechanism"])
            for _, group in at_x.groupby(others, sort=False)
        }
        if len(orders) > 1:
            return True
    return False


def mean_of_means(group: pd.DataFrame) -> tuple[float, float]:
    """The mean of a mechanism's cell means and the 95% half-width of that mean: the cells are
    independent, so their standard errors add in quadrature (Student t on the smallest cell's
    degrees of freedom: conservative). One cell: its own interval."""
    from .statistics import t_half_width

    if len(group) == 1:
        row = group.iloc[0]
        return float(row["utility_mean"]), float(row["utility_ci95_high"] - row["utility_ci95_low"]) / 2
    k, n = len(group), int(group["n"].min())
    se = np.sqrt(np.sum(group["utility_std"].to_numpy(float) ** 2 / group["n"].to_numpy(float))) / k
    # t_half_width(std, n) is t * std / sqrt(n): a standard error se is std = se * sqrt(n)
    return float(group["utility_mean"].mean()), float(t_half_width(se * np.sqrt(n), n))


def _draw_panels(
    panels, split: list[str], key: str, mechanisms: list[str], averaged: list[str], path: Path, total: int
) -> None:
    plt = pyplot()
    columns = min(len(panels), 4)
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(3.4 * columns + 0.6, 2.1 * rows + 0.9), squeeze=False, sharex=True, sharey=True
    )
    values = sorted(dict.fromkeys(v for _, panel in panels for v in panel[key]), key=_sort_key)
    numeric = all(isinstance(v, (int, float, np.number)) for v in values)
    positions = {v: (float(v) if numeric else float(i)) for i, v in enumerate(values)}
    span = (max(positions.values()) - min(positions.values())) or 1.0
    for ax, (label, panel) in zip(axes.flat, panels):
        _draw_panel(ax, panel, key, mechanisms, positions, span)
        if split:
            label = label if isinstance(label, tuple) else (label,)
            ax.set_title(", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(split, label)), fontsize=9)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if not numeric:
        axes.flat[0].set_xticks(list(positions.values()), [str(v) for v in values])
    for ax in axes[-1]:
        ax.set_xlabel(key, fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("mean utility", fontsize=9)
    more = f"; the best {len(mechanisms)} of {total} mechanisms" if total > len(mechanisms) else ""
    over = f"; averaged over {', '.join(averaged)}" if averaged else ""
    fig.suptitle(
        f"Mean utility against {key}, 95% intervals (Student t over replicates){over}{more}",
        fontsize=10,
        y=1 - 0.05 / fig.get_figheight(),
        va="top",
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    fig.legend(
        *axes.flat[0].get_legend_handles_labels(),
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.22 / fig.get_figheight()),
        ncol=min(len(mechanisms), 6),
        fontsize=9,
        frameon=False,
    )
    save(fig, path, bbox_inches="tight")


def _draw_panel(ax, panel, key: str, mechanisms: list[str], positions: dict, span: float) -> None:
    """One panel: a line per mechanism with its 95% error bars, the bars of one x side by side."""
    for j, mechanism in enumerate(mechanisms):
        points = [
            (positions[x], *mean_of_means(group))
            for x, group in panel[panel["mechanism"] == mechanism].groupby(key, sort=False)
        ]
        if not points:
            continue
        points.sort()
        dodge = (j - (len(mechanisms) - 1) / 2) * span * 0.012
        xs, means, halves = (np.array(c) for c in zip(*points))
        ax.errorbar(
            xs + dodge,
            means,
            yerr=halves,
            marker="o",
            markersize=3,
            capsize=2.5,
            linewidth=1.2,
            label=mechanism,
            color=f"C{j % 10}",
        )
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)


def _sort_key(value):
    return (0, float(value), "") if isinstance(value, (int, float, np.number)) else (1, 0.0, str(value))
