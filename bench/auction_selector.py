"""Alg. 2's DP (a per-slot surrogate of eq. 12) against the exact maximiser of F(il) for one node
type (algorithms/auction/exact_selector.py): how often the DP's choice has a lower F, what that
does to welfare, and what the exact choice costs in time.

    python -m bench.auction_selector [--nodes 20] [--load 12] [--days 2] [--out bench/results/auction_selector.json]

For each day (the family's world with `cluster.nodes` A100s and `tasks.load` tasks per slot,
seeds [day, 2026]) and each pdFTSP variant below:
- decisions: the DP run, with the exact maximum of F computed at every task on the same duals
  and schedule space (the DP's path): tasks where the DP's F is below the exact F by more than
  1e-9 (and above it: must be 0), and those where the admission would differ (F > 0 on one side
  only);
- welfare and admissions of the DP run and of a run with `selector="exact"` (its own path), and
  the decision time per task of both (time.perf_counter, this process).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from algorithms.auction import family
from algorithms.auction.exact_selector import exact_select
from algorithms.auction.pdftsp import PdFTSP

VARIANTS = ("pdFTSP", "pdFTSP(work_unit=samples)", "pdFTSP(beta=lemma2_tight,price_scale=0.1,schedule_space=fitting)")
TOLERANCE = 1e-9


class _Audited(PdFTSP):
    """The DP run, comparing each choice with the exact maximum on the same duals."""

    def select(self, instance, task, lam, phi, usable=None):
        f, schedule, terms = super().select(instance, task, lam, phi, usable)
        best, _ = exact_select(instance, task, lam, phi, usable)
        self.audit.append((f, best))
        return f, schedule, terms


def measure(nodes: int, load: float, days: int) -> dict:
    prepared = family.prepare({"cluster": {"nodes": nodes}, "tasks": {"load": load}, "mechanisms": list(VARIANTS)})
    rows = []
    for day in range(days):
        instance = family.draw_world(prepared, np.random.default_rng([day, 2026]))
        for name in VARIANTS:
            audited = prepared.pdftsp[name].build(_Audited)
            audited.audit = []
            dp = audited.run(instance)
            f = np.array([a for a, _ in audited.audit])
            best = np.array([b for _, b in audited.audit])
            found = np.isfinite(best)
            below = found & (f < best - TOLERANCE)
            above = found & (f > best + TOLERANCE)
            flips = found & ((f > 0) != (best > 0))
            started = time.perf_counter()
            exact = prepared.pdftsp[name].build(selector="exact").run(instance)
            exact_seconds = time.perf_counter() - started
            started = time.perf_counter()
            plain = prepared.pdftsp[name].build().run(instance)
            dp_seconds = time.perf_counter() - started
            assert plain.metrics()["welfare"] == dp.metrics()["welfare"]  # the audit changed nothing
            rows.append(
                {
                    "day": day,
                    "variant": name,
                    "tasks": len(instance.tasks),
                    "decisions": int(found.sum()),
                    "dp_below_exact": int(below.sum()),
                    "dp_above_exact": int(above.sum()),
                    "admission_flips": int(flips.sum()),
                    "largest_gap": float((best[found] - f[found]).max(initial=0.0)),
                    "welfare_dp": dp.metrics()["welfare"],
                    "welfare_exact": exact.metrics()["welfare"],
                    "admitted_dp": int(dp.metrics()["admitted"]),
                    "admitted_exact": int(exact.metrics()["admitted"]),
                    "ms_per_task_dp": 1000 * dp_seconds / len(instance.tasks),
                    "ms_per_task_exact": 1000 * exact_seconds / len(instance.tasks),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return {"nodes": nodes, "load": load, "days": days, "rows": rows}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--load", type=float, default=12.0)
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--out", default="bench/results/auction_selector.json")
    args = parser.parse_args(argv)
    before = os.getloadavg()
    result = measure(args.nodes, args.load, args.days)
    result.update(
        machine=platform.platform(),
        python=platform.python_version(),
        load_before=before,
        load_after=os.getloadavg(),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    )
    if args.out != "-":
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
