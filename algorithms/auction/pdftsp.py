"""pdFTSP: online primal-dual scheduling and pricing of LoRA tasks (paper
paper 001, Sec. 3.3-3.4, Alg. 1 and Alg. 2, eq. 7-11 and 14).

Tasks are handled one by one in arrival order. For task i:
- Alg. 2: for each vendor n (only "no vendor" if f_i = 0) findSchedule (the DP of eq. 13,
  algorithms/auction/schedule_dp.py) from a_i + f_i h_in to d_i; F(il_n) of eq. 10,
      F(il) = b_il - max_{(k,t) in l} lambda_kt * sum s_kt(il) - max_{(k,t) in l} phi_kt * sum r_kt(il),
      b_il = b_i - sum_n q_in z_in - sum e_ikt x_ikt;
  the vendor with the largest F wins (ties: the lowest index).
- Alg. 1: if F > 0, update the duals of every (k, t) the schedule uses (eq. 7-8),
      lambda_kt <- lambda_kt (1 + s/C_kp) + alpha * bbar * s / C_kp,
      phi_kt    <- phi_kt (1 + r/(C_km - r_b)) + beta * bbar * r / (C_km - r_b),
      bbar = b_il / (sum s_kt(il) + sum r_kt(il));
  then admit if the schedule fits the capacity left (line 8), else reject; if F <= 0 reject.
  The duals are updated before the capacity check, as the pseudocode orders it.
- The unit of bbar (docs/auction/model.md, "kappa"): the paper leaves it open ("we can scale the
  units", Lemma 2), and the increment alpha * bbar is not unit-free: bbar = b_il / (sum s +
  sum r) adds computation to GB-slots and is proportional to the money unit. Here
      bbar = kappa * b_il / (work_unit * sum s_kt(il) + sum r_kt(il)),
  with the world's computation in ksamples: `work_unit` = 1 counts it in ksamples (this
  project's first reading), 1000 in samples (the paper's, Sec. 2.1, 5.1); `kappa` scales money.
  Counting computation in samples with lambda kept per ksample changes nothing else: alpha per
  sample is alpha / 1000 and lambda per sample is lambda / 1000, so eq. 7 in ksamples reads
  lambda <- lambda (1 + s/C) + alpha * bbar_samples * s / C.
- `selector="exact"` (one node type only): Alg. 2's choice by the exact maximiser of F
  (exact_selector.py) in place of the DP's per-slot surrogate (docs/auction/model.md measures
  the difference).
- `prices=False` (an ablation, not the paper's): the duals stay at 0, so a task is admitted
  when b_il > 0 on its cheapest schedule (vendor and operating cost), as a zero-price greedy.
- alpha = max_i b_i / M_i, beta = max_i b_i / r_i (Lemma 2), from the workload's bounds
  (the generator's largest value density and value per GB), not from the tasks seen.
- Payment (Sec. 3.4): `payment="critical"` (default) charges b_i - F(il), i.e. eq. 14
  plus the schedule's operating cost: the proofs of Theorems 3-4 use "F(il) is b_i - p_i",
  and only this payment makes the bid that just wins the price paid (truthful);
  `payment="eq14"` charges eq. 14 as printed (vendor price + max lambda * sum s + max phi
  * sum r), under which a task whose value lies between eq. 14 and b_i - F gains by
  overbidding (docs/auction/model.md shows it).
- `schedule_space="paper"` lets the DP use any (k, t) (the schedule set zeta_i of eq. 5
  ignores capacity; Lemma 2's prices keep full slots out when bbar >= 1);
  `"fitting"` removes the (k, t) where the task does not fit next to the admitted ones.
"""

from __future__ import annotations

import math
import time

import numpy as np

from algorithms.auction.exact_selector import exact_select
from algorithms.auction.ledger import Schedule
from algorithms.auction.outcome import AuctionOutcome
from algorithms.auction.schedule_dp import search
from market.auction.lora_instance import LoraInstance

PAYMENTS = ("critical", "eq14")
SCHEDULE_SPACES = ("paper", "fitting")
SELECTORS = ("dp", "exact")


