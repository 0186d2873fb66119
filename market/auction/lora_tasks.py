"""LoRA fine-tuning tasks of the `auction` family (paper 001,
Sec. 2.1 and 5.1): task i = {a_i, d_i, D_i, r_i, M_i, f_i, b_i}.

Generator (docs/auction/model.md; the paper's Sec. 5.1 where it says, this project's
documented choice where it does not):
- arrivals per 10-minute slot over a `slots`-slot day: Poisson with mean 30 / 50 / 80
  (light / medium / high, Sec. 5.1) or a number, or a real trace's counts scaled to that
  mean (market/auction/arrival_trace.py);
- dataset D_i ~ U[5, 20] ksamples, epochs ~ U{1..5} (Sec. 5.1); M_i = D_i * epochs;
- memory r_i ~ U{4..24} GB (adapter, optimiser state and activations of the task's batch);
- f_i ~ Bernoulli(preprocess_share);
- deadline: a task could finish in ceil(M_i / 6) slots on an A100 alone; the user allows
  slack ~ U[deadline_slack] times that, plus `preprocess_allowance` slots if f_i = 1:
  d_i = a_i + f_i * allowance + ceil(slack * M_i / 6) - 1 (the last slot it may run in);
- bid = true value b_i = M_i * U[value_per_ksample] cents (value tied to task size).
Slots are 0-based here: the day's arrivals fall in slots 0..slots-1, and a task that
arrives in slot a_i may run from slot a_i on (it arrives at the slot's start, 4c).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.auction.arrival_trace import load_arrival_trace, scaled_window
from market.auction.gpu_cluster import NODE_TYPES, SLOTS_PER_DAY
from market.common.fields import integer, interval, is_real, real
from market.common.sections import checked, key, parse

LOADS = {"light": 30.0, "medium": 50.0, "high": 80.0}
REFERENCE_RATE = NODE_TYPES["A100-80GB"].task_rate


def _load(value, where: str):
    """`tasks.load`: light, medium, high or a mean number of arrivals per slot."""
    if not (value in LOADS or (is_real(value) and math.isfinite(value) and value > 0)):
        raise ValueError(f"{where} must be light, medium, high or a mean > 0 per slot, got {value!r}")
    return value


def _arrivals(value, where: str) -> str:
    if value not in ("poisson", "trace"):
        raise ValueError(f"{where} must be 'poisson' or 'trace', got {value!r}")
    return value


def _trace_path(value, where: str):
    """A path as a string; anything else is left to TaskParams.check (it names tasks.arrivals)."""
    return os.fspath(value) if isinstance(value, (str, os.PathLike)) else value


def _positive_interval(what: str, low_or_high: int):
    """A [low, high] pair >= 0 whose low (0) or high (1) is > 0, else `{where} must {what}`."""

    def check(value, where: str) -> tuple:
        pair = interval(value, where, minimum=0.0)
        if pair[low_or_high] <= 0:
            raise ValueError(f"{where} must {what}, got {list(pair)}")
        return pair

    return check


@dataclass(frozen=True)
class TaskParams:
    """Config section `tasks`."""

    load: object = key("medium", _load, "light | medium | high (Poisson mean 30 / 50 / 80 per slot) or a mean")
    arrivals: str = key("poisson", _arrivals, "poisson | trace")
    trace_path: str | None = key(
        None, _trace_path, "arrivals CSV (slot, arrivals), e.g. data/arrivals_alibaba_lora_10min.csv"
    )
    trace_start: int | None = key(
        None,
        checked(integer, minimum=0, allow_float=False, optional=True),
        "first slot of the day in the trace; null = a random window per replicate",
    )
    slots: int = key(SLOTS_PER_DAY, checked(integer, minimum=1, allow_float=False), "10-minute slots of the day")
    samples: tuple = key(
        (5.0, 20.0), _positive_interval("be > 0", 0), "dataset size D_i ~ U[5k, 20k] samples (ksamples)"
    )
    epochs: tuple = key((1, 5), checked(interval, kind=int, minimum=1), "epochs ~ U{1..5}; M_i = D_i * epochs")
    memory_gb: tuple = key((4, 24), checked(interval, kind=int, minimum=1), "r_i ~ U{4..24} GB")
    preprocess_share: float = key(0.5, checked(real, minimum=0, maximum=1), "P(f_i = 1)")
    preprocess_allowance: int = key(
        3, checked(integer, minimum=0, allow_float=False), "deadline slots added for pre-processing"
    )
    deadline_slack: tuple = key(
        (1.5, 3.0),
        checked(interval, minimum=1.0),
        "deadline = slack x the task's run time alone on an A100",
    )
    value_per_ksample: tuple = key(
        (1.0, 6.0), _positive_interval("allow a positive value", 1), "bid b_i = M_i x U[1, 6] cents"
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> TaskParams:
        return parse(cls, d, "tasks")

    def check(self) -> None:
        """A trace of arrivals needs its file."""
        path = self.trace_path
        if self.arrivals == "trace" and not (isinstance(path, str) and path):
            raise ValueError(f"tasks.trace_path must be a file path when tasks.arrivals=trace, got {path!r}")
        if path is not None and not isinstance(path, str):
            os.fspath(path)  # TypeError, as for any non-path

    @property
    def mean_arrivals(self) -> float:
        return LOADS[self.load] if isinstance(self.load, str) else float(self.load)

    @property
    def value_density_bound(self) -> float:
        """The largest b_i / M_i the generator can draw (alpha of Lemma 2)."""
        return self.value_per_ksample[1]

    @property
    def value_per_memory_bound(self) -> float:
        """The largest b_i / r_i the generator can draw (beta of Lemma 2)."""
        return self.value_per_ksample[1] * self.samples[1] * self.epochs[1] / self.memory_gb[0]

    def value_per_memory_slot_bound(self, fastest_rate: float) -> float:
        """The largest b_i / (r_i * n_i) the generator can draw, n_i = ceil(M_i / fastest_rate)
        the fewest slots task i can run in: b_i / (r_i n_i) <= value * fastest_rate / r_min."""
        return self.value_per_ksample[1] * fastest_rate / self.memory_gb[0]

    def gross_bbar_floor(self, work_unit: float = 1.0, grid: int = 100_001) -> float:
        """The smallest bbar = b_i / (work_unit M_i + r_i n_i) the generator allows on the gross
        value b_i (before vendor and operating costs), n_i at most the task's window of slots
        (deadline - arrival + 1 <= preprocess_allowance + ceil(slack_max M_i / s_A100)):
        min over M_i in [samples low x epochs low, samples high x epochs high] (a grid of `grid`
        points) of value low x M_i / (work_unit M_i + memory high x window(M_i)). Kappa = 1 / it
        makes Lemma 2's premise bbar >= 1 hold on gross values (docs/auction/model.md)."""
        m = np.linspace(self.samples[0] * self.epochs[0], self.samples[1] * self.epochs[1], grid)
        window = self.preprocess_allowance + np.ceil(self.deadline_slack[1] * m / REFERENCE_RATE)
        return float(np.min(self.value_per_ksample[0] * m / (work_unit * m + self.memory_gb[1] * window)))

    def load_trace(self) -> np.ndarray | None:
        return load_arrival_trace(self.trace_path) if self.arrivals == "trace" else None


