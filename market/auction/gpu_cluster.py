"""The GPU cluster of the `auction` family (paper 001, Sec. 2.1, 5.1).

K compute nodes, each of one type, run LoRA fine-tuning tasks that share one copy of
the base model (size r_b GB) per node. Node k has a compute capacity C_kp (samples
per slot, for all the tasks it runs together) and a memory capacity C_km (GB); a task
running on a node of type k processes s_ik samples per slot (eq. 4e-4g).

Units (docs/auction/model.md): computation in thousands of samples ("ksamples"),
memory in GB, money in US cents, one slot = 10 minutes. The paper measured its
capacities by fine-tuning GPT-2 with LoRA on an A100 (80 GB) and an A40 (48 GB) but
does not print them; the values below are this project's documented calibration:
a single LoRA task reaches a quarter of a node's sample throughput, so compute lets
four tasks share a node, and memory binds first on the A40 for large tasks.

Operating cost (eq. 2, e_ikt): node k costs `cost_per_slot` cents per slot at the
reference tariff, scaled by a daily time-of-use profile; a task pays its share
s_ik / C_kp of its node's cost in the slots it runs there.

Two calibration keys (conf/calibration/, docs/auction/model.md): `tasks_per_node` sets
C_kp = tasks_per_node x s_ik for every type (null keeps the types' own, 4: the project's first
calibration), and `cost_scale` multiplies every type's cost per slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from market.common.fields import choice, integer, real
from market.common.sections import key, parse

SLOTS_PER_DAY = 144  # 10-minute slots (Sec. 5.1)


@dataclass(frozen=True)
class NodeType:
    """One GPU type: compute capacity C_kp and per-task rate s_ik in ksamples per slot,
    memory C_km in GB, operating cost in cents per slot at the reference tariff."""

    name: str
    compute: float
    task_rate: float
    memory: float
    cost_per_slot: float


NODE_TYPES: dict[str, NodeType] = {
    # GPT-2 + LoRA, 10-minute slots: 40 samples/s per node, 10 per task alone (docs/auction/model.md).
    "A100-80GB": NodeType("A100-80GB", compute=24.0, task_rate=6.0, memory=80.0, cost_per_slot=40.0),
    "A40-48GB": NodeType("A40-48GB", compute=12.0, task_rate=3.0, memory=48.0, cost_per_slot=20.0),
}
MIXED = "mixed"  # half A100, half A40 (the first ceil(K/2) nodes are A100s)

# Time-of-use tariff by hour of day (multiplier of a node's cost): off-peak 23:00-07:00,
# peak 17:00-21:00, shoulder otherwise (docs/auction/model.md).
TARIFF_BY_HOUR = np.array([0.6] * 7 + [1.0] * 10 + [1.5] * 4 + [1.0] * 2 + [0.6], dtype=float)


def tariff(slots: int, start_hour: float = 0.0) -> np.ndarray:
    """The time-of-use multiplier of slots 0..slots-1 (slot t starts at start_hour + t/6 h)."""
    hours = (start_hour + np.arange(slots) / 6.0) % 24.0
    return TARIFF_BY_HOUR[np.floor(hours).astype(int)]


@dataclass(frozen=True)
class ClusterParams:
    """Config section `cluster` (conf/family/auction.yaml)."""

    nodes: int = key(100, None, "K (Sec. 5.1: 50-200)")
    node_type: str = key("A100-80GB", None, "A100-80GB | A40-48GB | mixed (half each)")
    base_model_gb: float = key(0.5, None, "r_b: GPT-2 in fp32")  # GPT-2 (124M parameters, fp32)
    start_hour: float = key(0.0, None, "the hour the day starts at (0: midnight; time-of-use tariff)")
    # null: the node types' own, 4
    tasks_per_node: float | None = key(None, None, "C_kp / s_ik, tasks a node serves at once")
    cost_scale: float = key(1.0, None, "operating cost times this", optional=True)

    @classmethod
    def from_dict(cls, d: Mapping | None) -> ClusterParams:
        return parse(cls, d, "cluster")

    def check(self) -> None:
        """Every key checked (validate): the section's keys keep the values given, unconverted."""
        self.validate()

    def validate(self) -> None:
        integer(self.nodes, "cluster.nodes", minimum=1, allow_float=False)
        choice(self.node_type, "cluster.node_type", [*NODE_TYPES, MIXED])
        real(
            self.base_model_gb,
            "cluster.base_model_gb",
            minimum=0,
            maximum=min(t.memory for t in NODE_TYPES.values()),
            strict_max=True,
        )
        real(self.start_hour, "cluster.start_hour", minimum=0, maximum=24, strict_max=True)
        if self.tasks_per_node is not None:
            real(self.tasks_per_node, "cluster.tasks_per_node", minimum=1)
        real(self.cost_scale, "cluster.cost_scale", minimum=0, strict_min=True)

    def node_types(self) -> dict[str, NodeType]:
        """NODE_TYPES with this section's tasks_per_node and cost_scale applied."""
        return {
            name: replace(
                t,
                compute=t.task_rate * float(self.tasks_per_node) if self.tasks_per_node else t.compute,
                cost_per_slot=t.cost_per_slot * float(self.cost_scale),
            )
            for name, t in NODE_TYPES.items()
        }

    def build(self, horizon: int) -> Cluster:
        kinds = self.node_types()
        if self.node_type == MIXED:
            half = (self.nodes + 1) // 2
            types = [kinds["A100-80GB"]] * half + [kinds["A40-48GB"]] * (self.nodes - half)
        else:
            types = [kinds[self.node_type]] * self.nodes
        return Cluster.of(types, float(self.base_model_gb), horizon, float(self.start_hour))


@dataclass(frozen=True, eq=False)
class Cluster:
    """K nodes over `horizon` slots (0-based slot indices 0..horizon-1).

    `node_type[k]` indexes `types`; `compute[k]` = C_kp, `memory[k]` = C_km,
    `task_rate[k]` = s_ik (the same for every task on a node type), `node_cost[k, t]`
    = the node's operating cost in slot t; e_ikt = task_rate[k] / compute[k] * node_cost[k, t].
    """

    types: tuple[NodeType, ...]
    node_type: np.ndarray
    compute: np.ndarray
    memory: np.ndarray
    task_rate: np.ndarray
    base_model_gb: float
    node_cost: np.ndarray

    @classmethod
    def of(cls, nodes: list[NodeType], base_model_gb: float, horizon: int, start_hour: float = 0.0) -> Cluster:
        types = tuple(dict.fromkeys(nodes))
        index = {t: i for i, t in enumerate(types)}
        node_type = np.array([index[t] for t in nodes], dtype=np.int64)
        cost = np.array([t.cost_per_slot for t in nodes], dtype=float)[:, None] * tariff(horizon, start_hour)[None, :]
        arrays = dict(
            node_type=node_type,
            compute=np.array([t.compute for t in nodes], dtype=float),
            memory=np.array([t.memory for t in nodes], dtype=float),
            task_rate=np.array([t.task_rate for t in nodes], dtype=float),
            node_cost=cost,
        )
        for a in arrays.values():
            a.setflags(write=False)
        return cls(types=types, base_model_gb=base_model_gb, **arrays)

    @property
    def nodes(self) -> int:
        return len(self.node_type)

    @property
    def horizon(self) -> int:
        return self.node_cost.shape[1]

    def task_cost(self) -> np.ndarray:
        """e_ikt for any task (it depends on the node and slot only): K x horizon cents."""
        return self.node_cost * (self.task_rate / self.compute)[:, None]
