"""The compiled reference DP's parts (tests/spot/reference_kernels.py, the DP that
window_kernels.dp_steps replaced and is tested against in test_spot_window_dp.py) against
plain definitions: the cost floor equals the NumPy formulation (np.interp) bit for bit,
and the dominance pruning drops exactly the candidates its definition says."""

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from algorithms.spot import window_problem as wp
from tests.spot import reference_kernels as rk

PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def numpy_floor(floor, work):
    """The cost floor as the NumPy code it replaced computed it."""
    work = np.maximum(work, 0.0)
    inside = np.interp(work, floor.work, floor.cost)
    beyond = floor.cost[-1] + (work - floor.work[-1]) * floor.tail_rate
    return np.where(work <= floor.work[-1], inside, beyond)


@PROPS
@given(
    st.lists(st.tuples(st.floats(0.01, 50.0), st.floats(0.001, 30.0)), min_size=0, max_size=12),
    st.floats(0.01, 5.0),
    st.lists(st.floats(-10.0, 400.0), min_size=1, max_size=30),
)
def test_cost_floor_is_numpy_interp(points, tail_rate, work):
    floor = wp._CostFloor(wp._envelope(points), tail_rate)
    # the knots themselves and points just beside them too
    x = np.array(work + floor.work.tolist() + np.nextafter(floor.work, np.inf).tolist())
    expected = numpy_floor(floor, x)
    got = [rk.cost_floor(float(v), floor.work, floor.cost, floor.work.size, floor.tail_rate) for v in x]
    assert [repr(float(v)) for v in got] == [repr(float(v)) for v in expected]


@st.composite
def groups(draw):
    m = draw(st.integers(1, 40))
    grid = draw(st.sampled_from([1.0, 1e-13, 0.5]))  # 1e-13: differences below the margins
    z = [draw(st.integers(0, 6)) * grid for _ in range(m)]
    c = [draw(st.integers(0, 6)) * grid for _ in range(m)]
    keys = draw(st.permutations(range(m)))
    valid = [draw(st.booleans()) for _ in range(m)]
    return np.array(z), np.array(c), np.array(keys, dtype=np.int64), np.array(valid)


@PROPS
@given(groups())
def test_dominance_matches_its_definition(group):
    z, c, key, valid = group
    dz, dc = 1e-12, 1e-12
    cand = np.flatnonzero(valid).astype(np.int64)
    keep = np.zeros(z.size, dtype=bool)
    if cand.size:
        rk._undominated_row(cand.copy(), z, c, key, dz, dc, keep)
    expected = np.zeros(z.size, dtype=bool)
    for i in cand:
        expected[i] = not any(
            j != i and z[j] >= z[i] and c[j] <= c[i] and (z[j] > z[i] + dz or c[j] < c[i] - dc or key[j] < key[i])
            for j in cand
        )
    assert keep.tolist() == expected.tolist()
