"""Small hand-made auction worlds for the tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from market.auction.gpu_cluster import NODE_TYPES, Cluster
from market.auction.lora_instance import LoraInstance
from market.auction.lora_tasks import LoraTasks

A100, A40 = NODE_TYPES["A100-80GB"], NODE_TYPES["A40-48GB"]


def make_instance(
    nodes,
    horizon,
    arrival,
    deadline,
    work,
    memory,
    preprocess,
    bid,
    vendor_price=None,
    vendor_delay=None,
    base_model_gb=0.5,
    start_hour=0.0,
) -> LoraInstance:
    n = len(arrival)
    tasks = LoraTasks(
        np.asarray(arrival, dtype=np.int64),
        np.asarray(deadline, dtype=np.int64),
        np.asarray(work, dtype=float),
        np.asarray(work, dtype=float),
        np.asarray(memory, dtype=float),
        np.asarray(preprocess, dtype=bool),
        np.asarray(bid, dtype=float),
    )
    q = np.zeros((n, 1)) if vendor_price is None else np.asarray(vendor_price, dtype=float)
    h = np.ones((n, 1), dtype=np.int64) if vendor_delay is None else np.asarray(vendor_delay, dtype=np.int64)
    return LoraInstance(Cluster.of(list(nodes), base_model_gb, horizon, start_hour), tasks, q, h)


@st.composite
def small_instances(draw, max_tasks=6, max_nodes=3, max_horizon=8, vendors=2):
    """Random small worlds: a few nodes of both types, short horizon, tasks of 1-4 slots of work."""
    nodes = draw(st.lists(st.sampled_from([A100, A40]), min_size=1, max_size=max_nodes))
    horizon = draw(st.integers(2, max_horizon))
    n = draw(st.integers(1, max_tasks))
    arrival = sorted(draw(st.lists(st.integers(0, horizon - 1), min_size=n, max_size=n)))
    deadline = [draw(st.integers(a, horizon - 1)) for a in arrival]
    work = [draw(st.sampled_from([3.0, 4.5, 6.0, 9.0, 12.0, 18.0])) for _ in range(n)]
    memory = [draw(st.integers(4, 30)) for _ in range(n)]
    preprocess = [draw(st.booleans()) for _ in range(n)]
    bid = [draw(st.floats(1.0, 200.0)) for _ in range(n)]
    q = [[draw(st.floats(0.0, 30.0)) for _ in range(vendors)] for _ in range(n)]
    h = [[draw(st.integers(1, 2)) for _ in range(vendors)] for _ in range(n)]
    return make_instance(
        nodes,
        horizon,
        arrival,
        deadline,
        work,
        memory,
        preprocess,
        bid,
        q,
        h,
        start_hour=draw(st.sampled_from([0.0, 16.0])),
    )
