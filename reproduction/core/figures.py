"""Paper 002's Figs. 8(a)/10 and 9(b) (docs/core/reproduction.md).

Figs. 8(a) and 10 (Appendix B.2): each Table 1 thread's losses observed during LARA's
exploration, the weighted least squares fit of Sec. 3.1 (gamma = 0.9) and ordinary least
squares (gamma = 1) on them, extrapolated, against the thread's true curve and eps_k. The
bundle is Table 1 drawn with `np.random.default_rng(0)` (as the Fig. 5 experiment draws its
bundles) and run through LARA (the reference, allocations recorded): thread k's points are
(s_k(t), loss(s_k(t))) after each unit t of exploration, s_k(t) its data so far.

Fig. 9(b): threads completed by each unit time under each mechanism, on the first Table 1
bundle of the table1 experiment (replicate 0; its `threads` side table's completion times).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from algorithms.core.lara import LARA
from algorithms.core.simulation import simulate
from algorithms.core.weighted_rls import WeightedRLS
from market.core.bundle_config import BundleConfig, draw_bundle
from sweep.plots import pyplot, save

GAMMAS = {"WLS (gamma = 0.9)": 0.9, "LS (gamma = 1)": 1.0}


def exploration_points(bundle, allocator) -> tuple[int, list[tuple[np.ndarray, np.ndarray]]]:
    """The unit exploration ended and each thread's (data, observed loss) after every unit of it."""
    outcome = simulate(bundle, allocator, record_eta=True)
    end = allocator.exploration_end
    data = np.cumsum(outcome.eta[:end], axis=0) * bundle.arrays().budget
    points = []
    for k, curve in enumerate(bundle.curves):
        s = data[:, k][data[:, k] > 0]
        points.append((s, np.array([curve.loss(x) for x in s])))
    return end, points


def fit_table(seed: int = 0) -> pd.DataFrame:
    """Per thread and fit: the fitted a, b on the exploration points, the data where the fit and
    the true curve reach eps_k, and the fit's relative error in that data."""
    bundle = draw_bundle(BundleConfig.from_config({"kind": "table1"}), np.random.default_rng(seed))
    _, points = exploration_points(bundle, LARA())
    rows = []
    for k, ((s, loss), thread, curve) in enumerate(zip(points, bundle.threads, bundle.curves)):
        truth = curve.data_to_reach(thread.threshold, float("inf"))
        for label, gamma in GAMMAS.items():
            rls = WeightedRLS(gamma)
            for x, y in zip(s, loss):
                rls.update(float(x), float(y))
            reach = (rls.a / thread.threshold) ** (1.0 / rls.b) if rls.b > 0 else np.inf
            rows.append(
                {
                    "thread": k + 1,
                    "label": thread.label,
                    "fit": label,
                    "points": len(s),
                    "data_explored": float(s[-1]),
                    "a": rls.a,
                    "b": rls.b,
                    "threshold": thread.threshold,
                    "fit_reaches_eps_at": reach,
                    "curve_reaches_eps_at": truth,
                    "relative_error": abs(reach - truth) / truth if np.isfinite(truth) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def fit_figure(path: Path, seed: int = 0) -> pd.DataFrame:
    """Figs. 8(a) and 10: one panel per thread, log-log."""
    bundle = draw_bundle(BundleConfig.from_config({"kind": "table1"}), np.random.default_rng(seed))
    end, points = exploration_points(bundle, LARA())
    table = fit_table(seed)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(bundle), figsize=(4 * len(bundle), 3.6))
    for k, (ax, (s, loss), thread, curve) in enumerate(zip(axes, points, bundle.threads, bundle.curves)):
        grid = np.geomspace(max(1.0, s[0]), thread.data_limit, 200)
        ax.plot(s, loss, ".", markersize=2, color="0.6", label=f"observed (units 1-{end})")
        ax.plot(grid, [curve.true_loss(x) for x in grid], color="black", linewidth=1, label="true curve")
        for (label, _), color in zip(GAMMAS.items(), ("tab:blue", "tab:orange")):
            row = table[(table["thread"] == k + 1) & (table["fit"] == label)].iloc[0]
            ax.plot(grid, row["a"] * grid ** -row["b"], color=color, linestyle="--", label=label)
        ax.axhline(thread.threshold, color="tab:red", linewidth=0.8, linestyle=":", label="eps_k")
        ax.axvline(s[-1], color="0.3", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"thread {k + 1}: {thread.label}")
        ax.set_xlabel("data (units)")
    axes[0].set_ylabel("loss")
    axes[0].legend(fontsize=7)
    fig.suptitle("Figs. 8(a) and 10: fits on the exploration phase's losses, extrapolated (Table 1, bundle 0)", y=1.04)
    save(fig, path, bbox_inches="tight")
    return table


def completions_over_time(run_dir: Path, path: Path) -> pd.DataFrame:
    """Fig. 9(b): per mechanism, the threads completed by each unit time (replicate 0)."""
    threads = pd.read_parquet(Path(run_dir) / "threads.parquet")
    first = threads[(threads["replicate"] == 0) & (threads["cell_index"] == threads["cell_index"].min())]
    horizon = int(first["deadline"].max())
    t = np.arange(0, horizon + 1)
    rows = []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for mechanism, part in first.groupby("mechanism", sort=False):
        times = part.loc[part["completed"], "completion_time"].to_numpy()
        done = (times[None, :] <= t[:, None]).sum(axis=1)
        ax.step(t, done, where="post", label=mechanism)
        rows += [
            {"mechanism": mechanism, "t": int(x), "completed": int(c)}
            for x, c in zip(t, done)
            if x == 0 or x == horizon or x in times
        ]
    ax.set_xlabel("unit time t (seconds)")
    ax.set_ylabel("threads completed")
    ax.set_title("Fig. 9(b): threads completed over time (Table 1, bundle 0)")
    ax.legend()
    save(fig, path, bbox_inches="tight")
    return pd.DataFrame(rows)
