"""The held-out market traces (data/README.md, "Held-out market traces") load through the
spot trace loader with their documented slot counts and summary statistics.

They are for checking results on traces nothing was tuned to: nothing but this test reads them.
"""

from pathlib import Path

import numpy as np
import pytest

from market.spot.spot_trace import load_spot_trace

DATA = Path(__file__).resolve().parents[2] / "data"
SHIPPED = DATA / "market_aws_us-west-2a_v100.csv"

# slots, availability summed over the slots, share of slots with no spot instance,
# share with all 16 (data/README.md; counts from the files, shares rounded).
HELD_OUT = {
    "market_aws_us-east-2b_v100.csv": (541, 4061, 0.4418, 0.3567),
    "market_aws_us-west-2c_v100.csv": (789, 4504, 0.6324, 0.3473),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_heldout_trace_loads_with_its_documented_size(name):
    slots, avail_sum, zero_share, full_share = HELD_OUT[name]
    m = load_spot_trace(DATA / name)
    assert len(m) == slots
    assert m.capacity == 16 and m.on_demand_price == 1.0
    a = m.availability
    assert a.min() == 0 and a.max() == 16
    assert int(a.sum()) == avail_sum  # mean availability 7.51 (us-east-2b), 5.71 (us-west-2c)
    assert (a == 0).mean() == pytest.approx(zero_share, abs=5e-5)
    assert (a == 16).mean() == pytest.approx(full_share, abs=5e-5)
    # Spot price (relative to on-demand): below 1 in every slot, median 0.39.
    assert (m.price < 1).all()
    assert np.median(m.price) == pytest.approx(0.389, abs=0.001)


@pytest.mark.parametrize("name", sorted(HELD_OUT))
def test_heldout_price_side_is_the_shipped_us_east_1f_series(name):
    """Only the availability is held out: slot k's price is the shipped file's slot k's."""
    held, shipped = load_spot_trace(DATA / name), load_spot_trace(SHIPPED)
    assert np.array_equal(held.price, shipped.price[: len(held)])
    assert not np.array_equal(held.availability, shipped.availability[: len(held)])
