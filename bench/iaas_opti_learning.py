"""One OptiLearning run (paper 003, Alg. 3) over about 30,000 jobs and 98 policies: the cost of
every job under every policy (the counterfactuals, `stream_cost`), the exponentiated gradient
with delayed feedback, and the draws.

    python -m bench.iaas_opti_learning [--slots 30000] [--repeats 3] [--seed 0]
                                       [--out bench/results/iaas_opti_learning.json | --out -]

Goal: at most 60 s on the 2-core machine. The 98 policies are our 91 ({beta, b},
Sec. V-A's grid) and the 7 theta = 1 policies (one per bid); job type 3 of Sec. V-C (x0 = 5),
prices i.i.d. exponential of mean 0.11. The first repeat includes loading (or compiling) the
Numba kernel; the median over repeats is the number to read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from algorithms.iaas.opti_learning import opti_learning
from algorithms.iaas.policies import dynalloc_grid, theta_grid
from market.iaas.jobs import JobParams, draw_jobs
from market.iaas.spot_prices import PriceParams, draw_prices


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.iaas_opti_learning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slots", type=int, default=30000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench/results/iaas_opti_learning.json")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    jobs = draw_jobs(JobParams.from_config({"slots": args.slots, "slackness_max": 5.0}), rng)
    prices = draw_prices(PriceParams.from_config({}), jobs.horizon(), rng)
    policies = dynalloc_grid() + theta_grid(thetas=(1.0,))
    seconds = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        run = opti_learning(jobs, prices, policies, np.random.default_rng(repeat))
        seconds.append(time.perf_counter() - start)
        print(f"repeat {repeat}: {seconds[-1]:.2f} s, alpha {run.unit_cost(float(jobs.size.sum())):.4f}", flush=True)
    result = {
        "jobs": len(jobs),
        "policies": len(policies),
        "lag_slots": run.lag,
        "seconds": seconds,
        "median_seconds": statistics.median(seconds),
        "goal_seconds": 60.0,
        "load_average": os.getloadavg(),
        "command": " ".join(["python -m bench.iaas_opti_learning", *sys.argv[1:]]),
    }
    print(json.dumps(result, indent=2))
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
