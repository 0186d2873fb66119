"""`births.kind: daily`: an overloaded GPU cluster's day, with a daily submission cycle and job
classes (paper 004's model, Sec. 2; docs/sow/mechanisms.md, "A realistic overloaded workload").

What comes from a public trace and what is ours. The classes are sized against the job statistics
that the Helios trace (SenseTime; Q. Hu, P. Sun, S. Yan, Y. Wen, T. Zhang, "Characterization and
Prediction of Deep Learning Workloads in Large-Scale GPU Datacenters", SC '21) publishes per
cluster in its artifact, github.com/S-Lab-System-Group/HeliosArtifact, file
`analysis/1_compare with Philly trace/helios_cluster_summary.csv` (commit 6345d9ff2835). Its GPU
jobs (columns gpu_job_num, med_gpu_num, avg_gpu_num, med_run_time_gpu, avg_run_time_gpu):

    cluster  GPU jobs    median GPUs  mean GPUs  median run time  mean run time
    Venus      125,303   1            6.736      204 s            13,040.6 s (3.62 h)
    Earth      427,148   1            2.101      234 s             5,130.6 s (1.43 h)
    Saturn     698,896   1            4.010      124 s             5,252.9 s (1.46 h)
    Uranus     329,117   1            4.038      280 s             9,163.7 s (2.55 h)
    all      1,580,464   1            3.716      206 s             6,651.7 s (1.85 h)

So: more than half of the GPU jobs use one GPU and run a few minutes (debugging, interactive
tries), while the mean job holds 2-7 GPUs for 1.4-3.6 hours, i.e. a minority of long multi-GPU
jobs holds most of the GPU time. The default classes below (one round = one hour, conf/births/
daily.yaml and conf/experiment/sow/daily.yaml) keep those facts: the short one-GPU class is 60% of
the jobs and runs one round (the median job); the mixture's mean GPU count and mean duration fall
within the clusters' range (experiment: 2.15 GPUs and 2.2 rounds); the long class is 10% of the
jobs and two thirds of the node-rounds. The trace caps nothing, while here C_max and D_max bound
every job, so the tail (jobs of days, hundreds of GPUs) is cut at the bounds. **Ours, not the
trace's:** the split into exactly three classes and their shares, the daily profile's shape (a
raised cosine, peak and trough), how far ahead each class is submitted and how uncertain its
arrival and duration are, and all values (the trace has none): value per node-round and the
deadline slack of each class. Every one of them is a config key.

The generator. Rounds 0..days x day_length - 1 get births. Round t is at time of day
h = (start + t) mod day_length, and the expected nominal demand born in it (sum over its jobs of
c x E[nominal d]) is

    peak_load x nodes_hint x r(h),   r(h) = trough + (1 - trough) (1 + cos(2 pi (h - peak) / day_length)) / 2,

so the busiest round of the day offers `peak_load` times the `nodes_hint` nodes (pass
`${cluster.nodes}`) and the quietest `trough` times that. A round's job count is Poisson with
that mean over the classes' mean nominal node-rounds per job, sum_k share_k E[c_k] E[d_k] (shares
normalised). Each job's class is drawn by share; then, within its class's ranges, its concurrency
c and nominal duration d (integers, uniform) and its value density rho (uniform): its peak value
is rho x c x d, floored to 3 decimals. It is born in its round, its nominal arrival is birth +
lead, its support is arrival offsets -arrival_jitter..+arrival_jitter (clipped to >= birth) times
duration offsets -duration_jitter..+duration_jitter around d (clipped to [1, D_max]), with the
binomial weights of the recurring kind, and its value is the peak for any finish up to its last
nominal on-time finish plus the class's slack, birth + lead + arrival_jitter + d + slack, then 0
(a deadline).

Draws, from the Generator passed in, in this order: the counts (one Poisson array over the
rounds), then for the M jobs of all rounds four arrays of M uniforms: class, concurrency,
duration, density (a uniform u picks the integer lo + floor(u (hi - lo + 1)) of a range, and the
class by the cumulative shares), so the draws do not depend on the classes' ranges. Jobs are
listed by birth, then in draw order.

Pure numpy and the standard library (no Ray, MLflow, Hydra or OmegaConf).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

from market.common.fields import as_section, integer, interval, real, reject_unknown_keys
from market.sow.dense_births import jittered_support
from market.sow.statement_of_work import Bounds, StatementOfWork

__all__ = ["DEFAULT_CLASSES", "DailyParams", "JobClass", "daily_births"]

VALUE_DECIMALS = 3


@dataclass(frozen=True)
class JobClass:
    """One job class of `births.classes.<name>` (module docstring)."""

    share: float  # relative share of the jobs (normalised over the classes)
    concurrency: tuple  # [low, high] nodes, within [1, C_max]
    duration: tuple  # [low, high] nominal rounds, within [1, D_max]
    density: tuple  # [low, high] value per node-round of the nominal run
    lead: int = 0  # rounds from birth to the nominal arrival
    arrival_jitter: int = 0  # arrival offsets -J..+J
    duration_jitter: int = 0  # duration offsets -J'..+J'
    slack: int = 0  # rounds of full value after the last nominal on-time finish

    def mean_node_rounds(self) -> float:
        return (self.concurrency[0] + self.concurrency[1]) / 2 * (self.duration[0] + self.duration[1]) / 2

    def last_finish(self, d: int) -> int:
        """k = f - birth of the last finish with the peak value for nominal duration d."""
        return self.lead + self.arrival_jitter + d + self.slack


# Defaults that fit the family's default bounds (C_max = 4, D_max = 4, S_max = 16, V_bar = 16);
# conf/experiment/sow/daily.yaml widens bounds and classes (module docstring).
DEFAULT_CLASSES = (
    ("interactive", JobClass(share=0.6, concurrency=(1, 1), duration=(1, 1), density=(4.0, 16.0), slack=1)),
    (
        "finetune",
        JobClass(
            share=0.3,
            concurrency=(1, 2),
            duration=(2, 3),
            density=(1.0, 2.5),
            lead=1,
            arrival_jitter=1,
            duration_jitter=1,
            slack=3,
        ),
    ),
    (
        "training",
        JobClass(
            share=0.1, concurrency=(4, 4), duration=(4, 4), density=(0.25, 1.0), lead=2, arrival_jitter=1, slack=8
        ),
    ),
)


def _job_class(name: str, raw, bounds: Bounds) -> JobClass:
    where = f"births.classes.{name}"
    d = as_section(raw, where)
    reject_unknown_keys(JobClass, d, where)
    missing = [key for key in ("share", "concurrency", "duration", "density") if key not in d]
    if missing:
        raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")
    concurrency = interval(d["concurrency"], f"{where}.concurrency", kind=int, minimum=1)
    if concurrency[1] > bounds.max_concurrency:
        raise ValueError(
            f"{where}.concurrency must lie within [1, {bounds.max_concurrency}] "
            f"(bounds.max_concurrency = {bounds.max_concurrency}), got {d['concurrency']!r}"
        )
    duration = interval(d["duration"], f"{where}.duration", kind=int, minimum=1)
    if duration[1] > bounds.max_duration:
        raise ValueError(
            f"{where}.duration must lie within [1, {bounds.max_duration}] "
            f"(bounds.max_duration = {bounds.max_duration}), got {d['duration']!r}"
        )
    density = interval(d["density"], f"{where}.density", minimum=0.0, strict_min=True)
    job = JobClass(
        share=real(d["share"], f"{where}.share", minimum=0.0, strict_min=True),
        concurrency=concurrency,
        duration=duration,
        density=density,
        lead=integer(d.get("lead", 0), f"{where}.lead", minimum=0),
        arrival_jitter=integer(d.get("arrival_jitter", 0), f"{where}.arrival_jitter", minimum=0),
        duration_jitter=integer(
            d.get("duration_jitter", 0), f"{where}.duration_jitter", minimum=0, maximum=bounds.max_duration - 1
        ),
        slack=integer(d.get("slack", 0), f"{where}.slack", minimum=0),
    )
    low = density[0] * concurrency[0] * duration[0]
    high = density[1] * concurrency[1] * duration[1]
    if low < 1.0 or high > bounds.max_value:
        raise ValueError(
            f"{where}: peak values density x concurrency x duration span [{low:g}, {high:g}], "
            f"outside [1, V_bar = {bounds.max_value:g}] (bounds.max_value); "
            f"change {where}.density, .concurrency or .duration"
        )
    last = job.last_finish(duration[1])
    if last >= bounds.horizon:
        raise ValueError(
            f"{where}.lead + .arrival_jitter + .duration high + .slack must be < bounds.horizon = "
            f"{bounds.horizon} (a job's value is 0 from birth + S_max on), got {job.lead} + "
            f"{job.arrival_jitter} + {duration[1]} + {job.slack} = {last}"
        )
    return job


@dataclass(frozen=True)
class DailyParams:
    """`births.kind: daily` (module docstring)."""

    days: int = 1  # days of births
    day_length: int = 24  # rounds per day (one round = one hour by default)
    start: int = 0  # time of day of round 0, in rounds
    peak: float = 14.0  # time of day of the busiest round, in rounds
    trough: float = 0.35  # the quietest round's demand over the busiest's
    nodes_hint: int = 16  # the cluster the demand is sized for: pass ${cluster.nodes}
    peak_load: float = 1.5  # the busiest round's expected nominal demand / nodes_hint
    classes: tuple = DEFAULT_CLASSES  # ((name, JobClass), ...) in config order

    @classmethod
    def from_config(cls, d: Mapping, bounds: Bounds) -> DailyParams:
        def get(key):  # a value the config leaves out is the class default
            return d[key] if key in d else getattr(cls, key, None)

        day_length = integer(get("day_length"), "births.day_length", minimum=1)
        raw = d.get("classes")
        if raw is None:
            classes = DEFAULT_CLASSES
            for name, job in classes:  # the defaults must fit these bounds too
                _job_class(name, _as_dict(job), bounds)
        else:
            section = as_section(raw, "births.classes")
            if not section:
                raise ValueError("births.classes must name at least one job class, got an empty mapping")
            classes = tuple((str(name), _job_class(str(name), value, bounds)) for name, value in section.items())
        nodes = integer(get("nodes_hint"), "births.nodes_hint", minimum=1)
        widest = max(job.concurrency[1] for _, job in classes)
        if widest > nodes:
            raise ValueError(f"births.nodes_hint must be >= the highest class concurrency {widest}, got {nodes}")
        return cls(
            days=integer(get("days"), "births.days", minimum=1),
            day_length=day_length,
            start=integer(get("start"), "births.start", minimum=0, maximum=day_length - 1),
            peak=real(get("peak"), "births.peak", minimum=0.0, maximum=float(day_length), strict_max=True),
            trough=real(get("trough"), "births.trough", minimum=0.0, maximum=1.0),
            nodes_hint=nodes,
            peak_load=real(get("peak_load"), "births.peak_load", minimum=0.0, strict_min=True),
            classes=classes,
        )

    def rounds(self) -> int:
        return self.days * self.day_length

    def profile(self, t) -> np.ndarray:
        """r(h) of the round(s) t: 1 at the peak, `trough` half a day away."""
        h = (self.start + np.asarray(t, dtype=float)) % self.day_length
        return self.trough + (1.0 - self.trough) * (1.0 + np.cos(2.0 * np.pi * (h - self.peak) / self.day_length)) / 2.0

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.classes)

    def jobs(self) -> tuple[JobClass, ...]:
        return tuple(job for _, job in self.classes)

    def shares(self) -> np.ndarray:
        share = np.array([job.share for job in self.jobs()])
        return share / share.sum()

    def mean_node_rounds(self) -> float:
        """Expected nominal node-rounds of one job over the class mixture."""
        return float(self.shares() @ np.array([job.mean_node_rounds() for job in self.jobs()]))

    def expected_demand(self, t) -> np.ndarray:
        """Expected nominal demand (node-rounds) born in round(s) t."""
        return self.peak_load * self.nodes_hint * self.profile(t)


def _as_dict(job: JobClass) -> dict:
    return {f.name: getattr(job, f.name) for f in fields(JobClass)}


def _pick(u: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The integer lo + floor(u (hi - lo + 1)) of each range (u in [0, 1))."""
    return np.minimum(low + np.floor(u * (high - low + 1)).astype(np.int64), high)


