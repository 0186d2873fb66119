"""The auction family at the paper's largest setting: 200 nodes, high load, one 144-slot day.

    python -m bench.auction_scale [--repeats 3] [--titan-slots 12] [--calibration paper_like]
                                  [--out bench/results/auction_scale_<calibration>.json]

The calibration is the reproduction's (conf/calibration/paper_like.yaml, docs/auction/model.md,
"Calibrations"); `--calibration project` runs the same under the code's defaults.

1. End to end (issue goal: 10 minutes or less on the 2-core machine):
   `python -m sweep family=auction cluster.nodes=200 tasks.load=high mechanisms=[pdFTSP]
   replicates=1 tracking=off hydra.run.dir=<tmp>` as a subprocess, `--repeats` times:
   wall time from outside (interpreter, Hydra, Ray, the day, Parquet) and the engine's
   own `Done:` time.
2. Per-task decision time, in this process, on one day of the same setting (seed 0):
   pdFTSP over the whole day (Lemma 2's alpha and beta and the calibration's calibrated variant), and Titan's MILP
   time per task (its slot's build + solve time shared among the slot's tasks, as Fig. 13
   averages it) over the first `--titan-slots` slots with arrivals (a whole day of Titan
   at this size takes far longer than the goal; the first slots are the cheapest for it,
   since the cluster is still empty).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from reproduction.auction import CALIBRATED as FIGURES_CALIBRATED, PROJECT_CALIBRATED

ROOT = Path(__file__).resolve().parent.parent
DONE = re.compile(
    r"Done: ([\d,]+) cells?(?:\(s\))?, ([\d,]+) simulations? in ([\d.]+) s"
)  # "1 cell", "4 cells", older trees "4 cell(s)"
SETTING = ["family=auction", "cluster.nodes=200", "tasks.load=high"]
CALIBRATED = {"paper_like": FIGURES_CALIBRATED, "project": PROJECT_CALIBRATED}


def end_to_end(setting: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="auction-scale-") as tmp:
        command = [
            sys.executable,
            "-m",
            "sweep",
            *setting,
            "mechanisms=[pdFTSP]",
            "replicates=1",
            "tracking=off",
            f"hydra.run.dir={tmp}",
        ]
        start = time.perf_counter()
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    match = DONE.search(proc.stdout)
    return {
        "wall_seconds": wall,
        "engine_seconds": float(match.group(3)) if match else None,
        "command": " ".join(command[1:-1]),
    }


def decision_times(titan_slots: int, setting: list[str], calibrated: str) -> dict:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from algorithms.auction import family
    from algorithms.auction.titan import Titan
    from market.auction.lora_instance import LoraInstance
    from market.auction.lora_tasks import LoraTasks

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[*setting, f"mechanisms=[pdFTSP,'{calibrated}',Titan]", "tracking=off"])
    prepared = family.prepare(OmegaConf.to_container(cfg, resolve=True))
    instance = family.draw_world(prepared, np.random.default_rng(0))
    out = {"tasks": len(instance.tasks)}
    for name in ("pdFTSP", calibrated):
        started = time.perf_counter()
        result = family.make_mechanism(name, prepared).run(instance)
        out[name] = {
            "seconds": time.perf_counter() - started,
            "decision_ms_per_task": 1000 * float(np.mean(result.decision_seconds)),
            "admitted": int(result.admitted.sum()),
        }
    slots = np.unique(instance.tasks.arrival)[:titan_slots]
    keep = np.isin(instance.tasks.arrival, slots)
    t = instance.tasks
    head = LoraInstance(
        instance.cluster,
        LoraTasks(
            *(getattr(t, f)[keep] for f in ("arrival", "deadline", "dataset", "work", "memory", "preprocess", "bid"))
        ),
        instance.vendor_price[keep],
        instance.vendor_delay[keep],
    )
    titan = Titan(time_limit=prepared.titan_time_limit)
    started = time.perf_counter()
    result = titan.run(head, np.random.default_rng(0))
    out["Titan"] = {
        "seconds": time.perf_counter() - started,
        "slots": int(len(slots)),
        "tasks": int(keep.sum()),
        "decision_ms_per_task": 1000 * float(np.mean(result.decision_seconds)),
        "limited_slots": titan.last_stats.limited_slots,
        "seconds_per_slot_median": statistics.median(titan.last_stats.solve_seconds),
    }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.auction_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--titan-slots", type=int, default=12)
    parser.add_argument("--calibration", default="paper_like", choices=tuple(CALIBRATED))
    parser.add_argument(
        "--out", type=Path, default=None, help="default: bench/results/auction_scale_<calibration>.json"
    )
    args = parser.parse_args(argv)
    args.out = args.out or ROOT / "bench" / "results" / f"auction_scale_{args.calibration}.json"
    setting = [*SETTING, f"calibration={args.calibration}"]
    runs = []
    for k in range(args.repeats):
        runs.append(end_to_end(setting))
        print(
            f"end to end {k + 1}/{args.repeats}: {runs[-1]['wall_seconds']:.1f} s wall, "
            f"engine {runs[-1]['engine_seconds']} s",
            flush=True,
        )
    walls = [r["wall_seconds"] for r in runs]
    times = decision_times(args.titan_slots, setting, CALIBRATED[args.calibration])
    result = {
        "machine": platform.platform(),
        "cpus": __import__("os").cpu_count(),
        "calibration": args.calibration,
        "runs": runs,
        "wall_median_seconds": statistics.median(walls),
        "goal_seconds": 600,
        "decision": times,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(
        f"wall median {result['wall_median_seconds']:.1f} s over {len(walls)} runs (goal 600 s); "
        f"{times['tasks']:,} tasks"
    )
    for name in ("pdFTSP", CALIBRATED[args.calibration]):
        print(
            f"  {name}: {times[name]['decision_ms_per_task']:.2f} ms per task, {times[name]['seconds']:.1f} s for the day, "
            f"{times[name]['admitted']:,} admitted"
        )
    ti = times["Titan"]
    print(
        f"  Titan: {ti['decision_ms_per_task']:.2f} ms per task over its first {ti['slots']} slots "
        f"({ti['tasks']} tasks, median {ti['seconds_per_slot_median']:.2f} s per slot, {ti['limited_slots']} at the limit)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
