"""Small pieces of the engine: hashing and seeds, chunking, summaries, metric names, plugin discovery."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from sweep.cells import Cell
from sweep.engine import make_chunks
from sweep.errors import ConfigError
from sweep.schema import RunnerConfig, TrackingConfig
from sweep.seeding import replicate_rng, stable_hash
from sweep.summary import summarize
from sweep.tracking import metric_key
from tests.sweep_dirs import arrow_rows

from .conftest import run_cli

pytestmark = pytest.mark.sweeps


def test_stable_hash_ignores_key_order_and_is_fixed():
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})
    assert stable_hash({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    assert stable_hash({"a": 1}) != stable_hash({"a": 1.5})


def test_replicate_rng_depends_only_on_hash_and_replicate():
    h = stable_hash({"x": 1})
    assert replicate_rng(h, 3).random() == replicate_rng(h, 3).random()
    assert replicate_rng(h, 3).random() != replicate_rng(h, 4).random()
    assert replicate_rng(h, 3).random() != replicate_rng(stable_hash({"x": 2}), 3).random()


def _cell(index=0, replicates=10):
    world = {
        "family": {"name": "spot", "module": "algorithms.spot.family"},
        "mechanisms": ["OD-Only", "MSU", "UP"],
        "replicates": replicates,
    }
    return Cell(index=index, name=f"c{index}", params={"job.deadline": 8 + index}, subdir=str(index), world=world)


def test_chunks_cover_every_replicate_once():
    cells = [_cell(0, 10), _cell(1, 7)]
    chunks = make_chunks(cells, chunk_size=9)  # 3 mechanisms -> 3 replicates per chunk
    for cell in cells:
        covered = [r for c in chunks if c.cell == cell.index for r in range(c.rep_start, c.rep_stop)]
        assert covered == list(range(cell.replicates))
    assert all(c.simulations == 3 * (c.rep_stop - c.rep_start) for c in chunks)
    assert max(c.rep_stop - c.rep_start for c in chunks) == 3


def test_chunks_say_which_finish_their_cell_and_start_after_reused_replicates():
    cells = [_cell(0, 3), _cell(1, 4), _cell(2, 2)]
    chunks = make_chunks(cells, chunk_size=9, first={2: 1})
    assert [(c.cell, c.rep_start, c.rep_stop, c.simulations, c.whole) for c in chunks] == [
        (0, 0, 3, 9, True),
        (1, 0, 3, 9, False),
        (1, 3, 4, 3, False),
        (2, 1, 2, 3, False),
    ]


def test_a_family_may_cap_replicates_per_chunk():
    world = {
        "family": {"name": "auction", "module": "algorithms.auction.family"},
        "mechanisms": ["pdFTSP", "EFT"],
        "replicates": 5,
    }
    chunks = make_chunks([Cell(index=0, name="a", params={}, subdir="0", world=world)], chunk_size=200)
    assert [(c.rep_start, c.rep_stop, c.simulations) for c in chunks] == [(r, r + 1, 2) for r in range(5)]


def test_a_key_only_some_rows_report_is_null_elsewhere(monkeypatch):
    from sweep.worker import SimulationWorker

    world = {
        "family": {"name": "ragged", "module": "tests.engine.ragged_family"},
        "mechanisms": ["A", "B"],
        "replicates": 3,
    }
    cell = Cell(
        index=0,
        name="r",
        params={},
        subdir="0",
        world=world,
        config_hash=stable_hash(world),
        world_hash=stable_hash(world),
    )
    columns = SimulationWorker().run_chunk(cell.payload(), 0, 3)
    assert columns["extra"] == [None, 0, None, 1, None, 2]
    assert all(len(values) == 6 for values in columns.values())


def test_summary_matches_a_t_interval_computed_by_hand():
    values = np.array([1.0, 2.0, 4.0, 7.0])
    frame = pd.DataFrame(
        {"cell_index": 0, "mechanism": "UP", "utility": values, "cost": values * 2, "completion_time": [5, 6, 7, 8]}
    )
    row = summarize(frame, [_cell()]).iloc[0]
    half = stats.t.ppf(0.975, 3) * values.std(ddof=1) / 2.0
    assert row["utility_mean"] == pytest.approx(3.5)
    assert row["utility_ci95_low"] == pytest.approx(3.5 - half)
    assert row["cost_ci95_high"] == pytest.approx(7.0 + 2 * half)
    assert row["job.deadline"] == 8 and row["n"] == 4


def test_metric_names_are_ones_mlflow_accepts():
    assert metric_key("utility_mean", "AHAP(w=3,v=2,sigma=0.5)") == "utility_mean/AHAP_w3_v2_sigma0.5"
    assert metric_key("utility_mean", "OD-Only") == "utility_mean/OD-Only"


@pytest.mark.parametrize(
    "bad, key",
    [
        (RunnerConfig(num_workers=0), "runner.num_workers"),
        (RunnerConfig(kind="moon"), "runner.kind"),
        (RunnerConfig(kind="cluster", address=None), "runner.address"),
        (RunnerConfig(chunk_size=0), "runner.chunk_size"),
        (TrackingConfig(kind="sqlite", uri="mlflow.db"), "tracking.uri"),
        (TrackingConfig(kind="paper"), "tracking.kind"),
    ],
)
def test_engine_schema_names_the_bad_key(bad, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        bad.check()


def test_hydra_finds_the_launcher():
    proc = run_cli("--info", "plugins", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "RayQueueLauncher" in proc.stdout


def test_config_files_carry_the_model_defaults():
    """conf/ and the model dataclasses state the paper's defaults once each; they must agree."""
    from dataclasses import asdict

    from hydra import compose, initialize_config_dir

    from market.spot.finetune_job import FineTuneJob
    from market.spot.spot_market import SyntheticMarketParams
    from sweep.api import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config")
    assert dict(cfg.job) == asdict(FineTuneJob())
    market = dict(cfg.market)
    assert market.pop("kind") == "synthetic"
    defaults = asdict(SyntheticMarketParams())
    # the outage keys are listed at null (the code's default; algorithms/common/optional_keys.py)
    assert {key: market.pop(key) for key in ("outage_fraction", "outage_slots")} == {
        "outage_fraction": None,
        "outage_slots": None,
    }
    assert market == {key: value for key, value in defaults.items() if not key.startswith("outage_")}
    assert defaults["outage_fraction"] == 0.0
    from omegaconf import OmegaConf

    from algorithms.common.optional_keys import without_null_keys
    from algorithms.spot.config import ForecastConfig, JobSampling, NoiseConfig, PoolConfig
    from algorithms.spot.family import OPTIONAL_KEYS

    plain = without_null_keys(OmegaConf.to_container(cfg), OPTIONAL_KEYS)  # as the engine hands it on
    assert ForecastConfig.from_dict(plain["forecast"]) == ForecastConfig()
    assert NoiseConfig.from_dict(plain["noise"]) == NoiseConfig()
    assert JobSampling.from_dict(plain["job_sampling"]) == JobSampling()
    assert PoolConfig.from_dict(plain["pool"]) == PoolConfig()