@dataclass(frozen=True, eq=False)
class LoraTasks:
    """Tasks in arrival order (the order the online mechanisms see them); 0-based slots."""

    arrival: np.ndarray  # a_i
    deadline: np.ndarray  # d_i, the last slot the task may run in
    dataset: np.ndarray  # D_i, ksamples
    work: np.ndarray  # M_i = D_i * epochs, ksamples
    memory: np.ndarray  # r_i, GB
    preprocess: np.ndarray  # f_i
    bid: np.ndarray  # b_i (= true value v_i unless a report says otherwise), cents

    def __len__(self) -> int:
        return len(self.arrival)


def arrival_counts(params: TaskParams, rng: np.random.Generator, trace: np.ndarray | None = None) -> np.ndarray:
    if params.arrivals == "trace":
        return scaled_window(trace, params.slots, params.mean_arrivals, rng, params.trace_start)
    return rng.poisson(params.mean_arrivals, size=params.slots)


def draw_tasks(params: TaskParams, rng: np.random.Generator, trace: np.ndarray | None = None) -> LoraTasks:
    counts = arrival_counts(params, rng, trace)
    arrival = np.repeat(np.arange(params.slots, dtype=np.int64), counts)
    n = len(arrival)
    dataset = rng.uniform(*params.samples, size=n)
    epochs = rng.integers(params.epochs[0], params.epochs[1] + 1, size=n)
    work = dataset * epochs
    memory = rng.integers(params.memory_gb[0], params.memory_gb[1] + 1, size=n).astype(float)
    preprocess = rng.random(n) < params.preprocess_share
    slack = rng.uniform(*params.deadline_slack, size=n)
    deadline = (
        arrival + preprocess * params.preprocess_allowance + np.ceil(slack * work / REFERENCE_RATE).astype(np.int64) - 1
    )
    bid = work * rng.uniform(*params.value_per_ksample, size=n)
    return LoraTasks(arrival, deadline.astype(np.int64), dataset, work, memory, preprocess, bid)
