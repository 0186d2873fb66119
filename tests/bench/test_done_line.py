"""The benchmarks read the engine's "Done:" line: they must parse what sweep/engine.py prints."""

import pytest

from bench import auction_scale, fig9, grid_scale
from sweep.cli import counted


@pytest.mark.parametrize("cells,sims", [(1, 403_200), (4, 460_000), (1_200, 1)])
def test_done_line_of_the_engine_parses(cells, sims):
    line = (
        f"Done: {counted(cells, 'cell')}, {counted(sims, 'simulation')} in 27.9 s; simulating 21.5 s "
        f"(21,419 simulations/s on {counted(2, 'worker')}); before the first simulation 4.9 s"
    )
    for module in (auction_scale, fig9, grid_scale):
        match = module.DONE.search(line)
        assert match and int(match[1].replace(",", "")) == cells and float(match[3]) == 27.9
    assert fig9.RAY_UP.search(line)[1] == "21,419"


def test_older_trees_done_line_still_parses():
    """`bench/fig9.py --end-to-end-baseline REV` runs an older tree, which printed "cell(s)"."""
    line = "Done: 4 cell(s), 460,000 simulations in 44.0 s (12,000 simulations/s on 2 workers once Ray was up)"
    assert fig9.DONE.search(line)[2] == "460,000"
    assert fig9.RAY_UP.search(line)[1] == "12,000"
