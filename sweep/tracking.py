"""MLflow tracking from the driver only (docs/architecture.md, "Tracking").

An experiment per family, a parent run per multirun (or single run), a child run per
cell (its overrides as params, the cell's own metrics and step series, tags with the config
hash and git commit, the cell's Parquet and resolved config as artifacts) and under it a run
per mechanism (named by the mechanism, param ``mechanism``, metrics ``utility_mean``,
``cost_ci95_high``, ...), so that the UI can group and chart by mechanism. The parent run
compares the mechanisms over the whole sweep: a cell x mechanism table of mean utility with its
95% interval, a figure per grid key with intervals, and ``utility_mean/<mechanism>`` metrics
whose names map back to the mechanisms through ``mechanism_names.json`` (docs/mlflow.md). The
store is opened and every run logged on one background thread, so that tracking overlaps
simulation. If the store fails, the sweep still finishes on disk: a single warning says how to
upload the sweep dir later (``python -m sweep.upload``).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pandas as pd

from .cell_outputs import read_series
from .cells import Cell
from .cli import counted
from .comparison_tables import (
    LONG_TABLE,
    NAMES_FILE,
    WIDE_TABLE,
    best_mechanism,
    long_table,
    mechanism_keys,
    metric_key,
    renamed_metrics,
    short_keys,
    wide_table,
)
from .results import RESULTS, SUMMARY, atomic_write_text
from .schema import TrackingConfig
from .seeding import get_dotted

log = logging.getLogger(__name__)
TRACKING_STATE = "tracking.json"
STOPPING_WAIT_SECONDS = 6.0  # a stopped sweep waits this long for the logging call in progress
_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def experiment_description(spec) -> str:
    """The family experiment's description (the UI's "Description"): the paper, the question
    and what utility means, from the family module's PAPER, QUESTION and UTILITY."""
    lines = [f"**Paper {spec.paper}**" if spec.paper else f"**Family `{spec.name}`**", ""]
    if spec.question:
        lines += [f"Question: {spec.question}", ""]
    if spec.utility:
        lines += [f"Utility: {spec.utility}.", ""]
    lines.append(
        "One parent run per sweep: its `utility_by_cell.json` table and `utility_vs_<key>.png` "
        "figures compare the mechanisms cell by cell, with 95% intervals (docs/mlflow.md)."
    )
    return "\n".join(lines)


def resolve_uri(uri: str) -> str:
    """Make a relative SQLite path absolute against the current directory."""
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        return "sqlite:///" + os.path.abspath(uri[len("sqlite:///") :])
    return uri


