"""The spot family's built-in policies, one line each (algorithms/common/registry.py): the names
a config's `mechanisms` and the arena's take, the class that runs each, and the section of
paper 000 it implements. The offline optimum `OPT` and the groups `AHAP` / `AHANP`
(algorithms/spot/pool.py) are not policies and are not listed here.

Adding a baseline is one new module in algorithms/spot/ with a `SpotPolicy` subclass and one
line below; the spot family, the arena, their parsers and their error texts see it from here.
"""

from __future__ import annotations

from algorithms.common.registry import Entry, Param, Registry, one_of, positive_int, real

MSU_SWITCHES = ("safety_net", "time")  # MSU's readings of "near the deadline" (algorithms/spot/msu.py)
AHANP_STARTS = ("literal", "fresh", "cold")  # AHANP's readings of its start (algorithms/spot/ahanp.py)


def _commitment_within_window(params) -> None:
    if not params["commitment"] <= params["window"]:
        raise ValueError("the commitment v must be in 1..w (Sec. VI-A)")


_SIGMA = Param("sigma", real("sigma", 0, open_low=True), arg="threshold", placeholder="S")

REGISTRY = Registry(
    "spot",
    [
        Entry("OD-Only", "algorithms.spot.od_only:OnDemandOnly", "Sec. VI-A"),
        Entry(
            "MSU",
            "algorithms.spot.msu:MaximalSpotUtilization",
            "Sec. VI-A",
            (Param("switch", one_of("switch", MSU_SWITCHES), default="safety_net"),),
        ),
        Entry("UP", "algorithms.spot.uniform_progress:UniformProgress", "Sec. VI-A"),
        Entry("UP-track", "algorithms.spot.uniform_progress_track:UniformProgressTrack", "Sec. VI-A (ours)"),
        Entry(
            "AHAP",
            "algorithms.spot.ahap:AHAP",
            "Sec. IV-A, Alg. 1",
            (
                Param("w", positive_int("w"), arg="window", placeholder="W"),
                Param("v", positive_int("v"), arg="commitment", placeholder="V"),
                _SIGMA,
            ),
            context=("solver", "sigma_reading"),
            check=_commitment_within_window,
        ),
        Entry(
            "AHANP",
            "algorithms.spot.ahanp:AHANP",
            "Sec. IV-B, Alg. 3",
            (_SIGMA, Param("start", one_of("start", AHANP_STARTS), default="literal")),
        ),
    ],
)