@pytest.mark.parametrize("per_second, shown", [(12345.6, "12,346"), (10.0, "10"), (2.345, "2.3"), (0.0389, "0.039")])
def test_the_closing_message_shows_slow_rates_too(per_second, shown):
    from sweep.engine import _rate

    assert _rate(per_second) == shown


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([6, 7, 8], [6, 8]),
        ([0.5, 1.0, 2.5], [0.5, 1.0, 2.5]),
        ([40, 60.5, 70], [40.0, 60.5, 70.0]),
        (["a", "b", "a"], ["a", "b", "a"]),
        ([True, False, True], [True, False, True]),
        ([None, 1, 2], [np.nan, 1.0, 2.0]),
        (["x", 1, None], ["x", "1", None]),  # mixed kinds: each value as text
    ],
)
def test_results_get_a_param_column_per_override_typed_as_pandas_types_it(tmp_path, values, expected):
    from sweep.cell_store import CellStore, CompleteCell
    from sweep.cells import Cell
    from sweep.results import write_sweep

    cells, complete = [], []
    for index, value in enumerate(values):
        world = _cell().world
        cell = Cell(index, f"k={value}", {"k": value, "fixed": 3}, str(index), world, config_hash=str(index))
        cells.append(cell)
        rows = 0 if value == 7 else 4  # a cell without rows, once
        frame = pd.DataFrame(
            {
                "cell": pd.Series([f"k={value}"] * rows, dtype=object),
                "cell_index": pd.Series([index] * rows, dtype=np.int64),
                "replicate": pd.Series(range(rows), dtype=np.int64),
                "mechanism": pd.Series(["A"] * rows, dtype=object),
                "utility": pd.Series([float(r) for r in range(rows)], dtype=float),
            }
        )
        complete.append(CompleteCell(cell, arrow_rows(frame)))
    store = CellStore(tmp_path)
    store.open_for_writing()
    summary = summarize(pd.concat([c.rows.to_pandas() for c in complete]), cells)
    store.commit(complete, summary.drop(columns=["k", "fixed"]))
    write_sweep(tmp_path, cells, CellStore(tmp_path))
    results = pd.read_parquet(tmp_path / "results.parquet")
    assert list(results.columns[:4]) == ["cell", "cell_index", "k", "fixed"]
    assert results["fixed"].tolist() == [3] * len(results) and results["fixed"].dtype == np.int64
    got = results.drop_duplicates("cell_index")["k"].tolist()
    assert [None if pd.isna(v) else v for v in got] == [None if pd.isna(v) else v for v in expected]
    assert {type(v) for v in got if not pd.isna(v)} == {type(v) for v in expected if not pd.isna(v)}
    summary = pd.read_csv(tmp_path / "summary.csv", keep_default_na=False)
    assert list(summary.columns[:5]) == ["cell", "cell_index", "k", "fixed", "mechanism"]


