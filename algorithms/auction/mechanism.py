"""The interface of an auction mechanism (paper 001): what the family runs once per day, and what a
user's own mechanism named by import path implements (docs/extending.md, "auction: a mechanism").

`run(instance, rng)` is given one day's world (`market.auction.lora_instance.LoraInstance`: the
cluster, the tasks in arrival order, the labor vendors' offers) and a random stream of its own (the
same for the same replicate and name), and returns an `AuctionOutcome`
(algorithms/auction/outcome.py): the tasks admitted with their schedules (`admit(schedule,
payment)` commits a schedule to the outcome's ledger), what each pays and the decision time per
task. The built-in mechanisms (pdFTSP, Titan, EFT, NTM) fit it as they are.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from algorithms.auction.outcome import AuctionOutcome
from market.auction.lora_instance import LoraInstance

__all__ = ["AuctionMechanism"]


@runtime_checkable
class AuctionMechanism(Protocol):
    """Any class with this method; the constructor takes the name's parameters."""

    def run(self, instance: LoraInstance, rng: np.random.Generator) -> AuctionOutcome:
        """One day's outcome on `instance`; `rng` is the mechanism's own stream."""
        ...
