"""Plot plumbing shared by the engine's cell figures (sweep/cell_outputs.py) and the paper
reproductions (reproduction/): a headless pyplot, saving as PNG, and grouped bars."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

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


def grouped_bars(table: pd.DataFrame, x: str, column: str, *, xlabel: str, ylabel: str, title: str, path: Path,
                 errors: str | None = None, labels: dict[str, str] | None = None,
                 series: str = "mechanism") -> None:
    """One group of bars per value of `x` (in table order), one bar per `series` value, heights
    `column` and error bars `errors`; the legend below the plot."""
    plt = pyplot()
    values = list(dict.fromkeys(table[x]))
    members: Sequence[str] = list(dict.fromkeys(table[series]))
    width = 0.8 / len(members)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for j, member in enumerate(members):
        part = table[table[series] == member].set_index(x).reindex(values)
        ax.bar(np.arange(len(values)) + j * width, part[column], width,
               yerr=None if errors is None else part[errors], capsize=3, label=(labels or {}).get(member, member))
    ax.set_xticks(np.arange(len(values)) + width * (len(members) - 1) / 2)
    ax.set_xticklabels([str(v) for v in values])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    many = len(members) > 5  # long names: one per row
    ax.legend(fontsize=8, ncol=1 if many else len(members), loc="upper center", bbox_to_anchor=(0.5, -0.14),
              frameon=False)
    save(fig, path, bbox_inches="tight")


def lines_by_mechanism(summary: pd.DataFrame, key: str, column: str, path: Path, top: int = 8) -> bool:
    """``column`` against the grid key ``key``, averaged over the other keys, one line per
    mechanism (the ``top`` best by overall mean when there are more); False if there is nothing
    to draw (fewer than two values of ``key``)."""
    table = summary[[key, "mechanism", column]].dropna()
    if table[key].nunique() < 2:
        return False
    means = table.groupby("mechanism", sort=False)[column].mean()
    keep = list(means.sort_values(ascending=False).index[:top]) if len(means) > top else list(means.index)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mechanism in keep:
        line = table[table["mechanism"] == mechanism].groupby(key)[column].mean().sort_index()
        ax.plot(line.index, line.to_numpy(), marker="o", markersize=3, label=str(mechanism))
    ax.set_xlabel(key)
    ax.set_ylabel(f"{column} (mean over the other keys)")
    more = f" (the best {top} of {len(means)})" if len(means) > top else ""
    ax.set_title(f"{column} against {key}, one line per mechanism{more}")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    save(fig, path, bbox_inches="tight")
    return True
