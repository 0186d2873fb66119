"""The columns that compare every mechanism of a world with its offline optimum (the reading notes'
"Common": an offline optimum beside every mechanism, so regret and empirical competitive ratio
are real numbers), written once for every family.
"""

from __future__ import annotations

import math


def add_optimum_columns(
    rows: list[dict],
    optimum: str = "OPT",
    *,
    regret: bool = False,
    ratio: bool = False,
    proven: bool | None = None,
    bound: float | None = None,
) -> None:
    """Add to each row of one world, if the optimum's row is among them: `regret_vs_opt`
    (OPT's utility minus the row's) and/or `opt_ratio` (OPT's utility over the row's; inf
    when the row's utility is not positive), and the solver's status: `opt_proven` (False:
    the solver stopped at its limit, so OPT is only a lower bound of the optimum and regrets
    and ratios may be too low) and `opt_bound` (the solver's bound on the optimum, where it
    gives one)."""
    best = next((row["utility"] for row in rows if row["mechanism"] == optimum), None)
    if best is None:
        return
    for row in rows:
        if regret:
            row["regret_vs_opt"] = best - row["utility"]
        if ratio:
            row["opt_ratio"] = best / row["utility"] if row["utility"] > 0 else math.inf
        if proven is not None:
            row["opt_proven"] = bool(proven)
        if bound is not None:
            row["opt_bound"] = float(bound)
