"""The `spot` family: deadline-aware fine-tuning on spot and on-demand GPUs
(paper 000). `family` is the interface the sweep engine calls."""

from algorithms.spot.msu import MaximalSpotUtilization
from algorithms.spot.od_only import OnDemandOnly
from algorithms.spot.simulation import PolicyError, SpotOutcome, SpotPolicy, simulate
from algorithms.spot.uniform_progress import UniformProgress
from algorithms.spot.uniform_progress_track import UniformProgressTrack

__all__ = [
    "MaximalSpotUtilization",
    "OnDemandOnly",
    "PolicyError",
    "SpotOutcome",
    "SpotPolicy",
    "UniformProgress",
    "UniformProgressTrack",
    "simulate",
]
