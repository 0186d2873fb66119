"""Labor vendors that pre-process a task's dataset (paper 001,
Sec. 2.1, "Data Pre-Processing"): vendor n charges q_in and takes h_in slots for task i.

The paper gives no numbers. This project's documented model (docs/auction/model.md):
each replicate draws N vendors, vendor n with a rate (cents per ksample of the task's
dataset, U[rate]) and a base delay (slots for a 12.5-ksample dataset, an integer in
U{delay}); for task i with a dataset of D_i ksamples,
  q_in = rate_n * D_i * U[1 - jitter, 1 + jitter],
  h_in = max(1, round(delay_n * D_i / 12.5 * U[1 - jitter, 1 + jitter])).
Rates and delays are drawn independently, so more vendors mean more choice (Fig. 5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from market.common.fields import integer, interval, real
from market.common.sections import checked, key, parse

REFERENCE_DATASET = 12.5  # ksamples: the mean of U[5, 20]


@dataclass(frozen=True)
class VendorParams:
    """Config section `vendors`."""

    count: int = key(
        5, checked(integer, minimum=1, allow_float=False), "vendors a task needing pre-processing chooses from"
    )
    rate: tuple = key((1.0, 4.0), checked(interval, minimum=0.0), "cents per ksample of the dataset")
    delay: tuple = key((1, 6), checked(interval, kind=int, minimum=0), "slots for a 12.5-ksample dataset")
    jitter: float = key(
        0.2, checked(real, minimum=0, maximum=1, strict_max=True), "relative spread of a vendor's delay"
    )

    @classmethod
    def from_dict(cls, d: Mapping | None) -> VendorParams:
        return parse(cls, d, "vendors")

    def draw(self, datasets: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(q, h): I x N prices (cents) and delays (slots) for datasets of `datasets` ksamples."""
        rate = rng.uniform(*self.rate, size=self.count)
        delay = rng.integers(self.delay[0], self.delay[1] + 1, size=self.count)
        size = len(datasets)
        j = self.jitter
        q = rate[None, :] * datasets[:, None] * rng.uniform(1 - j, 1 + j, size=(size, self.count))
        h = delay[None, :] * datasets[:, None] / REFERENCE_DATASET * rng.uniform(1 - j, 1 + j, size=(size, self.count))
        return q, np.maximum(1, np.floor(h + 0.5)).astype(np.int64)
