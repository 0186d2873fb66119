"""The sow family's reduction (paper 004: Alg. 1 + Alg. 2 + Alg. 3 with the sampled failure
oracle, `run_framework`) on a birth sequence of 1,000 SoWs, and how its time grows with the
oracle's sample count R, the nodes N and the support size of each job's distribution.

    python -m bench.sow_speed [--quick] [--jobs 1000] [--nodes 100] [--pipelines-per-node 2]
                              [--repeats 5] [--sweep-repeats 3] [--seed 0]
                              [--samples-sweep 50,100,200,hoeffding,800,1600]
                              [--nodes-sweep 25,50,100,200,400]
                              [--support-sweep 0x0,1x0,1x1,2x1,2x2]
                              [--out bench/results/sow_speed.json | --out -]

Goal (issue): a birth sequence of 1,000 SoWs on N = 100 nodes with the sampled oracle at
eps = 0.1 in at most 60 s on one core; report how the time grows with R, N and the support size.

Workload: `births.kind: recurring` with the family's default bounds (C_max 4, D_max 4,
S_max 16, V_bar 16) and generator defaults (periods 8-24, lead 4, arrival jitter 2, duration
jitter 1: 5 x 3 = 15 support points before clipping), `pipelines` = pipelines-per-node x N
(200 at N = 100: an offered load near N, reported), drawn over enough rounds and cut to the
first `--jobs` SoWs in submission order (exactly 1,000 jobs at every point). The reduction runs
with the family's defaults (`SowSettings`: eps = 0.1, slack on, LIFO, prices `paper`) and the
sampled oracle with R = Lemma F.1's Hoeffding value at eps0 = delta0 = 0.1 (R = 324 with these
bounds) unless a sweep sets R.

Timing: `time.perf_counter` around `run_framework` only, in this process (one core); drawing
the world (`draw_births`, the cut, `realise`) is timed separately. Every point redraws its world
in each repeat from the same seed (the same world every time) and runs the mechanism with the
same seed, so the repeats do identical work (checked: `same_outcome_across_repeats`). A light
`on_birth` callback counts the active earlier jobs the oracle replays at each birth (the main
cost driver; about 2 us per birth, under 0.1% of a run). One untimed warm-up run first.

- headline: the goal's point, `--repeats` times; median against 60 s.
- sweeps, each varying one factor with the others at the headline values (`--sweep-repeats`
  repeats, the points' order rotated between repeats): R; N, with pipelines = 2 N so that the
  offered load per node stays comparable and the jobs fixed at 1,000 (so the birth window
  shrinks as N grows: more jobs per round, each facing about N / 100 times as many active
  earlier jobs); the support size via `arrival_jitter x duration_jitter` (J x J' gives
  (2J + 1)(2J' + 1) nominal points; clipping durations to [1, D_max] merges some, the mean
  support after clipping is reported and used for the fit).

Per point: median seconds, jobs, mean support size, ms per job, the world's draw time, the
active earlier jobs at a birth (mean, max), offered load per node (sum c_j E[d_j] over
N x birth rounds), mean and peak busy nodes over the birth window (first start to last birth,
from the outcomes), completions, evictions, cancellations, the median over repeats of the
ratio to the sweep's headline point. Per sweep: the growth exponent (slope of log median
seconds against log factor, `numpy.polyfit`) and the slopes between neighbouring points.

`--quick`: two points per sweep and one repeat (about half a minute on the 2-core VM). The
machine is shared: run it when `uptime` shows a load under 1; the default run takes about five
minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from algorithms.sow.config import SowSettings
from algorithms.sow.failure_oracle import hoeffding_samples
from algorithms.sow.scheduler_framework import run_framework
from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
from market.sow.statement_of_work import BirthSequence, realise

GOAL_SECONDS = 60.0
EPS0 = DELTA0 = 0.1
EPSILON = 0.1
MEAN_PERIOD = 16  # the generator's default periods are 8..24
DEFAULT_SAMPLES = "50,100,200,hoeffding,800,1600"
DEFAULT_NODES = "25,50,100,200,400"
DEFAULT_SUPPORT = "0x0,1x0,1x1,2x1,2x2"
QUICK_SAMPLES, QUICK_NODES, QUICK_SUPPORT = "50,hoeffding", "50,100", "1x0,2x1"


@dataclass(frozen=True)
class Point:
    """One workload: the world (jobs, pipelines, jitters) and the mechanism (N, R)."""

    label: str
    jobs: int
    nodes: int
    pipelines: int
    samples: int
    arrival_jitter: int = 2
    duration_jitter: int = 1
    seed: int = 0

    @property
    def nominal_support(self) -> int:
        return (2 * self.arrival_jitter + 1) * (2 * self.duration_jitter + 1)


def draw_world(point: Point):
    """The first `point.jobs` SoWs of a recurring sequence drawn over enough rounds, and one
    realisation: (sequence, realisation), the generator and realisation seeded by `point.seed`."""
    bounds = bounds_from_config({})
    rounds = math.ceil(1.5 * point.jobs * MEAN_PERIOD / point.pipelines) + 24
    while True:
        params = BirthParams.from_config(
            {
                "kind": "recurring",
                "pipelines": point.pipelines,
                "rounds": rounds,
                "arrival_jitter": point.arrival_jitter,
                "duration_jitter": point.duration_jitter,
            },
            bounds,
        )
        rng = np.random.default_rng(point.seed)
        full = draw_births(params, bounds, rng)
        if len(full) >= point.jobs:
            break
        rounds *= 2
    sequence = BirthSequence(full.jobs[: point.jobs], full.bounds, full.signal)
    return sequence, realise(sequence, rng)


def busy_nodes(sequence: BirthSequence, out) -> np.ndarray:
    """Nodes in use per round: completed jobs over start..finish-1, evicted ones up to their stop."""
    concurrency = np.array([sow.concurrency for sow in sequence.jobs], np.int64)
    end = np.where(out.completed, out.finish, np.where(out.evicted, out.extra["stopped"], out.start))
    busy = np.zeros(max(int(end.max()), 1) + 1)
    for j in np.flatnonzero(out.start >= 0):
        busy[out.start[j] : end[j]] += concurrency[j]
    return busy


def measure_once(point: Point) -> dict:
    """Draw the world (timed) and run the reduction on it (timed)."""
    start = time.perf_counter()
    sequence, real = draw_world(point)
    draw_seconds = time.perf_counter() - start
    bounds = sequence.bounds
    settings = SowSettings.from_config(
        {
            "cluster": {"nodes": point.nodes},
            "reduction": {"epsilon": EPSILON},
            "oracle": {"kind": "sampled", "samples": point.samples},
        }
    )
    framework = settings.framework(bounds.max_duration, bounds.horizon)
    active: list[int] = []
    rng = np.random.default_rng(point.seed + 1)
    start = time.perf_counter()
    out = run_framework(sequence, real, framework, rng, on_birth=lambda ctx: active.append(len(ctx.candidates)))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "draw_seconds": draw_seconds, "sequence": sequence, "out": out, "active": active}


def describe(point: Point, run: dict) -> dict:
    """What the world and the outcome look like (from one run; every repeat does the same)."""
    sequence, out = run["sequence"], run["out"]
    births = np.array([sow.birth for sow in sequence.jobs])
    last_birth = int(births.max())
    busy = busy_nodes(sequence, out)
    started = out.start[out.start >= 0]
    first = int(started.min()) if started.size else 0
    window = busy[first : last_birth + 1] if last_birth >= first else busy[first : first + 1]
    offered = sum(sow.concurrency * sow.expected_duration() for sow in sequence.jobs) / (point.nodes * (last_birth + 1))
    summary = out.summary()
    return {
        "jobs": len(sequence),
        "pipelines": point.pipelines,
        "nodes": point.nodes,
        "samples": point.samples,
        "arrival_jitter": point.arrival_jitter,
        "duration_jitter": point.duration_jitter,
        "nominal_support": point.nominal_support,
        "mean_support": float(np.mean([sow.arrival.size for sow in sequence.jobs])),
        "birth_rounds": last_birth + 1,
        "rounds": sequence.rounds(),
        "active_at_birth": {"mean": float(np.mean(run["active"])), "max": int(np.max(run["active"]))},
        "offered_load_per_node": float(offered),
        "busy_window": [first, last_birth],
        "mean_busy_nodes": float(window.mean()),
        "utilisation": float(window.mean()) / point.nodes,
        "peak_busy_nodes": float(busy.max()),
        "completions": summary["completions"],
        "evictions": summary["evictions"],
        "cancellations": summary["cancellations"],
        "welfare": summary["welfare"],
    }


def outcome_key(out) -> tuple:
    return (
        out.start.tobytes(),
        out.finish.tobytes(),
        out.evicted.tobytes(),
        out.cancelled.tobytes(),
        out.payment.tobytes(),
    )


def run_points(points: list[Point], repeats: int, reference: int | None = None) -> list[dict]:
    """Every point `repeats` times, the order rotated between repeats; rows in `points` order.
    `reference`: index of the point the per-repeat ratios are taken against."""
    n = len(points)
    seconds = [[0.0] * repeats for _ in range(n)]
    draws = [[0.0] * repeats for _ in range(n)]
    keys: list[set] = [set() for _ in range(n)]
    rows: list[dict | None] = [None] * n
    loads: list[list] = [[None, None] for _ in range(n)]
    for repeat in range(repeats):
        order = [(i + repeat) % n for i in range(n)]
        for i in order:
            before = os.getloadavg()
            run = measure_once(points[i])
            seconds[i][repeat], draws[i][repeat] = run["seconds"], run["draw_seconds"]
            keys[i].add(outcome_key(run["out"]))
            if rows[i] is None:
                rows[i] = {"label": points[i].label, **describe(points[i], run)}
                loads[i][0] = before
            loads[i][1] = os.getloadavg()
            print(
                f"  repeat {repeat + 1}/{repeats} {points[i].label:<26} {run['seconds']:7.2f} s "
                f"(draw {run['draw_seconds']:.2f} s)",
                flush=True,
            )
    for i, row in enumerate(rows):
        median = statistics.median(seconds[i])
        row.update(
            {
                "seconds": seconds[i],
                "median_seconds": median,
                "ms_per_job": median / row["jobs"] * 1e3,
                "draw_seconds": draws[i],
                "median_draw_seconds": statistics.median(draws[i]),
                "same_outcome_across_repeats": len(keys[i]) == 1,
                "load_average_first_repeat_before": loads[i][0],
                "load_average_last_repeat_after": loads[i][1],
            }
        )
        if reference is not None:
            row["median_ratio_to_reference"] = statistics.median(a / b for a, b in zip(seconds[i], seconds[reference]))
    return rows


def growth(factors: list[float], rows: list[dict]) -> dict:
    """Slope of log(median seconds) against log(factor) over all points, and between neighbours."""
    x = np.log(np.asarray(factors, float))
    y = np.log([row["median_seconds"] for row in rows])
    fit = float(np.polyfit(x, y, 1)[0]) if len(rows) >= 2 and np.ptp(x) > 0 else None
    local = [float((y[k + 1] - y[k]) / (x[k + 1] - x[k])) if x[k + 1] != x[k] else None for k in range(len(rows) - 1)]
    return {"exponent": fit, "local_exponents": local}


def parse_samples(text: str, hoeffding: int) -> list[int]:
    return [hoeffding if item.strip() == "hoeffding" else int(item) for item in text.split(",")]


def parse_support(text: str) -> list[tuple[int, int]]:
    pairs = []
    for item in text.split(","):
        a, d = item.strip().split("x")
        pairs.append((int(a), int(d)))
    return pairs


def benchmark(
    jobs: int = 1000,
    nodes: int = 100,
    pipelines_per_node: float = 2.0,
    repeats: int = 5,
    sweep_repeats: int = 3,
    seed: int = 0,
    samples_sweep: str = DEFAULT_SAMPLES,
    nodes_sweep: str = DEFAULT_NODES,
    support_sweep: str = DEFAULT_SUPPORT,
    samples: int | None = None,
    command: str = "python -m bench.sow_speed",
) -> dict:
    """The headline and the three sweeps; returns the report (what `main` writes as JSON).
    `samples` overrides the headline R (default: the Hoeffding value)."""
    bounds = bounds_from_config({})
    hoeffding = hoeffding_samples(EPS0, DELTA0, bounds.max_duration, bounds.horizon)
    r_head = hoeffding if samples is None else samples

    def pipes(n: int) -> int:
        return max(1, round(pipelines_per_node * n))

    head = Point("headline", jobs, nodes, pipes(nodes), r_head, seed=seed)
    report: dict = {
        "command": command,
        "goal": f"{jobs} SoWs on N = {nodes}, sampled oracle, eps = {EPSILON}: median <= {GOAL_SECONDS:g} s",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "load_average_at_start": os.getloadavg(),
        },
        "settings": {
            "jobs": jobs,
            "nodes": nodes,
            "pipelines_per_node": pipelines_per_node,
            "pipelines": head.pipelines,
            "epsilon": EPSILON,
            "eps0": EPS0,
            "delta0": DELTA0,
            "hoeffding_samples": hoeffding,
            "samples": r_head,
            "arrival_jitter": head.arrival_jitter,
            "duration_jitter": head.duration_jitter,
            "bounds": {
                "max_concurrency": bounds.max_concurrency,
                "max_duration": bounds.max_duration,
                "horizon": bounds.horizon,
                "max_value": bounds.max_value,
            },
            "seed": seed,
            "repeats": repeats,
            "sweep_repeats": sweep_repeats,
        },
    }
    start = time.perf_counter()
    measure_once(replace(head, jobs=min(jobs, 50), samples=min(r_head, 50)))  # warm-up, untimed
    report["warm_up_seconds"] = time.perf_counter() - start

    print(f"headline: {jobs} SoWs, N = {nodes}, {head.pipelines} pipelines, R = {r_head}, eps = {EPSILON}", flush=True)
    report["headline"] = run_points([head], repeats)[0]
    report["goal_met"] = report["headline"]["median_seconds"] <= GOAL_SECONDS

    sweeps = {
        "samples": ("R", [replace(head, label=f"R={r}", samples=r) for r in parse_samples(samples_sweep, hoeffding)]),
        "nodes": (
            "N",
            [
                replace(head, label=f"N={n}", nodes=n, pipelines=pipes(n))
                for n in (int(x) for x in nodes_sweep.split(","))
            ],
        ),
        "support": (
            "support",
            [
                replace(head, label=f"jitter={a}x{d}", arrival_jitter=a, duration_jitter=d)
                for a, d in parse_support(support_sweep)
            ],
        ),
    }
    report["sweeps"] = {}
    for name, (factor, points) in sweeps.items():
        print(f"sweep {name}:", flush=True)
        reference = next((i for i, p in enumerate(points) if replace(p, label="headline") == head), None)
        rows = run_points(points, sweep_repeats, reference)
        values = [
            row["mean_support"] if name == "support" else row["samples" if name == "samples" else "nodes"]
            for row in rows
        ]
        report["sweeps"][name] = {
            "factor": factor,
            "reference": None if reference is None else points[reference].label,
            "points": rows,
            **growth(values, rows),
        }
    report["machine"]["load_average_at_end"] = os.getloadavg()
    report["total_seconds"] = time.perf_counter() - start
    return report


def print_report(report: dict) -> None:
    head = report["headline"]
    print(
        f"\nheadline: median {head['median_seconds']:.2f} s over {len(head['seconds'])} repeats "
        f"({', '.join(f'{s:.2f}' for s in head['seconds'])}); goal <= {GOAL_SECONDS:g} s: "
        f"{'met' if report['goal_met'] else 'NOT met'}; draw {head['median_draw_seconds']:.2f} s; "
        f"{head['jobs']} jobs, mean support {head['mean_support']:.2f}, {head['ms_per_job']:.2f} ms per job, "
        f"active at a birth {head['active_at_birth']['mean']:.1f} (max {head['active_at_birth']['max']}), "
        f"offered load {head['offered_load_per_node']:.2f} N, mean busy {head['mean_busy_nodes']:.1f} nodes "
        f"(utilisation {head['utilisation']:.2f}, peak {head['peak_busy_nodes']:.0f}), "
        f"{head['completions']} completions, {head['evictions']} evictions, {head['cancellations']} cancellations"
    )
    for name, sweep in report["sweeps"].items():
        exponent = sweep["exponent"]
        print(
            f"\nsweep {name} (exponent {'n/a' if exponent is None else f'{exponent:.2f}'}; neighbours "
            f"{', '.join('n/a' if e is None else f'{e:.2f}' for e in sweep['local_exponents'])})"
        )
        print(
            f"{'point':<14} {'R':>5} {'N':>4} {'pipes':>5} {'jobs':>5} {'support':>7} {'median s':>9} "
            f"{'ms/job':>7} {'ratio':>6} {'active':>7} {'offered':>7} {'util':>5} {'done':>5} {'draw s':>6} same"
        )
        for row in sweep["points"]:
            ratio = row.get("median_ratio_to_reference")
            print(
                f"{row['label']:<14} {row['samples']:>5} {row['nodes']:>4} {row['pipelines']:>5} {row['jobs']:>5} "
                f"{row['mean_support']:>7.2f} {row['median_seconds']:>9.2f} {row['ms_per_job']:>7.2f} "
                f"{'n/a' if ratio is None else f'{ratio:.2f}':>6} {row['active_at_birth']['mean']:>7.1f} "
                f"{row['offered_load_per_node']:>7.2f} {row['utilisation']:>5.2f} {row['completions']:>5} "
                f"{row['median_draw_seconds']:>6.2f} {'yes' if row['same_outcome_across_repeats'] else 'NO'}"
            )
    print(
        f"\nload average at start {report['machine']['load_average_at_start']}, at end "
        f"{report['machine']['load_average_at_end']}; {report['total_seconds']:.0f} s"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sow_speed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two points per sweep, one repeat")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--pipelines-per-node", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=None, help="headline repeats (default 5, quick 1)")
    parser.add_argument("--sweep-repeats", type=int, default=None, help="repeats per sweep point (default 3, quick 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--samples-sweep", default=None, help=f"R values ('hoeffding' allowed; default {DEFAULT_SAMPLES})"
    )
    parser.add_argument("--nodes-sweep", default=None, help=f"N values (default {DEFAULT_NODES})")
    parser.add_argument("--support-sweep", default=None, help=f"arrival x duration jitters (default {DEFAULT_SUPPORT})")
    parser.add_argument("--out", default="bench/results/sow_speed.json", help="JSON results ('-': none)")
    args = parser.parse_args(argv)
    quick = args.quick
    report = benchmark(
        jobs=args.jobs,
        nodes=args.nodes,
        pipelines_per_node=args.pipelines_per_node,
        repeats=args.repeats or (1 if quick else 5),
        sweep_repeats=args.sweep_repeats or (1 if quick else 3),
        seed=args.seed,
        samples_sweep=args.samples_sweep or (QUICK_SAMPLES if quick else DEFAULT_SAMPLES),
        nodes_sweep=args.nodes_sweep or (QUICK_NODES if quick else DEFAULT_NODES),
        support_sweep=args.support_sweep or (QUICK_SUPPORT if quick else DEFAULT_SUPPORT),
        command=" ".join(["python -m bench.sow_speed", *(sys.argv[1:] if argv is None else argv)]),
    )
    report["quick"] = quick
    print_report(report)
    if args.out != "-":
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
