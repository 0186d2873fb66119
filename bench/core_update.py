"""One LARA update (paper 002, Alg. 2 after exploration) at 10 to 1,000 threads: the NumPy LARA
(algorithms/core/lara.py) and the compiled one (algorithms/core/lara_kernel.py) side by side.

    python -m bench.core_update [--threads 10,25,50,100,250,500,1000] [--repeats 1] [--seed 0]
                                [--all-active-calls 200] [--out bench/results/core_update.json | --out -]

Goal (issue): one update at K = 100 threads in at most 0.07 ms median (the paper reports 0.7 ms),
and the per-thread scaling up to 1,000 threads reported.

An update is one `allocate` call: everything LARA does in one unit time, the RLS update with the
losses reported at the end of the last unit (eq. 3.5), eq. 3.6 for every thread, Alg. 1, the
cascade of eq. 3.8 and line 12's rescaling. For every K, one bundle of Sec. 4.3
(`{"kind": "scalability", "threads": K}`, seed `--seed` + K) is run with `simulate` once per
allocator and repeat, both in this process, the order alternating between repeats; `allocate`
is wrapped (in this process only) and every call made after exploration ended
(`exploration_end` set, the first exploiting call included) is timed with `time.perf_counter`.
Two runs per K:

- whole: the paper's LARA (default arguments) to the last deadline, every call after
  exploration timed. Threads leave A_t as they succeed or pass their (chained) deadlines, so by
  the end of exploration most calls see few active threads (the |A_t| column, median);
- all-active: `explore=False` (exploitation from the third unit, once every thread has two
  points), stopped after `--all-active-calls` timed calls: the first units, where almost all K
  threads are active, so Alg. 1 and the cascade run on about K threads (the worst case per call).

Reported per K and run: the calls timed, median and p90 in ms for both (over all repeats), the
ratio of the medians (NumPy / compiled; with several repeats also the median of the per-repeat
ratios), the per-thread cost (median / K, in microseconds), the active threads at the timed
calls (median, min, max), whether the two gave the same outcome (whole: completed, completion
times, data, eta, all bit for bit; all-active: the shares of every timed call), and the load
average before and after. Before any timing, one untimed run of each allocator on Table 1 loads
the compiled code from Numba's cache (or compiles it) and warms the interpreter.

The machine is a shared 2-core VM: run it when `uptime` shows a load under 1. K = 1000 takes
about two minutes (its bundle has about 100,000 unit times; most of it is `simulate` and the
NumPy allocator), the whole default run about three to four.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from algorithms.core.lara import LARA
from algorithms.core.lara_kernel import CompiledLARA
from algorithms.core.simulation import simulate
from market.core.bundle_generators import BundleParams, draw_bundle

ALLOCATORS = {"numpy": LARA, "compiled": CompiledLARA}
GOAL_MS = 0.07
GOAL_THREADS = 100


class Enough(Exception):
    """Stops `simulate` once the calls wanted have been timed (the all-active measurement)."""


def timed_run(bundle, make, options: dict, limit: int | None = None):
    """`simulate` with `allocate` wrapped: the seconds of every call after exploration ended, the
    number of active threads at each of them (counted outside the timed span), the shares of the
    timed calls, the outcome (None when stopped after `limit` timed calls) and the allocator."""
    allocator = make(**options)
    inner = allocator.allocate
    times: list[float] = []
    active: list[int] = []
    shares_seen: list[np.ndarray] = []

    def allocate(view):
        if limit is not None and len(times) >= limit:
            raise Enough
        start = time.perf_counter()
        shares = inner(view)
        elapsed = time.perf_counter() - start
        if allocator.exploration_end is not None:
            times.append(elapsed)
            active.append(int(view.active.sum()))
            if limit is not None:
                shares_seen.append(np.array(shares, dtype=float))
        return shares

    allocator.allocate = allocate
    try:
        outcome = simulate(bundle, allocator, record_eta=True)
    except Enough:
        outcome = None
    return times, active, shares_seen, outcome, allocator


def same_outcome(a, b) -> bool:
    return bool(
        np.array_equal(a.completed, b.completed)
        and np.array_equal(a.completion_time, b.completion_time)
        and np.array_equal(a.data, b.data)
        and np.array_equal(a.eta, b.eta)
    )


def ms(seconds: list[float], q: float) -> float:
    return float(np.percentile(seconds, q)) * 1e3


def side_by_side(bundle, k: int, repeats: int, options: dict, limit: int | None) -> dict:
    """Both allocators on `bundle`, `repeats` times each, alternating which goes first."""
    load_before = os.getloadavg()
    names = list(ALLOCATORS)
    times: dict[str, list[float]] = {name: [] for name in names}
    per_repeat: dict[str, list[float]] = {name: [] for name in names}
    results: dict[str, list] = {name: [] for name in names}
    ends: dict[str, set] = {name: set() for name in names}
    active: list[int] = []
    start = time.perf_counter()
    for repeat in range(repeats):
        for name in names if repeat % 2 == 0 else names[::-1]:
            got, seen, shares, outcome, allocator = timed_run(bundle, ALLOCATORS[name], options, limit)
            times[name] += got
            per_repeat[name].append(statistics.median(got))
            results[name].append(outcome if limit is None else shares)
            ends[name].add(allocator.exploration_end)
            active = seen
    row = {
        "exploration_end": sorted(ends["numpy"]),
        "timed_calls_per_run": len(times["numpy"]) // repeats,
        "active_threads_at_timed_calls": {
            "median": float(np.median(active)),
            "min": int(np.min(active)),
            "max": int(np.max(active)),
        },
    }
    for name in names:
        row[name] = {
            "median_ms": ms(times[name], 50),
            "p90_ms": ms(times[name], 90),
            "per_thread_us": ms(times[name], 50) / k * 1e3,
            "per_repeat_median_ms": [x * 1e3 for x in per_repeat[name]],
            "timed_calls": len(times[name]),
        }
    row["ratio_numpy_over_compiled"] = row["numpy"]["median_ms"] / row["compiled"]["median_ms"]
    row["median_of_per_repeat_ratios"] = statistics.median(
        a / b for a, b in zip(per_repeat["numpy"], per_repeat["compiled"])
    )
    if limit is None:
        row["same_outcome"] = all(same_outcome(a, b) for a, b in zip(results["numpy"], results["compiled"]))
        row["successes"] = results["numpy"][0].successes
    else:
        row["same_shares"] = all(
            len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
            for a, b in zip(results["numpy"], results["compiled"])
        )
    row["wall_seconds"] = time.perf_counter() - start
    row["load_average_before"] = load_before
    row["load_average_after"] = os.getloadavg()
    return row


def measure(k: int, seed: int, repeats: int, all_active_calls: int) -> dict:
    bundle = draw_bundle(
        BundleParams.from_config({"kind": "scalability", "threads": k}), np.random.default_rng(seed + k)
    )
    row = {
        "threads": k,
        "horizon": bundle.horizon,
        "seed": seed + k,
        "whole_run": side_by_side(bundle, k, repeats, {}, None),
    }
    if all_active_calls:
        row["all_active"] = side_by_side(bundle, k, repeats, {"explore": False}, all_active_calls)
    return row


def warm_up() -> None:
    bundle = draw_bundle(BundleParams.from_config({"kind": "table1"}), np.random.default_rng(0))
    for make in ALLOCATORS.values():
        simulate(bundle, make())


def print_row(k: int, horizon: int, label: str, part: dict) -> None:
    npy, comp = part["numpy"], part["compiled"]
    same = part.get("same_outcome", part.get("same_shares"))
    print(
        f"{k:>5} {horizon:>7} {label:<10} {part['timed_calls_per_run']:>6} "
        f"{part['active_threads_at_timed_calls']['median']:>5.0f} | {npy['median_ms']:>8.4f} {npy['p90_ms']:>7.4f} | "
        f"{comp['median_ms']:>8.4f} {comp['p90_ms']:>7.4f} | {part['ratio_numpy_over_compiled']:>5.1f} | "
        f"{npy['per_thread_us']:>7.3f} {comp['per_thread_us']:>7.3f} | {'yes' if same else 'NO':>4} | "
        f"{part['load_average_before'][0]:.2f}->{part['load_average_after'][0]:.2f}",
        flush=True,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="10,25,50,100,250,500,1000", help="K values, comma-separated")
    parser.add_argument("--repeats", type=int, default=1, help="runs per allocator and K (order alternating)")
    parser.add_argument("--seed", type=int, default=0, help="the bundle of K threads uses seed + K")
    parser.add_argument(
        "--all-active-calls", type=int, default=200, help="calls timed in the all-active measurement (0: skip it)"
    )
    parser.add_argument("--out", default="bench/results/core_update.json", help="JSON results ('-': none)")
    args = parser.parse_args(argv)
    ks = [int(x) for x in args.threads.split(",")]

    report: dict = {
        "command": "python -m bench.core_update " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "load_average_at_start": os.getloadavg(),
        },
        "goal": f"median <= {GOAL_MS} ms at K = {GOAL_THREADS}",
        "rows": [],
    }
    start = time.perf_counter()
    warm_up()
    report["warm_up_seconds"] = time.perf_counter() - start
    print(f"{'':>24} {'':>6} {'':>5} | {'NumPy ms':^16} | {'compiled ms':^16} | {'':>5} | {'us / thread':^15} |")
    print(
        f"{'K':>5} {'horizon':>7} {'run':<10} {'calls':>6} {'|A_t|':>5} | {'median':>8} {'p90':>7} | "
        f"{'median':>8} {'p90':>7} | {'ratio':>5} | {'NumPy':>7} {'comp.':>7} | same | load",
        flush=True,
    )
    for k in ks:
        row = measure(k, args.seed, args.repeats, args.all_active_calls)
        report["rows"].append(row)
        print_row(k, row["horizon"], "whole", row["whole_run"])
        if "all_active" in row:
            print_row(k, row["horizon"], "all-active", row["all_active"])
    report["machine"]["load_average_at_end"] = os.getloadavg()
    report["total_seconds"] = time.perf_counter() - start
    goal = next((r for r in report["rows"] if r["threads"] == GOAL_THREADS), None)
    if goal is not None:
        whole = goal["whole_run"]
        report["goal_met"] = whole["compiled"]["median_ms"] <= GOAL_MS
        print(
            f"\nK = {GOAL_THREADS}: compiled median {whole['compiled']['median_ms']:.4f} ms over the whole run "
            f"(goal <= {GOAL_MS} ms: {'met' if report['goal_met'] else 'NOT met'}), NumPy "
            f"{whole['numpy']['median_ms']:.4f} ms"
            + (
                f"; all {GOAL_THREADS} active: compiled {goal['all_active']['compiled']['median_ms']:.4f} ms, "
                f"NumPy {goal['all_active']['numpy']['median_ms']:.4f} ms"
                if "all_active" in goal
                else ""
            )
        )
    print(
        f"load average at start {report['machine']['load_average_at_start']}, at end "
        f"{report['machine']['load_average_at_end']}; {report['total_seconds']:.0f} s"
    )
    if args.out != "-":
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2))
        print(f"written to {out}")


if __name__ == "__main__":
    main()
