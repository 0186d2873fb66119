"""The LP relaxation of the stochastic variant (paper 004, Appendix E, first display), solved for its
primal z.

An outcome omega = (j, SoW_j, i, x_ij): job j's realised SoW is variant v of its prior D_j
(probability q_v, "q_{SoW_j}" in the copy), task tau_i of that SoW (support point i: arrival a_i,
duration d_i, weight lambda_i = P_v(a_i, d_i), Sec. 4.1's Relax(SoW)) gets the interval
allocation x_ij that starts at s >= a_i and runs d_i rounds. In the relaxed problem that task's
allocation has width lambda_i c_v in each of its rounds (Sec. 4.1: "the resources allocated each
round are scaled by lambda_i"), and its value is lambda_i V_v(s + d_i). The LP (Appendix E):

    max  sum_omega V~(omega) z_omega                      V~(omega) = lambda_i V_v(s + d_i)
    s.t. sum_omega x_t(omega) z_omega <= C'   every t     x_t(omega) = lambda_i c_v on its rounds
         sum_{omega of (j, v, i)} z_omega <= q_v           every job, variant, task
         z_omega in [0, 1].

Capacity. Appendix E, last paragraph: "we construct a fractional unit allocation I as in Theorem
E.1 under constrained supply C' = C/2. We then use this I to construct a robust menu-based pricing
method as in Lemma E.2 for total supply 2C' = C." The C there is the relaxed problem's supply, which
Alg. 2 sets to N' = N (1 - eps/10) ("ALG uses supply constraint C' = C (1 - eps/10)"): so this LP
is solved with C' = N' / 2 = N (1 - eps/10) / 2 (`capacity`), and the menu of Lemma E.2 then keeps
the relaxed usage within 2 C' = N' (algorithms/sow/stochastic_menu.py).

Candidate starts are those of `offline_optimum.candidate_starts` (a finish with positive value:
another start only takes nodes). Solved with HiGHS through `offline_optimum.packing_lp`, the same
packing LP as the ex-ante bound (the LP is that bound's with weights lambda_i q_v and capacity C').
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from market.sow.prior_births import Prior

from .offline_optimum import candidate_starts, packing_lp

__all__ = ["StochasticLP", "solve_stochastic_lp"]


@dataclass(frozen=True, eq=False)
class StochasticLP:
    """Every outcome omega of the LP (flat arrays) and the primal z. `width` = lambda_i c_v is
    w(omega) of Definition 1 and Lemma E.2, `relaxed_value` = lambda_i V_v(s + d_i) is V~(omega)."""

    capacity: float  # C' = N' / 2
    job: np.ndarray
    variant: np.ndarray
    point: np.ndarray
    start: np.ndarray
    duration: np.ndarray
    concurrency: np.ndarray
    weight: np.ndarray  # lambda_i
    prior: np.ndarray  # q_v
    value: np.ndarray  # V_v(s + d_i)
    z: np.ndarray
    objective: float  # V_LP = sum V~(omega) z_omega
    bound: float  # HiGHS's dual bound on the LP optimum (offline_optimum's docstring)

    @property
    def stop(self) -> np.ndarray:
        """One past each outcome's last round."""
        return self.start + self.duration

    @property
    def width(self) -> np.ndarray:
        return self.weight * self.concurrency

    @property
    def relaxed_value(self) -> np.ndarray:
        return self.weight * self.value

    def usage(self, z: np.ndarray | None = None, rounds: int | None = None) -> np.ndarray:
        """sum_omega x_t(omega) z_omega for t = 0..rounds-1 (default z: the LP's)."""
        z = self.z if z is None else z
        rounds = int(self.stop.max(initial=0)) if rounds is None else rounds
        out = np.zeros(rounds)
        for s, e, m in zip(self.start.tolist(), self.stop.tolist(), (self.width * z).tolist()):
            out[s:e] += m
        return out


def solve_stochastic_lp(priors: Sequence[Prior], capacity: float) -> StochasticLP:
    """Appendix E's LP over the priors D_j with supply `capacity` (C' = N'/2 in the mechanism)."""
    if not capacity > 0:
        raise ValueError(f"the LP's capacity C' must be > 0, got {capacity!r}")
    cols: dict[str, list] = {
        k: []
        for k in ("job", "variant", "point", "start", "duration", "concurrency", "weight", "prior", "value", "task")
    }
    caps = []
    for j, prior in enumerate(priors):
        for v, (sow, q) in enumerate(zip(prior.variants, prior.probability.tolist())):
            for i, (a, d, lam) in enumerate(zip(sow.arrival.tolist(), sow.duration.tolist(), sow.probability.tolist())):
                s, value = candidate_starts(sow, a, d)
                if s.size == 0:
                    continue
                n = s.size
                for key, item in (
                    ("job", j),
                    ("variant", v),
                    ("point", i),
                    ("duration", d),
                    ("concurrency", sow.concurrency),
                    ("weight", lam),
                    ("prior", q),
                    ("task", len(caps)),
                ):
                    cols[key].append(np.full(n, item))
                cols["start"].append(s)
                cols["value"].append(value)
                caps.append(q)
    if not caps:
        empty = np.zeros(0, np.int64)
        return StochasticLP(
            float(capacity),
            empty,
            empty,
            empty,
            empty,
            empty,
            empty,
            np.zeros(0),
            np.zeros(0),
            np.zeros(0),
            np.zeros(0),
            0.0,
            0.0,
        )
    flat = {k: np.concatenate(v) for k, v in cols.items()}
    ints = {
        k: flat[k].astype(np.int64) for k in ("job", "variant", "point", "start", "duration", "concurrency", "task")
    }
    weight, prior, value = flat["weight"].astype(float), flat["prior"].astype(float), flat["value"].astype(float)
    solution = packing_lp(
        weight * value,
        prior.copy(),
        ints["task"],
        np.array(caps, float),
        weight * ints["concurrency"],
        ints["start"],
        ints["duration"],
        float(capacity),
    )
    return StochasticLP(
        float(capacity),
        ints["job"],
        ints["variant"],
        ints["point"],
        ints["start"],
        ints["duration"],
        ints["concurrency"],
        weight,
        prior,
        value,
        solution.x,
        solution.objective,
        solution.bound,
    )
