"""Measured alternatives behind docs/iaas/mechanisms.md (paper 003, Fig. 4 and Table II): the
best of our policies and of the theta policies (re-bidding every hour, `theta`, or turning to
on-demand at their first spot loss, `theta_once`), and our alpha against beta for three bids, under
other price processes. Not part of `make reproduce-iaas`; run it on its own (about a minute):

    python -m reproduction.iaas_alternatives
"""
from __future__ import annotations

import numpy as np

from algorithms.iaas.policies import ours_grid, stream_cost, theta_grid
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


if __name__ == "__main__":
    for label, prices in PRICES:
        print(label)
        for x0 in (3.0, 13.0):
            compare(prices, x0)
