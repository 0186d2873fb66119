"""The auction world (market/): cluster, tasks, vendors, arrival traces, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from market.auction.arrival_trace import load_arrival_trace, scaled_window
from market.auction.gpu_cluster import ClusterParams, tariff
from market.auction.labor_vendors import VendorParams
from market.auction.lora_instance import draw_instance
from market.auction.lora_tasks import REFERENCE_RATE, TaskParams, draw_tasks
from market.spot.spot_trace import TraceError

ALIBABA = "data/arrivals_alibaba_lora_10min.csv"


def test_cluster_types_and_costs():
    mixed = ClusterParams(nodes=5, node_type="mixed").build(horizon=10)
    assert [mixed.types[g].name for g in mixed.node_type] == ["A100-80GB"] * 3 + ["A40-48GB"] * 2
    assert mixed.compute.tolist() == [24.0] * 3 + [12.0] * 2
    # Midnight start: 00:00-07:00 off-peak (0.6); slot 42 starts at 07:00 (1.0); 17:00 peak (1.5).
    t = tariff(144)
    assert t[0] == 0.6 and t[41] == 0.6 and t[42] == 1.0 and t[102] == 1.5 and t[126] == 1.0
    assert mixed.task_cost()[0, 0] == pytest.approx(40.0 * 0.6 * 6 / 24)
    assert mixed.task_cost()[4, 0] == pytest.approx(20.0 * 0.6 * 3 / 12)


def test_task_generator_follows_its_documented_distributions():
    params = TaskParams.from_dict({"load": "high"})
    tasks = draw_tasks(params, np.random.default_rng(3))
    n = len(tasks)
    assert abs(n / 144 - 80) < 3 * math.sqrt(80 / 144)
    assert np.all(np.diff(tasks.arrival) >= 0)
    assert tasks.dataset.min() >= 5 and tasks.dataset.max() <= 20
    epochs = tasks.work / tasks.dataset
    assert np.allclose(epochs, np.round(epochs)) and set(np.round(epochs).astype(int)) == {1, 2, 3, 4, 5}
    assert tasks.memory.min() == 4 and tasks.memory.max() == 24
    density = tasks.bid / tasks.work
    assert density.min() >= 1 and density.max() <= 6
    alone = np.ceil(tasks.work / REFERENCE_RATE)
    window = tasks.deadline - tasks.arrival + 1 - 3 * tasks.preprocess
    assert np.all(window >= np.ceil(1.5 * tasks.work / REFERENCE_RATE - 1e-9)) and np.all(window <= np.ceil(3 * alone))
    assert 0.45 < tasks.preprocess.mean() < 0.55


def test_instance_horizon_covers_every_deadline_and_vendor_offers():
    inst = draw_instance(
        ClusterParams(nodes=4), TaskParams.from_dict({"load": 5}), VendorParams(count=3), np.random.default_rng(1)
    )
    assert inst.horizon == max(144, int(inst.tasks.deadline.max()) + 1)
    assert inst.vendor_price.shape == (len(inst.tasks), 3) and inst.vendor_delay.min() >= 1
    per_ksample = inst.vendor_price / inst.tasks.dataset[:, None]
    assert per_ksample.min() >= 1.0 * 0.8 and per_ksample.max() <= 4.0 * 1.2


def test_same_seed_same_world():
    a = draw_instance(ClusterParams(nodes=4), TaskParams(), VendorParams(), np.random.default_rng(7))
    b = draw_instance(ClusterParams(nodes=4), TaskParams(), VendorParams(), np.random.default_rng(7))
    assert np.array_equal(a.tasks.bid, b.tasks.bid) and np.array_equal(a.vendor_delay, b.vendor_delay)


def test_arrival_trace_loads_and_scales():
    counts = load_arrival_trace(ALIBABA)
    assert len(counts) == 3317 and counts.min() >= 0
    rng = np.random.default_rng(0)
    means = [scaled_window(counts, 144, 50.0, rng, start=s).mean() for s in (0, 500, 1000)]
    assert all(abs(m - 50) < 1.0 for m in means)
    window = counts[500:644].astype(float)
    scaled = scaled_window(counts, 144, 50.0, np.random.default_rng(1), start=500)
    assert np.all(np.abs(scaled - window * 50 * 144 / window.sum()) < 1)


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("slot,arrivals\n0,3\n2,4\n", 3, "expected 1"),
        ("slot,arrivals\n0,3\n1,-4\n", 3, "must be an integer >= 0"),
        ("slot,arrivals\n0,3\n1,x\n", 3, "must be an integer >= 0"),
        ("slot,count\n0,3\n", 1, "missing column"),
    ],
)
def test_arrival_trace_errors_name_file_and_line(tmp_path, body, line, message):
    path = tmp_path / "arrivals.csv"
    path.write_text(body)
    with pytest.raises(TraceError, match=message) as err:
        load_arrival_trace(path)
    assert err.value.line == line and f"arrivals.csv:{line}" in str(err.value)


@pytest.mark.parametrize(
    "section, cls, value, key",
    [
        ("cluster", ClusterParams, {"nodes": 0}, "cluster.nodes"),
        ("cluster", ClusterParams, {"node_type": "H100"}, "cluster.node_type"),
        ("cluster", ClusterParams, {"gpus": 3}, "cluster: unknown key"),
        ("tasks", TaskParams, {"load": "extreme"}, "tasks.load"),
        ("tasks", TaskParams, {"samples": [20, 5]}, "tasks.samples"),
        ("tasks", TaskParams, {"epochs": [1.5, 3]}, "tasks.epochs"),
        ("tasks", TaskParams, {"deadline_slack": [0.5, 1]}, "tasks.deadline_slack"),
        ("tasks", TaskParams, {"arrivals": "trace"}, "tasks.trace_path"),
        ("tasks", TaskParams, {"preprocess_share": 2}, "tasks.preprocess_share"),
        ("vendors", VendorParams, {"count": 0}, "vendors.count"),
        ("vendors", VendorParams, {"jitter": 1.0}, "vendors.jitter"),
    ],
)
def test_config_errors_name_the_key(section, cls, value, key):
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        cls.from_dict(value)
