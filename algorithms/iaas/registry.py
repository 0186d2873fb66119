"""The iaas family's built-in single policies, one line each (algorithms/common/registry.py): the
names a config's `mechanisms` and the arena's take, the function that makes each policy
(algorithms/iaas/policies.py) and the section of paper 003 it implements. The selectors over a
grid (`BestDynalloc`, `BestTheta`, `BestNaive`, `OptiLearning`: algorithms/iaas/config.py) are
not single policies and are not listed here.

A policy is run by the compiled job kernel (algorithms/iaas/job_execution.py), so a new
baseline is a new module whose function returns a `Policy` of a kind the kernel runs
(`dynalloc`, `theta`, `theta_once`) with parameters of its own choosing, plus one line below;
a policy the kernel cannot express needs a new kind there.
"""

from __future__ import annotations

from algorithms.common.registry import Entry, Param, Registry, real

NAIVE_WORD = "naive"  # beta0 = naive: the self-owned instances of eq. (2)


def _beta0(value):
    if value == NAIVE_WORD:
        return None
    return real("beta0", 0, 1, open_high=True)(value)


_BID = Param("b", real("b", 0, open_low=True), default=0.19, arg="bid", placeholder="P")

REGISTRY = Registry(
    "iaas",
    [
        Entry(
            "Dynalloc",
            "algorithms.iaas.policies:dynalloc",
            "Sec. IV-C, Alg. 2 (Proportion, Alg. 1; Proposition 4)",
            (
                Param("beta0", _beta0, default=None, placeholder="B0"),
                Param("beta", real("beta", 0, 1, open_high=True), default=0.0, placeholder="B"),
                _BID,
            ),
        ),
        Entry(
            "Theta",
            "algorithms.iaas.policies:theta_policy",
            "Sec. V-A (the theta policies of [6], [7])",
            (Param("theta", real("theta", 0, 1), default=0.0, placeholder="T"), _BID),
            context=("theta_reading",),
        ),
    ],
)
