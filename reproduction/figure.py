"""One reproduced figure: its experiment (`conf/experiment/<config>.yaml`) and the swept key on the x axis."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str
    config: str
    x: str
    xlabel: str
    title: str
    facet: str | None = None  # a second swept key drawn as separate panels (spot Fig. 5)