def test_a_whole_cells_rows_are_the_rows_its_chunks_would_give():
    """``rows_of_chunks`` on one chunk against several, in and out of order, with a value missing
    in a row (null, not NaN) and a column only one chunk has."""
    from sweep.results import rows_of_chunks

    mechanisms = ("OD-Only", "MSU", "UP")
    columns = {
        "replicate": [0, 0, 0, 1, 1, 1],
        "mechanism": list(mechanisms) * 2,
        "utility": [1.0, 2.5, -3.0, 4.0, 5.0, 6.0],
        "completion_time": [3, 4, None, 6, 7, 8],
        "met_deadline": [True, False, True, True, True, False],
        "note": ["a", None, "b", "c", "d", "e"],
    }
    halves = [{k: v[:3] for k, v in columns.items()}, {k: v[3:] for k, v in columns.items()}]
    expected = rows_of_chunks("c7", 7, mechanisms, halves)
    assert rows_of_chunks("c7", 7, mechanisms, [columns]).equals(expected)
    shuffled = {k: [v[i] for i in (4, 0, 5, 2, 1, 3)] for k, v in columns.items()}
    assert rows_of_chunks("c7", 7, mechanisms, [shuffled]).equals(expected)
    assert expected.column_names[:2] == ["cell", "cell_index"]
    assert expected["cell_index"].to_pylist() == [7] * 6
    assert expected["completion_time"].to_pylist() == [3, 4, None, 6, 7, 8]
    assert str(expected.schema.field("completion_time").type) == "int64"
    halves[1]["extra"] = [1.5, 2.5, 3.5]
    assert rows_of_chunks("c7", 7, mechanisms, halves)["extra"].to_pylist() == [None] * 3 + [1.5, 2.5, 3.5]
    with pytest.raises(ValueError, match="column 'note' holds values no one column can hold"):
        rows_of_chunks("c7", 7, mechanisms, [{**columns, "note": ["a", 1, None, "c", "d", "e"]}])


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False), st.sampled_from(["a", "bc"])
)