def daily_births(p: DailyParams, bounds: Bounds, rng: np.random.Generator) -> list[StatementOfWork]:
    """The jobs of `p` (module docstring for the construction and the draw order)."""
    rounds = np.arange(p.rounds())
    counts = rng.poisson(p.expected_demand(rounds) / p.mean_node_rounds())
    total = int(counts.sum())
    u_class, u_c, u_d, u_v = (rng.random(total) for _ in range(4))
    jobs_of = p.jobs()
    kind = np.minimum(np.searchsorted(np.cumsum(p.shares()), u_class, side="right"), len(jobs_of) - 1)
    low, high = (
        {
            name: np.array([getattr(job, name)[end] for job in jobs_of])
            for name in ("concurrency", "duration", "density")
        }
        for end in (0, 1)
    )
    c = _pick(u_c, low["concurrency"][kind], high["concurrency"][kind])
    d = _pick(u_d, low["duration"][kind], high["duration"][kind])
    rho = low["density"][kind] + u_v * (high["density"][kind] - low["density"][kind])
    peak = np.floor(rho * c * d * 10**VALUE_DECIMALS) / 10**VALUE_DECIMALS
    births = np.repeat(rounds, counts)
    k = np.arange(bounds.horizon + 1)
    cache: dict[tuple[int, int], tuple] = {}
    jobs = []
    for n in range(total):
        job, dn, b = jobs_of[int(kind[n])], int(d[n]), int(births[n])
        key = (int(kind[n]), dn)
        if key not in cache:  # support relative to birth 0 and the last full-value finish
            a, dd, prob = jittered_support(0, job.lead, dn, job.arrival_jitter, job.duration_jitter, bounds)
            cache[key] = (a, dd, prob, job.last_finish(dn))
        a, dd, prob, last = cache[key]
        values = np.where(k <= last, max(float(peak[n]), 1.0), 0.0)
        values[bounds.horizon] = 0.0
        jobs.append(StatementOfWork(b, int(c[n]), values, a + b, dd.copy(), prob.copy()))
    return jobs
