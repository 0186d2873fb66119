"""Measured alternatives behind docs/iaas/reproduction.md (paper 003).

`table2` (Fig. 4, Table II): the best of our policies and of the theta policies (re-bidding
every hour, `theta`, or turning to on-demand at their first spot loss, `theta_once`), and our
alpha against beta for three bids, under three price processes.
`table3` (Table III): rho_{R, x2} of the best {beta0, beta*(b), b} against the best of eq. (2),
and the best beta0, as the spot price level moves from the default mean 0.11 to the literal 1.1
and the load (jobs per slot) from 1 to 2.

`optimum`: on small streams (the paper's law scaled down: 0.2 jobs per slot, delta = 4, sizes
of 1/6 to 1 hour, 60 slots), what the best policy of each grid pays above the hindsight
optimum (algorithms/iaas/offline_optimum.py), R = 0 and 4.

Not part of `make reproduce-iaas`; run them on their own (about a minute each):

    python -m reproduction.iaas_alternatives [table2|table3|optimum]
"""
from __future__ import annotations

import sys

import numpy as np

from algorithms.iaas.offline_optimum import offline_optimum
from algorithms.iaas.policies import BETAS, BIDS, Policy, ours_grid, stream_cost, theta_grid
from market.iaas.jobs import JobParams, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices

PRICES = (("mean 0.11 (default)", {}), ("mean 1.1 (the paper's literal value)", {"mean": 1.1}),
          ("AWS trace", {"kind": "trace"}))


def compare(prices: dict, slackness_max: float, slots: int = 6000, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    jobs = draw_jobs(JobParams.from_config({"slots": slots, "slackness_max": slackness_max}), rng)
    path = draw_prices(PriceParams.from_config(prices), jobs.horizon(), rng)
    ours = {p: stream_cost(jobs, path, p).unit_cost for p in ours_grid()}
    best = min(ours, key=ours.get)
    for kind in ("theta", "theta_once"):
        theta = {p: stream_cost(jobs, path, p).unit_cost for p in theta_grid(kind=kind)}
        base = min(theta, key=theta.get)
        print(f"  x0 = {slackness_max:g}: best ours {best.name} {ours[best]:.4f}, best {kind} {base.name} "
              f"{theta[base]:.4f}, rho {100 * (1 - ours[best] / theta[base]):.1f}%", flush=True)
    for bid in (0.10, 0.19, 0.28):
        print(f"    b = {bid:.2f}, alpha for beta = 0, 1/12, ..., 11/12, 0.9999: "
              f"{' '.join(f'{ours[p]:.3f}' for p in ours_grid() if p.bid == bid)}", flush=True)


def table3(slots: int = 6000, seed: int = 1) -> None:
    """One world per (x0, spot mean, R): beta*(b) from the spot-only grid, then beta0 x b."""
    betas = ours_grid()
    for x0 in (3.0, 13.0):
        for mean, rate in ((0.11, 1.0), (0.3, 1.0), (1.1, 1.0), (0.11, 2.0), (0.3, 2.0)):
            rng = np.random.default_rng(seed)
            jobs = draw_jobs(JobParams.from_config({"slots": slots, "slackness_max": x0, "arrival_rate": rate}), rng)
            path = draw_prices(PriceParams.from_config({"mean": mean}), jobs.horizon(), rng)
            spot_only = {p: stream_cost(jobs, path, p).unit_cost for p in betas}
            star = {b: min((p for p in spot_only if p.bid == b), key=spot_only.get).beta for b in BIDS}
            cells = []
            for r in (200, 400, 600, 800):
                ours = {p: stream_cost(jobs, path, p, r).unit_cost
                        for p in (Policy("ours", b, star[b], beta0) for b in BIDS for beta0 in BETAS)}
                naive = min(stream_cost(jobs, path, Policy("ours", b, star[b]), r).unit_cost for b in BIDS)
                best = min(ours, key=ours.get)
                rho = 100 * (1 - ours[best] / naive) if naive > 0 else float("nan")
                cells.append(f"R {r}: {rho:5.1f}% (beta0 {best.beta0:.3g}, b {best.bid:.2f})")
            print(f"  x0 = {x0:g}, mean {mean:g}, {rate:g} job/slot: " + "; ".join(cells), flush=True)


SMALL_JOBS = {"arrival_rate": 0.2, "parallelism": 4, "size_hours": [1 / 6, 1.0], "slots": 60}


def optimum(seeds: int = 10) -> None:
    """Per (x0, R): mean and worst alpha / OPT of the best policy of each grid over `seeds` worlds."""
    for x0 in (3.0, 13.0):
        for r in (0, 4):
            ratios: dict[str, list[float]] = {"ours": [], "theta": [], "eq. (2)": []}
            for seed in range(seeds):
                rng = np.random.default_rng(seed)
                jobs = draw_jobs(JobParams.from_config({**SMALL_JOBS, "slackness_max": x0}), rng)
                path = draw_prices(PriceParams.from_config({}), jobs.horizon(), rng)
                opt = offline_optimum(jobs, path, r)
                if opt.cost <= 0:
                    continue
                grids = {"ours": ours_grid(beta0s=BETAS if r else (None,)), "theta": theta_grid(kind="theta_once"),
                         "eq. (2)": ours_grid()}
                for name, grid in grids.items():
                    ratios[name].append(min(stream_cost(jobs, path, p, r).cost.sum() for p in grid) / opt.cost)
            if not ratios["ours"]:
                print(f"  x0 = {x0:g}, R = {r}: the optimum is 0 in every world (all work free)", flush=True)
                continue
            cells = [f"{name} {np.mean(v):.2f} (worst {np.max(v):.2f})" for name, v in ratios.items()]
            print(f"  x0 = {x0:g}, R = {r}, {len(ratios['ours'])} worlds with a positive optimum, "
                  f"best policy / OPT: " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    part = sys.argv[1] if len(sys.argv) > 1 else "table2"
    if part == "table2":
        for label, prices in PRICES:
            print(label)
            for x0 in (3.0, 13.0):
                compare(prices, x0)
    elif part == "table3":
        table3()
    elif part == "optimum":
        optimum()
    else:
        sys.exit(f"unknown part {part!r}: use table2, table3 or optimum")