@settings(max_examples=150, deadline=None)
@given(
    cells=st.lists(
        st.tuples(
            st.integers(1, 3),  # replicates
            st.dictionaries(
                st.sampled_from(["utility", "cost", "note", "flag"]),
                st.sampled_from(["int", "float", "str", "bool", "none", "mixed"]),
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    data=st.data(),
)
def test_rows_of_cells_is_each_cells_rows_concatenated(cells, data):
    """One Arrow table for a call's cells (``rows_of_cells``) equals each cell's own table
    (``rows_of_chunks``) concatenated as ``worker.pack`` did, or raises where that fails."""
    import pyarrow as pa

    from sweep.results import rows_of_cells, rows_of_chunks

    draw = {
        "int": st.integers(-(2**40), 2**40),
        "float": st.floats(allow_nan=False),
        "str": st.sampled_from(["a", "bc"]),
        "bool": st.booleans(),
        "none": st.none(),
        "mixed": _VALUES,
    }
    mechanisms = ("A", "B")
    given_cells = []
    for index, (replicates, kinds) in enumerate(cells):
        rows = replicates * len(mechanisms)
        columns = {
            "replicate": [r for r in range(replicates) for _ in mechanisms],
            "mechanism": list(mechanisms) * replicates,
        }
        for key, kind in kinds.items():
            columns[key] = data.draw(st.lists(st.one_of(st.none(), draw[kind]), min_size=rows, max_size=rows))
        given_cells.append((f"c{index}", index * 7, mechanisms, columns))
    try:
        alone = [rows_of_chunks(name, index, mechs, [columns]) for name, index, mechs, columns in given_cells]
        expected = pa.concat_tables(alone, promote_options="permissive").combine_chunks()
    except (ValueError, pa.ArrowInvalid, pa.ArrowTypeError):
        expected = None
    try:
        got = rows_of_cells(given_cells)
    except ValueError:
        got = None
    if expected is None:
        return  # the worker then builds each cell alone (sweep/worker.py, run_cells), as before
    assert got is not None and got.equals(expected, check_metadata=True)


def test_whole_small_cells_share_calls_up_to_the_size_and_others_go_alone():
    from sweep.task_queue import Chunk, bundle

    whole = [Chunk(i, 0, 2, 60, True) for i in range(5)]
    part = [Chunk(9, 0, 50, 150), Chunk(9, 50, 100, 150)]
    calls = bundle(whole[:3] + part + whole[3:], 130)
    assert [[c.cell for c in call] for call in calls] == [[0, 1], [2], [9], [9], [3, 4]]
    assert [c for call in calls for c in call] == whole[:3] + part + whole[3:]  # every chunk once, in order
    assert bundle([Chunk(0, 0, 9, 300, True)], 100) == [(Chunk(0, 0, 9, 300, True),)]  # a big cell still runs
    assert bundle([], 100) == []


def test_a_call_of_several_cells_gives_each_cell_what_its_own_call_gives():
    from sweep.worker import CELL_KEY, TABLES_KEY, SimulationWorker, unpack

    from .test_side_tables import make_cell

    cells = [
        make_cell(0, 3, replicates=3, emit="none"),
        make_cell(1, 4, replicates=2, emit="none"),
        make_cell(2, 5, replicates=3),
    ]  # the last one has side tables: columns come back, not a cell
    together = unpack(SimulationWorker().run_cells([(cell.payload(), 0, cell.replicates) for cell in cells]))
    for cell, result in zip(cells[:2], together):
        alone = SimulationWorker().run_chunk(cell.payload(), 0, cell.replicates, whole=True)
        assert result[CELL_KEY].equals(alone[CELL_KEY], check_metadata=True)
    alone = SimulationWorker().run_chunk(cells[2].payload(), 0, 3, whole=True)
    assert TABLES_KEY in together[2] and together[2]["utility"] == alone["utility"]


def test_calls_of_parts_of_cells_grow_to_the_measured_time_and_leave_work_for_every_worker():
    from sweep.task_queue import CALL_SECONDS, CALLS_PER_WORKER, MAX_CHUNKS_PER_CALL, CallSizer

    sizer = CallSizer(workers=2)
    assert sizer.chunks_per_call(230, pending=10_000) == 1  # nothing measured yet
    sizer.record(simulations=460, seconds=0.02)  # 2 chunks of 230 simulations in 20 ms
    per_chunk = 0.01
    assert sizer.chunks_per_call(230, pending=10_000) == int(CALL_SECONDS / per_chunk)
    assert sizer.chunks_per_call(230, pending=3 * 2 * CALLS_PER_WORKER) == 3  # the end of the run
    assert sizer.chunks_per_call(230, pending=0) == 1
    sizer.record(simulations=460, seconds=0.0)  # very cheap simulations: the cap
    assert sizer.chunks_per_call(1, pending=10**6) == MAX_CHUNKS_PER_CALL


class _FakeRef:
    def __init__(self, result):
        self.result = result


class _FakeMethod:
    def __init__(self, call):
        self.remote = call


class _FakeActor:
    """An actor whose calls of chunks of parts finish at once, each taking CALL_SECONDS."""

    def __init__(self, sent: list):
        from sweep.task_queue import CALL_SECONDS
        from sweep.worker import PARTS_KEY

        self.sent: list = []

        def run_parts(spans, *payloads):
            ref = _FakeRef({PARTS_KEY: [{"span": span} for span in spans], "seconds": CALL_SECONDS * len(spans)})
            sent.append(ref)
            self.sent.append(ref)
            return ref

        self.run_parts = _FakeMethod(run_parts)

    def in_flight(self) -> int:
        return sum(1 for ref in self.sent if not hasattr(ref, "taken"))


def test_before_the_driver_finishes_a_cell_each_worker_gets_work_for_that_long(monkeypatch):
    """run_chunks: when a cell's last chunk comes back (on_done then finishes the cell: its rows,
    figures and summary), every worker first gets calls for the time the last finish took
    (FINISH_SECONDS_GUESS before the first), so that none waits for the driver; near the end of
    the queue the workers share what is left."""
    from sweep import task_queue
    from sweep.task_queue import CALL_SECONDS, FINISH_SECONDS_GUESS, Chunk

    sent: list = []
    actors = [_FakeActor(sent), _FakeActor(sent)]
    monkeypatch.setattr(task_queue, "_pool", lambda size: type("Pool", (), {"actors": actors})())

    class FakeRay:
        @staticmethod
        def wait(refs, num_returns, timeout):
            return refs[:num_returns], refs[num_returns:]

        @staticmethod
        def get(ref):
            ref.taken = True
            return ref.result

    monkeypatch.setattr(task_queue, "ray", FakeRay)
    sizes = [100, 100, 7]  # chunks of each cell: the last cell is short
    chunks = [Chunk(cell, start, start + 1, 10) for cell, size in enumerate(sizes) for start in range(size)]
    in_flight_at_finish = []
    clock = [0.0]
    monkeypatch.setattr(task_queue.time, "perf_counter", lambda: clock[0])

    def on_done(chunk, columns):
        if chunk.rep_stop == sizes[chunk.cell]:  # the cell's last chunk: finishing it takes 0.25 s
            in_flight_at_finish.append([actor.in_flight() for actor in actors])
            clock[0] += 0.25

    runner = RunnerConfig()
    task_queue.run_chunks(chunks, {0: "p0", 1: "p1", 2: "p2"}, runner, 2, on_done)
    # the first cell's finish: in_flight_per_worker + the guess's calls each (without the top-up:
    # in_flight_per_worker each); the second's: the last cell's 7 calls, shared (fewer than the
    # top-up asks for); the last cell's: nothing is left to send
    first = math.ceil(FINISH_SECONDS_GUESS / CALL_SECONDS)
    assert in_flight_at_finish[0] == [runner.in_flight_per_worker + first] * 2
    assert sorted(in_flight_at_finish[1]) == [3, 4]
    assert in_flight_at_finish[2] == [0, 0]
    assert len(sent) == len(chunks)  # one chunk a call: each takes CALL_SECONDS


def test_a_call_of_several_chunks_gives_each_chunk_what_its_own_call_gives():
    from sweep.worker import PARTS_KEY, SimulationWorker

    from .test_side_tables import make_cell

    payload = make_cell(0, 4, replicates=9, emit="none").payload()
    worker = SimulationWorker()
    alone = [worker.run_chunk(payload, start, start + 3) for start in (0, 3, 6)]
    together = worker.run_parts([(0, start, start + 3) for start in (0, 3, 6)], payload)
    assert together[PARTS_KEY] == alone
    assert [part["replicate"][0] for part in together[PARTS_KEY]] == [0, 3, 6]
    assert together["seconds"] > 0


def test_the_t_quantile_is_scipy_stats_t_ppf_to_the_last_bit():
    """sweep.statistics computes the Student t quantile by scipy.special.stdtrit (a lighter
    import than scipy.stats); its doubles are scipy.stats.t.ppf's, scalar and vectorised."""
    import numpy as np

    from sweep.statistics import t_half_width, t_quantile

    for confidence in (0.9, 0.95, 0.99):
        for n in [*range(2, 400), 10**4, 10**6]:
            assert t_quantile(n, confidence) == stats.t.ppf((1 + confidence) / 2, n - 1)
    n = np.array([1, 2, 3, 30, 1000])
    std = np.array([0.0, 1.0, 2.5, 0.5, 3.0])
    want = np.where(n > 1, stats.t.ppf(0.975, np.maximum(n - 1, 1)) * std / np.sqrt(n), 0.0)
    assert np.array_equal(t_half_width(std, n), want)
