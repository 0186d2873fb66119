"""Paper 003 (cost-optimal IaaS policies) reproduced: Fig. 4 and Table II (docs/iaas/mechanisms.md).
Every experiment is `python -m sweep -m experiment=iaas/<name>`; `python -m reproduction iaas`
runs them all."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sweep.plots import pyplot, save
from sweep.statistics import student_t_interval

from .experiment import Check, Context, Experiment

# Table II: rho_{0, x2} = 1 - alpha / alpha' (best of ours against the best theta policy).
PAPER_RHO = {3.0: 52.70, 13.0: 62.85}
RHO_TOLERANCE = 10.0  # percentage points
JOB_TYPE = {3.0: "type 1 (x0 = 3)", 13.0: "type 2 (x0 = 13)"}


def rho_table(run_dir: Path) -> pd.DataFrame:
    """Per job type: alpha of BestOurs and BestTheta (mean, 95% interval) and rho per replicate."""
    frame = pd.read_parquet(Path(run_dir) / "results.parquet")
    rows = []
    for x0, part in frame.groupby("jobs.slackness_max"):
        wide = part.pivot_table(index="replicate", columns="mechanism", values="unit_cost")
        rho = 100.0 * (1.0 - wide["BestOurs"] / wide["BestTheta"])
        row = {"jobs.slackness_max": float(x0), "replicates": len(wide)}
        for mechanism in ("BestOurs", "BestTheta"):
            row[f"{mechanism}_alpha"] = wide[mechanism].mean()
            row[f"{mechanism}_ci95"] = student_t_interval(wide[mechanism]).half_width
        best = part[part["mechanism"] == "BestOurs"]["policy"].value_counts()
        row.update(rho_percent=rho.mean(), rho_ci95=student_t_interval(rho).half_width,
                   paper_rho_percent=PAPER_RHO.get(float(x0), np.nan), best_ours=best.index[0],
                   best_theta=part[part["mechanism"] == "BestTheta"]["policy"].value_counts().index[0])
        rows.append(row)
    return pd.DataFrame(rows)


def fig4(run_dir: Path, path: Path) -> pd.DataFrame:
    """Fig. 4: alpha of every policy (mean over replicates), ours in groups of 13 by bid, then
    the theta policies, one series per job type."""
    table = pd.read_parquet(Path(run_dir) / "policies.parquet")
    means = (table.groupby(["jobs.slackness_max", "mechanism", "policy"], sort=False)["unit_cost"].mean()
             .reset_index())
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for ax, mechanism in zip(axes, ("BestOurs", "BestTheta")):
        for x0, part in means[means["mechanism"] == mechanism].groupby("jobs.slackness_max"):
            ax.plot(np.arange(1, len(part) + 1), part["unit_cost"], marker="*" if mechanism == "BestOurs" else "o",
                    linestyle="none", markersize=4, label=JOB_TYPE.get(float(x0), f"x0 = {x0:g}"))
        ax.set_xlabel("policy index (ours: 7 bids x 13 beta)" if mechanism == "BestOurs"
                      else "policy index (7 bids x 11 theta)")
        ax.set_title("our policies" if mechanism == "BestOurs" else "theta policies of [6], [7]")
        ax.legend()
    axes[0].set_ylabel("average unit cost alpha (per instance-hour)")
    fig.suptitle("Fig. 4: the average unit cost of each policy")
    save(fig, path, bbox_inches="tight")
    return means


def table2(context: Context) -> pd.DataFrame:
    table = rho_table(context.run_dir("table2"))
    table.to_csv(context.out / "table2.csv", index=False, float_format="%.4f")
    fig4(context.run_dir("table2"), context.out / "fig4.png").to_csv(context.out / "fig4.csv", index=False,
                                                                      float_format="%.4f")
    return table


EXPERIMENTS = (Experiment("table2", "iaas/table2", table2),)


def checks(context: Context) -> list[Check]:
    out: list[Check] = []
    table = context.reports.get("table2")
    if table is not None:
        for _, row in table.iterrows():
            x0 = float(row["jobs.slackness_max"])
            label = JOB_TYPE.get(x0, f"x0 = {x0:g}")
            paper = PAPER_RHO.get(x0)
            if paper is not None:
                out.append(Check("table2", f"Table II rho, {label} (%)", float(row["rho_percent"]),
                                 bool(abs(row["rho_percent"] - paper) <= RHO_TOLERANCE),
                                 f"|ours - paper| <= {RHO_TOLERANCE:g}", paper))
            gap = float(row["BestTheta_alpha"] - row["BestOurs_alpha"])
            out.append(Check("table2", f"Table II, {label}: best of ours below the best theta policy (alpha' - alpha)",
                             gap, bool(gap > 0), "> 0"))
    return out