def git_commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=_PROJECT_ROOT, capture_output=True, text=True, timeout=5
        )
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=_PROJECT_ROOT, timeout=5).returncode != 0
        return head.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def mechanism_metrics(summary: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Mechanism -> its aggregates in one cell (``utility_mean``, ``cost_ci95_high``, ...), and
    ``utility_rank``: 1 for the best mean utility of the cell (ties share a rank)."""
    stat_columns = [c for c in summary.columns if c.endswith(("_mean", "_std", "_ci95_low", "_ci95_high", "_rate"))]
    ranks = (
        summary["utility_mean"].rank(method="min", ascending=False)
        if "utility_mean" in summary
        else pd.Series(float("nan"), index=summary.index)
    )
    metrics: dict[str, dict[str, float]] = {}
    for position, row in summary.iterrows():
        values = {metric_key(column): float(row[column]) for column in stat_columns if pd.notna(row[column])}
        if pd.notna(ranks[position]):
            values["utility_rank"] = float(ranks[position])
        metrics[str(row["mechanism"])] = values
    return metrics


class NullTracker:
    """Tracking off: every call does nothing."""

    enabled = False

    def start(self, out_dir: Path, families: Sequence[str], run_name: str, params: dict[str, Any]) -> None: ...

    def set_cells(self, cells: Sequence[Cell]) -> None: ...

    def wants_cell(self) -> bool:
        """Whether the next ``log_cell`` would log a child run."""
        return False

    def log_cell(self, cell: Cell, cell_dir: Path, summary: pd.DataFrame, unless_logged: bool = False) -> None: ...

    def finish(self, out_dir: Path, status: str, metrics: dict[str, dict[str, float]] | None = None) -> None: ...

    def describe(self) -> str:
        return "tracking is off"


class MlflowTracker(NullTracker):
    """One MLflow experiment per family, and in each a parent run for this sweep: a multirun
    that mixes families (`family=spot,auction`) logs each cell under its own family."""

    enabled = True

    def __init__(self, config: TrackingConfig):
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "15")
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")  # no line per run in server mode
        self.uri = resolve_uri(config.uri)
        self.kind = config.kind
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mlflow")
        self._futures: list[Future] = []
        self._error: BaseException | None = None
        self.parents: dict[str, tuple[str, str]] = {}  # family -> (experiment id, parent run id)
        self._commit = git_commit()
        self.child_runs = config.child_runs
        self._children = 0  # child runs asked for in this sweep
        self.varying: list[str] = []  # the keys whose value differs between the sweep's cells
        self._grid: dict[str, list] = {}
        self._cells = 0
        self._family_cells: dict[str, set[int]] = {}
        self._inputs: dict[str, dict[str, str]] = {}  # family -> input file -> the key naming it
        self._specs: dict[str, Any] = {}  # family -> FamilySpec: the experiment's description
        self._logged: dict[str, int] = {}  # family -> cells with a child run under this sweep's parent
        self._out_dir: Path | None = None
        self._overrides = ""
        self._cell_runs: dict[str, dict[str, str]] = {}  # cell index -> config hash, run and parent run

    # -- failure handling: warn once, keep the sweep going on disk
    def _fail(self, err: BaseException) -> None:
        if self._error is None:
            self._error = err
            first_line = str(err).splitlines()[0] if str(err) else ""
            sys.stderr.write(
                f"Warning: MLflow tracking at {self.uri} failed ({type(err).__name__}: {first_line}); "
                "the sweep goes on and its results stay on disk. Upload them later with: "
                f"python -m sweep.upload SWEEP_DIR --tracking-uri {self.uri}\n"
            )
            sys.stderr.flush()

    @property
    def failed(self) -> bool:
        return self._error is not None

    @property
    def parent_run_id(self) -> str | None:
        """The parent run of a single-family sweep (the common case)."""
        return next(iter(self.parents.values()))[1] if len(self.parents) == 1 else None

    def _check_reachable(self) -> None:
        if self.uri.startswith(("http://", "https://")):
            import urllib.request

            with urllib.request.urlopen(self.uri.rstrip("/") + "/health", timeout=5) as response:
                if response.status != 200:
                    raise ConnectionError(f"{self.uri}/health answered {response.status}")

    def _experiment(self, family: str) -> str:
        """The family's experiment, created with its description or given the current one."""
        spec = self._specs.get(family)
        note = experiment_description(spec) if spec is not None else None
        experiment = self.client.get_experiment_by_name(family)
        if experiment is not None:
            if note is not None and experiment.tags.get("mlflow.note.content") != note:
                self.client.set_experiment_tag(experiment.experiment_id, "mlflow.note.content", note)
            return experiment.experiment_id
        location = None
        if self.uri.startswith("sqlite:///"):
            location = (Path(self.uri[len("sqlite:///") :]).parent / "mlartifacts").as_uri()
        tags = {"mlflow.note.content": note} if note is not None else None
        return self.client.create_experiment(family, artifact_location=location, tags=tags)

    def start(self, out_dir: Path, families: Sequence[str], run_name: str, params: dict[str, Any]) -> None:
        """Open the store and the parent runs on the logging thread: importing MLflow and opening
        a SQLite store take seconds that simulation need not wait for."""
        self._futures.append(self._executor.submit(self._start, Path(out_dir), list(families), run_name, params))

    def _start(self, out_dir: Path, families: Sequence[str], run_name: str, params: dict[str, Any]) -> None:
        try:
            self._check_reachable()
            from mlflow.entities import Param
            from mlflow.tracking import MlflowClient

            self.client = MlflowClient(tracking_uri=self.uri)
            self._out_dir, self._overrides = Path(out_dir), str(params.get("overrides", ""))
            state_path = Path(out_dir) / TRACKING_STATE
            state = json.loads(state_path.read_text()) if state_path.exists() else {}
            earlier = state.get("parents", {}) if state.get("uri") == self.uri else {}
            self._cell_runs = dict(state.get("cells", {})) if state.get("uri") == self.uri else {}
            for family in families:
                experiment_id = self._experiment(family)
                parent = earlier.get(family)
                if parent:
                    try:
                        self.client.update_run(parent, status="RUNNING")
                    except Exception:
                        parent = None
                if not parent:
                    run = self.client.create_run(
                        experiment_id,
                        run_name=self._parent_name(run_name, family),
                        tags={
                            "git_commit": self._commit,
                            "sweep_dir": str(Path(out_dir).resolve()),
                            "family": family,
                            "mlflow.source.git.commit": self._commit.removesuffix("-dirty"),
                            "mlflow.source.name": "python -m sweep",
                            "mlflow.source.type": "LOCAL",
                            "grid": self._grid_text()[:5000],
                            "mlflow.note.content": self._description(family),
                        },
                    )
                    parent = run.info.run_id
                    self.client.log_batch(parent, params=[Param(k, str(v)[:6000]) for k, v in params.items()])
                self.parents[family] = (experiment_id, parent)
            self._write_state()
        except Exception as err:  # any failure of the store: finish on disk
            self._fail(err)

    def _write_state(self) -> None:
        """``tracking.json``: the parent runs and each logged cell's run, which a resumed sweep
        or an upload to the same URI continues."""
        state = {
            "uri": self.uri,
            "parents": {family: run for family, (_, run) in self.parents.items()},
            "cells": self._cell_runs,
        }
        atomic_write_text(self._out_dir / TRACKING_STATE, json.dumps(state))

    def set_cells(self, cells: Sequence[Cell]) -> None:
        """The sweep's cells, before ``start``: what varies names the runs and the parent's figures."""
        values: dict[str, dict[str, None]] = {}
        for cell in cells:
            for key, value in cell.params.items():
                values.setdefault(key, {})[repr(value)] = None
        self.varying = [key for key, seen in values.items() if len(seen) > 1]
        self._grid = {key: list(seen) for key, seen in values.items()}
        self._cells = len(cells)
        self._family_cells = {}
        self._inputs = {}
        for cell in cells:
            self._family_cells.setdefault(cell.family, set()).add(cell.index)
            if cell.family not in self._specs:
                self._specs[cell.family] = cell.spec
            for key in cell.spec.input_files:
                path = get_dotted(cell.world, key)
                if isinstance(path, str) and os.path.isfile(path):
                    self._inputs.setdefault(cell.family, {})[path] = key

    def _parent_name(self, fallback: str, family: str) -> str:
        """``spot 36: deadline×workload×mean_availability``: the UI's run-name column shows
        about 40 characters, so the keys go by their last part; the ``grid`` tag and the
        description hold them in full."""
        if not self.varying:
            return f"{family}: {fallback}"[:250]
        cells = len(self._family_cells.get(family, ())) or self._cells
        return f"{family} {cells:,}: {'×'.join(short_keys(self.varying))}"[:250]

    def _cell_run_name(self, cell: Cell) -> str:
        """``deadline=8,workload=60``: what varies, by the keys' last part (the run's params and
        the ``cell`` tag have them in full)."""
        keys = [key for key in self.varying if key in cell.params]
        return ",".join(f"{short}={cell.params[key]}" for key, short in zip(keys, short_keys(keys))) or cell.name

    def _grid_text(self) -> str:
        return "; ".join(f"{key}={','.join(values)}" for key, values in self._grid.items() if key in self.varying)

    def _description(self, family: str, names: dict[str, str] | None = None) -> str:
        """The parent run's description (the UI's "Description"): the grid, where it lives, how
        many cells have child runs and how to log the rest."""
        cells = len(self._family_cells.get(family, ())) or self._cells
        out_dir = self._out_dir.resolve() if self._out_dir else "?"
        logged = min(self._logged.get(family, 0), cells)
        lines = [
            f"Sweep of {counted(cells, 'cell')}: compare the mechanisms in the artifacts `{WIDE_TABLE}` (a row "
            "per cell, mean utility ± 95% interval per mechanism) and `utility_vs_<key>.png`; every cell is "
            "there.",
            "",
            f"Child runs: {logged:,} of {cells:,} cells (`tracking.child_runs={self.child_runs}`).",
        ]
        if logged < cells:
            lines.append(
                f"Log the others under this run with `python -m sweep.upload {out_dir} "
                f"--tracking-uri {self.uri} --child-runs {cells}` (cells already logged are skipped)."
            )
        renamed = {name: key for name, key in (names or {}).items() if key != name}
        if renamed:
            shown = "; ".join(f"`utility_mean/{key}` is `{name}`" for name, key in list(renamed.items())[:4])
            lines += [
                "",
                f"Metric names: {shown}"
                + (" ..." if len(renamed) > 4 else "")
                + f" (MLflow refuses `(),=` in a name; `{NAMES_FILE}` maps every key to its mechanism).",
            ]
        lines += ["", f"Sweep dir: `{out_dir}`"] + ([f"Overrides: `{self._overrides}`"] if self._overrides else [])
        lines.append("")
        for key, values in self._grid.items():
            shown = ", ".join(values[:12]) + (f", ... ({len(values)} values)" if len(values) > 12 else "")
            lines.append(f"- `{key}`: {shown}" + ("" if key in self.varying else " (every cell)"))
        return "\n".join(lines)

    def already_logged(self, cell: Cell) -> bool:
        parent = self.parents.get(cell.family, (None, None))[1]
        logged = self._cell_runs.get(str(cell.index), {})
        return bool(parent and logged.get("parent") == parent and logged.get("config_hash") == cell.config_hash)

    def wants_cell(self) -> bool:
        return not self.failed and self._children < self.child_runs

    def log_cell(
        self,
        cell: Cell,
        files: dict[str, bytes],
        summary: pd.DataFrame,
        metrics: dict[str, float],
        unless_logged: bool = False,
    ) -> None:
        """Log the cell as a child run with a run per mechanism under it, on the logging thread:
        ``files`` (the cell's files by name, results.cell_files) as artifacts, ``metrics`` (its
        cell outputs') and the step series among its files; ``unless_logged``: not if
        ``tracking.json`` says this sweep's parent already has it."""
        if self.failed or self._children >= self.child_runs:
            return
        self._children += 1
        self._futures.append(self._executor.submit(self._log_cell, cell, files, summary, metrics, unless_logged))

    def _log_cell(
        self, cell: Cell, files: dict[str, bytes], summary: pd.DataFrame, cell_metrics: dict, unless_logged: bool
    ) -> None:
        if self.failed or cell.family not in self.parents:
            return
        if unless_logged and self.already_logged(cell):
            self._logged[cell.family] = self._logged.get(cell.family, 0) + 1
            return
        try:
            from mlflow.entities import Metric, Param, RunTag

            experiment_id, parent = self.parents[cell.family]
            name = self._cell_run_name(cell)
            run = self.client.create_run(experiment_id, run_name=name[:250], tags={"mlflow.parentRunId": parent})
            now = int(time.time() * 1000)
            metrics = [Metric(metric_key(k), v, now, 0) for k, v in cell_metrics.items()]
            series = read_series(files)
            if series is not None:
                for column in series.columns:
                    key = metric_key(str(column))
                    metrics.extend(Metric(key, float(v), now, int(step)) for step, v in series[column].dropna().items())
            values = {**cell.params, "replicates": cell.replicates, "cell_index": cell.index}
            params = [Param(k, str(v)[:6000]) for k, v in values.items()]
            tags = [
                RunTag("config_hash", cell.config_hash),
                RunTag("git_commit", self._commit),
                RunTag("cell", cell.name),
                RunTag("family", cell.family),
            ]
            best = best_mechanism(summary)
            if best:
                tags += [RunTag(key, value) for key, value in best.items() if isinstance(value, str)]
                metrics += [Metric(key, value, now, 0) for key, value in best.items() if isinstance(value, float)]
            for start in range(0, max(len(metrics), 1), 1000):
                self.client.log_batch(
                    run.info.run_id,
                    metrics=metrics[start : start + 1000],
                    params=params if start == 0 else [],
                    tags=tags if start == 0 else [],
                )
            with tempfile.TemporaryDirectory(prefix="sweep-cell-") as folder:
                for file_name, data in sorted(files.items()):
                    (Path(folder) / file_name).write_bytes(data)
                self.client.log_artifacts(run.info.run_id, folder)
            self._log_mechanisms(experiment_id, run.info.run_id, name, cell, values, summary, now)
            self.client.set_terminated(run.info.run_id)
            self._cell_runs[str(cell.index)] = {
                "config_hash": cell.config_hash,
                "run": run.info.run_id,
                "parent": parent,
            }
            self._write_state()
            self._logged[cell.family] = self._logged.get(cell.family, 0) + 1
        except Exception as err:
            self._fail(err)

    def _log_mechanisms(
        self,
        experiment_id: str,
        cell_run: str,
        cell_name: str,
        cell: Cell,
        values: dict[str, Any],
        summary: pd.DataFrame,
        now: int,
    ) -> None:
        """A run per mechanism under the cell's run: the cell's params plus ``mechanism``, and the
        same metric names for every mechanism, so that the UI groups and charts by mechanism."""
        from mlflow.entities import Metric, Param, RunTag

        for mechanism, scalars in mechanism_metrics(summary).items():
            run = self.client.create_run(experiment_id, run_name=mechanism[:250], tags={"mlflow.parentRunId": cell_run})
            self.client.log_batch(
                run.info.run_id,
                metrics=[Metric(k, v, now, 0) for k, v in scalars.items()],
                params=[Param(k, str(v)[:6000]) for k, v in {**values, "mechanism": mechanism}.items()],
                tags=[
                    RunTag("mechanism", mechanism),
                    RunTag("cell", cell.name),
                    RunTag("family", cell.family),
                    RunTag("config_hash", cell.config_hash),
                ],
            )
            self.client.set_terminated(run.info.run_id)

    def finish(self, out_dir: Path, status: str, metrics: dict[str, dict[str, float]] | None = None) -> None:
        """Close every parent run with its family's ``metrics[family]`` and the sweep's files.
        A stopped sweep (``status`` KILLED) drops the cells still queued for logging (its resume
        logs every complete cell not yet logged) and logs no files or figures: it stops within
        seconds."""
        stopping = status != "FINISHED"
        if stopping:
            for future in self._futures:
                future.cancel()
            running = [future for future in self._futures if not future.cancelled()]
            if wait(running, timeout=STOPPING_WAIT_SECONDS).not_done:  # e.g. a new SQLite store still opening
                self._executor.shutdown(wait=False)
                sys.stderr.write(
                    f"Warning: MLflow at {self.uri} was still busy when the sweep stopped: its parent "
                    f"run may stay RUNNING (the resume continues or replaces it)\n"
                )
                return
        for future in self._futures:
            if not future.cancelled():
                future.result()
        self._executor.shutdown(wait=True)
        if self.failed or not self.parents:
            return
        try:
            from mlflow.entities import Metric

            now = int(time.time() * 1000)
            for family, (_, parent) in self.parents.items():
                summary = self._family_summary(Path(out_dir), family)
                names = mechanism_keys([str(m) for m in summary["mechanism"]]) if summary is not None else {}
                values = renamed_metrics((metrics or {}).get(family, {}), names)
                if values:
                    self.client.log_batch(parent, metrics=[Metric(k, v, now, 0) for k, v in values.items()])
                self.client.set_tag(parent, "mlflow.note.content", self._description(family, names))
                if not stopping:
                    for name in (SUMMARY, RESULTS, "multirun.yaml"):
                        if (Path(out_dir) / name).exists():
                            self.client.log_artifact(parent, str(Path(out_dir) / name))
                    if summary is not None:
                        self.client.log_dict(parent, {key: name for name, key in names.items()}, NAMES_FILE)
                        self._log_grid_views(parent, summary)
                    self._log_inputs(parent, family)
                self.client.set_terminated(parent, status=status)
        except Exception as err:
            self._fail(err)

    def _family_summary(self, out_dir: Path, family: str) -> pd.DataFrame | None:
        """``summary.csv``'s rows of the family's cells, None without one."""
        path = out_dir / SUMMARY
        if not path.exists() or path.stat().st_size == 0:
            return None
        summary = pd.read_csv(path)
        if "mechanism" not in summary:
            return None
        if family in self._family_cells:  # a sweep over families: this family's cells only
            summary = summary[summary["cell_index"].isin(self._family_cells[family])]
        return summary

    def _log_grid_views(self, parent: str, summary: pd.DataFrame) -> None:
        """The cell x mechanism tables the UI shows (wide: a column per mechanism; long: a row
        per cell and mechanism) and mean utility with its intervals against each grid key."""
        self.client.log_table(parent, data=wide_table(summary, self.varying), artifact_file=WIDE_TABLE)
        self.client.log_table(parent, data=long_table(summary, self.varying), artifact_file=LONG_TABLE)
        from .plots import interval_lines

        with tempfile.TemporaryDirectory(prefix="sweep-figures-") as folder:
            for key in self.varying:
                if key in summary:
                    figure = Path(folder) / f"utility_vs_{metric_key(key).replace('/', '_')}.png"
                    others = [other for other in self.varying if other != key]
                    if interval_lines(summary, key, others, figure):
                        self.client.log_artifact(parent, str(figure))

    def _log_inputs(self, parent: str, family: str) -> None:
        """The input traces the family's cells read, as MLflow datasets of the parent run (the
        UI's "Datasets used"), each with the config key that names it as its context."""
        import mlflow.data
        from mlflow.entities import DatasetInput, InputTag

        inputs = []
        for path, key in sorted(self._inputs.get(family, {}).items()):
            try:
                frame = pd.read_csv(path)
            except (OSError, ValueError) as err:  # the family's own reader took it; pandas may not
                log.warning("input %s not logged as an MLflow dataset: %s", path, err)
                continue
            dataset = mlflow.data.from_pandas(frame, source=path, name=Path(path).name)
            inputs.append(DatasetInput(dataset._to_mlflow_entity(), tags=[InputTag("mlflow.data.context", key)]))
        if inputs:
            self.client.log_inputs(parent, datasets=inputs)

    def describe(self) -> str:
        if self.failed:
            return f"MLflow tracking failed ({self.uri}); upload with: python -m sweep.upload SWEEP_DIR --tracking-uri {self.uri}"
        names = ", ".join(self.parents) or "none"
        if self.uri.startswith("sqlite:///"):
            return (
                f"MLflow: experiment(s) {names} in {self.uri}; browse with `make ui` "
                f"(or: mlflow ui --backend-store-uri {self.uri} --host 127.0.0.1)"
            )
        return "MLflow: " + ", ".join(
            f"{self.uri}/#/experiments/{experiment}/runs/{run}" for experiment, run in self.parents.values()
        )


def preload(config: TrackingConfig) -> None:
    """Import MLflow and its SQL store on a background thread (about 2.7 s on the 2-core VM)
    while the launcher composes the cells and starts Ray: the tracker's start, which opens or
    creates the store only once every cell is checked (a bad config leaves no mlflow.db), then
    waits for less. Nothing is written."""
    if config.kind != "off":
        threading.Thread(target=_import_mlflow, name="mlflow-preload", daemon=True).start()


def _import_mlflow() -> None:
    try:
        for module in ("mlflow.tracking", "mlflow.entities", "mlflow.store.tracking.sqlalchemy_store"):
            importlib.import_module(module)
    except Exception:  # the tracker's own import reports any problem
        pass


def make_tracker(config: TrackingConfig) -> NullTracker:
    return NullTracker() if config.kind == "off" else MlflowTracker(config)


def parent_params(overrides: Sequence[str]) -> dict[str, Any]:
    return {"overrides": " ".join(overrides) or "(none)"}