class PdFTSP:
    name = "pdFTSP"

    def __init__(
        self,
        alpha: float,
        beta: float,
        payment: str = "critical",
        schedule_space: str = "paper",
        kappa: float = 1.0,
        work_unit: float = 1.0,
        prices: bool = True,
        selector: str = "dp",
    ):
        if not (alpha > 0 and beta > 0 and math.isfinite(alpha) and math.isfinite(beta)):
            raise ValueError(f"pdFTSP needs finite alpha, beta > 0, got {alpha!r}, {beta!r}")
        if not (kappa > 0 and work_unit > 0 and math.isfinite(kappa) and math.isfinite(work_unit)):
            raise ValueError(f"pdFTSP needs finite kappa, work_unit > 0, got {kappa!r}, {work_unit!r}")
        if payment not in PAYMENTS:
            raise ValueError(f"pdFTSP payment must be one of {PAYMENTS}, got {payment!r}")
        if schedule_space not in SCHEDULE_SPACES:
            raise ValueError(f"pdFTSP schedule_space must be one of {SCHEDULE_SPACES}, got {schedule_space!r}")
        self.alpha, self.beta = float(alpha), float(beta)
        self.payment, self.schedule_space = payment, schedule_space
        if selector not in SELECTORS:
            raise ValueError(f"pdFTSP selector must be one of {SELECTORS}, got {selector!r}")
        self.kappa, self.work_unit, self.prices = float(kappa), float(work_unit), bool(prices)
        self.selector = selector

    def select(
        self, instance: LoraInstance, task: int, lam: np.ndarray, phi: np.ndarray, usable: np.ndarray | None = None
    ) -> tuple[float, Schedule | None, dict]:
        """Alg. 2: (F(il), schedule, terms) of the best vendor; (-inf, None, {}) if no schedule exists."""
        if self.selector == "exact":
            _, schedule = exact_select(instance, task, lam, phi, usable)
            if schedule is None:
                return -math.inf, None, {}
            f, terms = self.score(instance, schedule, lam, phi)
            return f, schedule, terms
        tasks = instance.tasks
        a = int(tasks.arrival[task])
        vendors = range(instance.vendors) if tasks.preprocess[task] else [-1]
        starts = {n: a + (int(instance.vendor_delay[task, n]) if n >= 0 else 0) for n in vendors}
        table = search(instance, task, min(starts.values()), lam, phi, usable)
        best_f, best, best_terms = -math.inf, None, {}
        for n in vendors:
            _, plan = table.best(starts[n])
            if plan is None:
                continue
            schedule = Schedule(task, n, np.array(plan[0], dtype=np.int64), np.array(plan[1], dtype=np.int64))
            f, terms = self.score(instance, schedule, lam, phi)
            if f > best_f:
                best_f, best, best_terms = f, schedule, terms
        return best_f, best, best_terms

    @staticmethod
    def score(instance: LoraInstance, schedule: Schedule, lam: np.ndarray, phi: np.ndarray) -> tuple[float, dict]:
        """F(il) of eq. 10 and its terms."""
        k, t = schedule.nodes, schedule.slots
        i = schedule.task
        work = schedule.work(instance)
        memory = instance.tasks.memory[i] * len(t)
        b_il = instance.tasks.bid[i] - schedule.vendor_cost(instance) - schedule.operating_cost(instance)
        lam_max, phi_max = float(lam[k, t].max()), float(phi[k, t].max())
        f = b_il - lam_max * work - phi_max * memory
        return f, {"b_il": b_il, "work": work, "memory": memory, "lam_max": lam_max, "phi_max": phi_max}

    def update_duals(
        self, instance: LoraInstance, schedule: Schedule, terms: dict, lam: np.ndarray, phi: np.ndarray
    ) -> None:
        """Eq. 7-8 on the (k, t) pairs of the schedule (s_kt(il) = r_kt(il) = 0 elsewhere)."""
        c = instance.cluster
        k, t = schedule.nodes, schedule.slots
        bbar = self.bbar(terms)
        s_frac = c.task_rate[k] / c.compute[k]
        r_frac = instance.tasks.memory[schedule.task] / (c.memory[k] - c.base_model_gb)
        lam[k, t] = lam[k, t] * (1 + s_frac) + self.alpha * bbar * s_frac
        phi[k, t] = phi[k, t] * (1 + r_frac) + self.beta * bbar * r_frac

    def bbar(self, terms: dict) -> float:
        """bbar of eq. 7-8 in the unit `kappa`, `work_unit` (module docstring)."""
        return self.kappa * terms["b_il"] / (self.work_unit * terms["work"] + terms["memory"])

    def price(self, instance: LoraInstance, schedule: Schedule, f: float, terms: dict) -> float:
        if self.payment == "critical":
            return float(instance.tasks.bid[schedule.task] - f)
        return schedule.vendor_cost(instance) + terms["lam_max"] * terms["work"] + terms["phi_max"] * terms["memory"]

    def run(self, instance: LoraInstance, rng: np.random.Generator | None = None) -> AuctionOutcome:
        c = instance.cluster
        lam = np.zeros((c.nodes, c.horizon))
        phi = np.zeros((c.nodes, c.horizon))
        out = AuctionOutcome.empty(instance)
        for i in range(len(instance.tasks)):
            started = time.perf_counter()
            usable = out.ledger.free_mask(i) if self.schedule_space == "fitting" else None
            f, schedule, terms = self.select(instance, i, lam, phi, usable)
            if schedule is not None and f > 0:
                if self.prices:
                    self.update_duals(instance, schedule, terms, lam, phi)
                if out.ledger.fits(schedule):
                    out.admit(schedule, self.price(instance, schedule, f, terms))
            out.decision_seconds[i] = time.perf_counter() - started
        self.final_duals = (lam, phi)
        return out
