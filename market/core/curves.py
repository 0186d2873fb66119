"""The loss-curve interface of the `core` family (paper 002, eq. 3.1): what a thread reports as
it learns. Every source (parametric power laws with noise, real learning curves, live
scikit-learn learners) implements `LossCurve`.

A curve is fixed for a world: `loss(s)` is the training loss the thread reports after it has
learned `s` data units in total (s > 0), the same number every time it is asked (noise, when a
source has any, is drawn when the world is built and indexed by the data, never by the call).
So the least data that reaches a threshold, `data_to_reach`, is a property of the world, which
is what the offline optimum needs (the observed loss at any s below it is above the threshold).
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable


@runtime_checkable
class LossCurve(Protocol):
    """The observed training loss of one thread against the data it has learned."""

    def loss(self, data: float) -> float:
        """The loss reported after `data` (> 0) data units in total; finite and > 0."""

    def data_to_reach(self, threshold: float, limit: float) -> float:
        """The least data s in (0, limit] with loss(s) <= threshold, or math.inf if there is none."""

    def true_loss(self, data: float) -> float:
        """The noise-free loss at `data` (the curve an ideal estimator would extrapolate);
        equal to `loss` for sources without noise."""


INFINITY = math.inf
