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
    facet: str | tuple[str, ...] | None = None  # swept keys drawn as separate panels (spot Fig. 5)

    @property
    def facets(self) -> list[str]:
        return [] if self.facet is None else [self.facet] if isinstance(self.facet, str) else list(self.facet)
