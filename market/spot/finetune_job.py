"""The fine-tuning job of paper 000, Sec. III.

A job is the four-tuple {L, d, N_min, N_max} of Sec. III-A plus the throughput
model H(n) (eq. 1), the reconfiguration efficiency mu_t (eq. 2), the value
function V(T) (eq. 4) and the termination configuration of Sec. III-E2 that
turns V(T) into V~(Z_ddl) (eq. 9).

Defaults are the paper's evaluation settings (Sec. VI-A): L = 80, d = 10 slots,
N_min = 1, N_max = 12, mu = 0.9; "unit GPU compute power equals 1" and "L = 80 is
done by 8 GPUs in 10 slots" give alpha = 1, beta = 0. Eq. 1 writes beta != 0;
beta stays configurable. The paper gives neither v nor gamma: the defaults
v = 160 = 2 * L * p_o and gamma = 2 are this project's choice (reading notes,
`spot`), with which OD-Only earns a positive utility (160 - 81 = 79).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from market.common.fields import in_range, integer, is_integral, is_real, real
from market.common.sections import key, parse

_INT_FIELDS = ("deadline", "n_min", "n_max")
_FLOAT_FIELDS = ("workload", "alpha", "beta", "mu1", "mu2", "value", "gamma")


@dataclass(frozen=True)
class FineTuneJob:
    """One deadline-aware LoRA fine-tuning job (paper 000, Sec. III-A to III-E).

    Progress and work are in units of "one GPU for one slot" (Sec. VI-A); slots
    are integers 1..d, and a job finishing during slot t has completion time T = t.
    Construction validates the fields (see `check`).
    """

    workload: float = key(80.0, None, "L (Sec. VI-A)")
    deadline: int = key(10, None, "d in 30-minute slots (Sec. VI-A)")
    n_min: int = key(1, None, "N^min (Sec. VI-A)")
    n_max: int = key(12, None, "N^max (Sec. VI-A)")
    alpha: float = key(1.0, None, "H(n) = alpha*n + beta (eq. 1); unit GPU power (Sec. VI-A)")
    beta: float = key(0.0, None, "see docs/spot/model.md: the calibration L=80, d=10, 8 GPUs implies beta=0")
    mu1: float = key(0.9, None, "effective fraction when n grows (eq. 2; mu=0.9, Sec. VI-A)")
    mu2: float = key(0.9, None, "effective fraction when n shrinks (eq. 2; mu=0.9, Sec. VI-A)")
    value: float = key(160.0, None, "v of eq. 4: not given by the paper; 2 * L * on-demand price (docs/spot/model.md)")
    gamma: float = key(2.0, None, "hard deadline gamma*d of eq. 4: not given by the paper (docs/spot/model.md)")

    def __post_init__(self) -> None:
        for name in _INT_FIELDS:
            x = getattr(self, name)
            if is_integral(x):
                object.__setattr__(self, name, int(x))
        for name in _FLOAT_FIELDS:
            x = getattr(self, name)
            if is_real(x):
                object.__setattr__(self, name, float(x))
        self.check()

    @classmethod
    def from_dict(cls, d) -> FineTuneJob:
        """Build a job from the `job` section: unknown keys are an error, the values are checked by
        `check` (the section declared once, market/common/sections.py)."""
        return parse(cls, d, "job")

    def check(self) -> None:
        """Raise ValueError naming the first invalid field as `job.<field>`."""
        for name in _INT_FIELDS:
            integer(getattr(self, name), f"job.{name}", minimum=1)
        for name in _FLOAT_FIELDS:
            real(getattr(self, name), f"job.{name}")
        if self.n_min > self.n_max:
            raise ValueError(f"job.n_min ({self.n_min}) must not exceed job.n_max ({self.n_max})")
        in_range(self.workload, "job.workload", minimum=0, strict_min=True)
        for name in ("mu1", "mu2"):
            in_range(getattr(self, name), f"job.{name}", minimum=0, maximum=1, strict_min=True)
        in_range(self.value, "job.value", minimum=0, strict_min=True)
        in_range(self.gamma, "job.gamma", minimum=1, strict_min=True)
        if self.alpha < 0:
            raise ValueError(f"job.alpha must be >= 0 (throughput must not fall with more GPUs), got {self.alpha!r}")
        if self.throughput(self.n_min) <= 0:
            raise ValueError(
                f"job.beta ({self.beta!r}) with job.alpha ({self.alpha!r}) gives "
                f"H(n_min) = {self.throughput(self.n_min)!r} <= 0; H must be positive "
                f"on [n_min, n_max]"
            )

    # --- eq. 1, 2, 4 -----------------------------------------------------------

    def throughput(self, n: int) -> float:
        """H(n) = alpha * n + beta for n >= 1, H(0) = 0 (eq. 1)."""
        return self.alpha * n + self.beta if n >= 1 else 0.0

    def effective_fraction(self, n: int, n_prev: int) -> float:
        """mu_t of eq. 2: mu1 when the instance count grows, mu2 when it shrinks.

        The pseudocode's eta_t (Alg. 1 line 17, Alg. 3 line 9) is this mu_t.
        """
        if n > n_prev:
            return self.mu1
        if n < n_prev:
            return self.mu2
        return 1.0

    def slot_work(self, n: int, n_prev: int) -> float:
        """Work done in one slot with n instances after n_prev: mu_t * H(n_t) (eq. 5a)."""
        return self.effective_fraction(n, n_prev) * self.throughput(n)

    def value_at(self, completion_time: int) -> float:
        """V(T) of eq. 4 for an integer completion slot T."""
        d = self.deadline
        if completion_time <= d:
            return self.value
        if completion_time < self.gamma * d:
            return self.value * (1.0 - (completion_time - d) / ((self.gamma - 1.0) * d))
        return 0.0

    def tolerance(self) -> float:
        """Absolute slack for comparing accumulated float progress with L."""
        return 1e-9 * max(1.0, self.workload)

    def is_complete(self, progress: float) -> bool:
        return progress >= self.workload - self.tolerance()

    # --- Sec. III-E2 termination configuration, eq. 7-9 ---------------------

    def termination(self, progress: float, n_last: int, on_demand_price: float) -> tuple[int, float, int]:
        """Finish an unfinished job after the deadline on N_max on-demand instances.

        Returns (extra_slots, extra_cost, completion_time). Sec. III-E2: the job
        runs N_max on-demand instances until done; the first post-deadline slot
        pays mu of eq. 2 relative to n_last = n_d, later slots run at mu = 1.
        Every started slot is billed in full (N_max * p_o). The job keeps running
        past the hard deadline gamma * d, where V = 0, since the configuration is
        "complete the workload". A job already complete returns (0, 0.0, d).
        """
        if self.is_complete(progress):
            return 0, 0.0, self.deadline
        h = self.throughput(self.n_max)
        remaining = self.workload - progress
        first = self.slot_work(self.n_max, n_last)
        extra = 1
        if remaining > first + self.tolerance():
            extra += math.ceil((remaining - first - self.tolerance()) / h)
        cost = extra * self.n_max * on_demand_price
        return extra, cost, self.deadline + extra

    def tilde_value(self, progress_at_deadline: float, n_last: int, on_demand_price: float) -> float:
        """V~(Z_ddl) of eq. 9: V(d + extra slots) minus the termination's cost."""
        extra, cost, completion = self.termination(progress_at_deadline, n_last, on_demand_price)
        if extra == 0:
            return self.value
        return self.value_at(completion) - cost
