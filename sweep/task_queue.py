"""A pool of Ray actors fed from a task queue (docs/architecture.md, "Task queue").

Chunks of simulations go to a fixed pool of actors with a bounded number in flight
per actor; results are taken as they finish (``ray.wait``); a chunk whose worker
process died is retried on a fresh actor, up to ``runner.max_retries`` times.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
import yaml
from ray.exceptions import (
    ActorDiedError,
    ActorUnavailableError,
    RayActorError,
    RayTaskError,
    WorkerCrashedError,
)

from . import ray_auth, stop_signals
from .errors import ConfigError
from .local_ray import own_session
from .schema import RunnerConfig
from .worker import PARTS_KEY, SimulationWorker, unpack

log = logging.getLogger(__name__)
_WORKER_DEATHS = (RayActorError, ActorDiedError, ActorUnavailableError, WorkerCrashedError)
_PROJECT_ROOT = Path(__file__).resolve().parent.parent


class SweepFailed(RuntimeError):
    """A simulation raised, or a chunk kept losing its worker."""


@dataclass(frozen=True)
class Chunk:
    cell: int
    rep_start: int
    rep_stop: int
    simulations: int
    whole: bool = False  # the cell's only chunk: the worker also builds its frame and files


# What every worker imports whatever its family: the engine, and the rooms a family module may import.
CORE_PACKAGES = ("market", "algorithms", "sweep")


def declared_family_modules(root: Path = _PROJECT_ROOT) -> list[str]:
    """The ``family.module`` of every family config (``conf/family/*.yaml``): the families a sweep
    picks by name, known before its cells are composed."""
    modules = []
    for path in sorted((root / "conf" / "family").glob("*.yaml")):
        section = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("family") or {}
        if section.get("module"):
            modules.append(str(section["module"]))
    return modules


def worker_packages(family_modules: Iterable[str], root: Path = _PROJECT_ROOT) -> list[Path]:
    """The packages a simulation worker imports, which ``runner.ship_code`` sends to a remote
    cluster: ``market/``, ``algorithms/`` and ``sweep/`` always, and the top-level package of each
    family module the configs name (``arena.family`` -> ``arena/``), so that a new room needs a
    config and no edit here. A family module under ``root`` (a user's ``mine.family``) is shipped
    as its own top-level folder or file; one elsewhere is left to the user's own runtime_env (Ray
    then imports it from wherever the cluster's workers find it)."""
    packages = [root / name for name in CORE_PACKAGES]
    for module in family_modules:
        package = _top_level_path(module, root)
        if package is not None and package not in packages:
            packages.append(package)
    return packages


def _top_level_path(module: str, root: Path) -> Path | None:
    top = module.split(".")[0]
    for path in (root / top, root / f"{top}.py"):
        if path.exists():
            return path
    return None


def shipped_packages(runner: RunnerConfig, family_modules: Iterable[str] = ()) -> list[Path]:
    """What ``connect`` sends as ``runtime_env.py_modules``: nothing unless ``runner`` joins a
    cluster with ``ship_code``; else the packages of every declared family (the cells are often
    composed while Ray starts) and of ``family_modules``, the families the sweep names besides."""
    if runner.kind != "cluster" or not runner.ship_code:
        return []
    return worker_packages([*declared_family_modules(), *family_modules])


def _probe_cluster(runner: RunnerConfig):
    """Where the driver joins ``runner.address`` (resolved as ray.init would: sweep/ray_address.py), or
    a ConfigError within ``runner.connect_timeout`` seconds when no Ray cluster answers there (ray.init
    itself would wait for many minutes)."""
    from .ray_address import reachable_or_error

    return reachable_or_error(runner.address, runner.connect_timeout, os.environ)


# Ray's setting (ray_config_def.h) for the niceness of the worker processes a raylet starts.
NICENESS = "RAY_worker_niceness"


def local_system_config(environ: Mapping[str, str]) -> dict[str, Any]:
    """Ray settings for a Ray this run starts: its workers at the driver's priority.

    Ray starts worker processes at niceness 15, below every ordinary process. Beside two CPU-bound
    processes on two cores such a worker got a few percent of a core: `debug=tiny` of core/table1
    simulated for 46 s instead of 2.5 s. The simulations are the run's work, so they take a fair
    share of the CPUs. A niceness the user set (RAY_worker_niceness) is kept; a cluster's raylets
    keep the niceness they were started with."""
    return {} if NICENESS in environ else {"worker_niceness": 0}


def connect(runner: RunnerConfig, family_modules: Iterable[str] = ()) -> int:
    """Start or join Ray as the runner says; return the number of CPUs the cluster offers.

    Joining a cluster, the driver first checks that a Ray cluster answers at the address
    (``_probe_cluster``), and presents Ray's auth token when one is available (``ray_auth.driver_auth``);
    an address where none answers, or a cluster that refuses the token, is a ConfigError saying
    what to do. With ``runner.ship_code`` it sends the packages of the declared families and of
    ``family_modules`` (``shipped_packages``).
    """
    target = None if runner.kind == "local" else runner.address
    if ray.is_initialized():
        current = getattr(connect, "_target", "unknown")
        if current == target:
            return int(ray.cluster_resources().get("CPU", 1))
        close_pool()
        ray.shutdown()
    global _POOL
    _POOL = None  # actors of an earlier Ray session are gone
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    source, endpoint = None, None
    if runner.kind == "local":
        kwargs["address"] = "local"  # a new instance even where RAY_ADDRESS points elsewhere
        kwargs["num_cpus"] = max(os.cpu_count() or 1, runner.num_workers or 0)
        kwargs["_system_config"] = local_system_config(os.environ)
        ray_auth.token_auth_for_local_ray()
    else:
        kwargs["address"] = runner.address
        kwargs.pop("include_dashboard")
        packages = shipped_packages(runner, family_modules)
        if packages:
            kwargs["runtime_env"] = {"py_modules": [str(path) for path in packages]}
        env, source = ray_auth.driver_auth(os.environ, os.environ.get("HOME"))
        endpoint = _probe_cluster(runner)
        if env:
            log.info(
                "presenting the Ray auth token from %s to %s (%s=token for this driver)",
                source,
                runner.address,
                ray_auth.AUTH_MODE,
            )
            ray_auth.present_token(env)
    try:
        with own_session() if runner.kind == "local" else contextlib.nullcontext():
            ray.init(**kwargs)
    except Exception as err:
        if runner.kind == "cluster" and ray_auth.is_auth_failure(err):
            raise ConfigError(ray_auth.auth_failure_message(str(runner.address), os.environ, source)) from None
        if runner.kind == "cluster":
            from .ray_address import join_failure

            failure = join_failure(endpoint, runner.address, err)
            if failure is not None:
                raise failure from err
        raise
    connect._target = target  # type: ignore[attr-defined]
    return int(ray.cluster_resources().get("CPU", 1))


class ActorPool:
    """Simulation actors, replaced when their process dies.

    The pool outlives one ``run_cells`` call (the Python API may call it many times in one
    process): actors keep their caches, and no call waits for the CPUs of the previous
    call's actors to be released.
    """

    def __init__(self, size: int):
        self._cls = ray.remote(num_cpus=1, max_restarts=0)(SimulationWorker)
        self.actors = [self._start() for _ in range(size)]

    def _start(self):
        return self._cls.remote(pin_threads=True)

    def resize(self, size: int) -> None:
        while len(self.actors) > size:
            actor = self.actors.pop()
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass
        while len(self.actors) < size:
            self.actors.append(self._start())

    def replace(self, dead) -> None:
        if dead in self.actors:
            idx = self.actors.index(dead)
            try:
                ray.kill(dead, no_restart=True)
            except Exception:  # already gone
                pass
            self.actors[idx] = self._start()

    def close(self) -> None:
        for actor in self.actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                pass
        self.actors = []


def bundle(chunks: Iterable[Chunk], simulations: int) -> list[tuple[Chunk, ...]]:
    """The calls to make: consecutive whole-cell chunks share one call up to ``simulations``
    simulations in all (a grid of tiny cells pays Ray's per-call cost once for several); any
    other chunk is a call of its own."""
    calls: list[tuple[Chunk, ...]] = []
    group: list[Chunk] = []
    size = 0
    for chunk in chunks:
        if group and (not chunk.whole or size + chunk.simulations > simulations):
            calls.append(tuple(group))
            group, size = [], 0
        if chunk.whole:
            group.append(chunk)
            size += chunk.simulations
        else:
            calls.append((chunk,))
    if group:
        calls.append(tuple(group))
    return calls


def _describe(call: tuple[Chunk, ...]) -> str:
    if len({chunk.cell for chunk in call}) == 1 and not call[0].whole:
        return f"cell {call[0].cell}, replicates {call[0].rep_start}-{call[-1].rep_stop - 1}"
    if len(call) == 1:
        chunk = call[0]
        return f"cell {chunk.cell}, replicates {chunk.rep_start}-{chunk.rep_stop - 1}"
    return f"cells {', '.join(str(chunk.cell) for chunk in call)} (one call)"


# Several whole cells to a call, but at least this many calls a worker: no worker waits for work
# while another finishes a long call, and the progress bar first moves after an eighth of a
# worker's share of the work instead of after half of it.
CALLS_PER_WORKER = 8

# A call of chunks of parts of cells aims at about this much of a worker's time: Ray's per-call
# cost (about 1 ms, docs/scaling.md) is then a few per cent of it, whatever a simulation costs.
CALL_SECONDS = 0.05
MAX_CHUNKS_PER_CALL = 256

# The driver finishes a cell (its rows, the family's figures, the summary) between two results;
# before it does, each worker gets enough calls to keep busy that long (the time the last finish
# took, this guess before the first), at most MAX_EXTRA_CALLS more than runner.in_flight_per_worker.
FINISH_SECONDS_GUESS = 1.0
MAX_EXTRA_CALLS = 64


class CallSizer:
    """How many chunks of parts of cells go in one call (``run_chunks``): as many as the worker
    time measured so far (``record``) says fit in CALL_SECONDS, at most MAX_CHUNKS_PER_CALL and
    no more than leave each worker CALLS_PER_WORKER calls of what is still pending, at least
    one; one until a call's time is known. Which chunks share a call changes no result: each
    chunk's rows are those it gives alone."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.seconds_per_simulation: float | None = None
        self.seconds_per_call: float | None = None

    def record(self, simulations: int, seconds: float) -> None:
        rate = seconds / max(1, simulations)
        old = self.seconds_per_simulation
        self.seconds_per_simulation = rate if old is None else 0.5 * (old + rate)
        old = self.seconds_per_call
        self.seconds_per_call = seconds if old is None else 0.5 * (old + seconds)

    def calls_to_cover(self, seconds: float) -> int:
        """How many more calls each worker needs in flight to keep busy for ``seconds`` of the
        driver's own work (``run_chunks``: finishing a cell), at most MAX_EXTRA_CALLS; none
        until a call's time is known."""
        if not self.seconds_per_call:
            return 0
        return min(MAX_EXTRA_CALLS, math.ceil(seconds / self.seconds_per_call))

    def chunks_per_call(self, simulations: int, pending: int) -> int:
        """For chunks of ``simulations`` simulations, with ``pending`` chunks not yet sent."""
        if not self.seconds_per_simulation:
            return 1
        fit = int(CALL_SECONDS / (self.seconds_per_simulation * max(1, simulations)))
        return max(1, min(fit, MAX_CHUNKS_PER_CALL, pending // (CALLS_PER_WORKER * self.workers)))


def _is_part(call: tuple[Chunk, ...]) -> bool:
    return len(call) == 1 and not call[0].whole


def run_chunks(
    chunks: Iterable[Chunk],
    payload_refs: dict[int, Any],
    runner: RunnerConfig,
    workers: int,
    on_done: Callable[[Chunk, dict], None],
    idle: Callable[[], bool] | None = None,
) -> None:
    """Run every chunk on a pool of ``workers`` actors; call ``on_done`` in the driver as each
    finishes (whole small cells go several to a call, ``bundle``). ``idle``, if given, is the
    driver's own work, done a piece at a time while the actors run (it returns False once
    done): the head start's results are taken in so (engine._simulate)."""
    chunks = list(chunks)
    whole = sum(chunk.simulations for chunk in chunks if chunk.whole)
    per_call = min(runner.chunk_size, -(-whole // (CALLS_PER_WORKER * workers)) if whole else runner.chunk_size)
    pending: deque[tuple[tuple[Chunk, ...], int]] = deque((call, 0) for call in bundle(chunks, per_call))
    chunks_left = Counter(chunk.cell for chunk in chunks)  # a cell's last chunk: on_done finishes it
    finish_seconds = FINISH_SECONDS_GUESS
    sizer = CallSizer(workers)
    pool = _pool(workers)
    in_flight: dict[Any, tuple[tuple[Chunk, ...], Any, int]] = {}
    load = {id(a): 0 for a in pool.actors}
    limit = runner.in_flight_per_worker

    def submit(most: int) -> None:
        """Send pending calls until each actor has ``most`` in flight, one call to each in turn
        (near the end of the queue every actor gets a share, not the first actor all of it)."""
        hungry = [actor for actor in pool.actors if load.get(id(actor), 0) < most]
        while pending and hungry:
            for actor in hungry:
                if not pending:
                    break
                call, attempts = pending.popleft()
                if _is_part(call):  # with the chunks of parts after it that fit in one call
                    more = sizer.chunks_per_call(call[0].simulations, len(pending)) - 1
                    while more > 0 and attempts == 0 and pending and pending[0][1] == 0 and _is_part(pending[0][0]):
                        call += pending.popleft()[0]
                        more -= 1
                    cells: dict[int, int] = {}  # cell -> its payload's place in the call
                    spans = [(cells.setdefault(c.cell, len(cells)), c.rep_start, c.rep_stop) for c in call]
                    ref = actor.run_parts.remote(spans, *(payload_refs[cell] for cell in cells))
                elif len(call) == 1:
                    chunk = call[0]
                    ref = actor.run_chunk.remote(payload_refs[chunk.cell], chunk.rep_start, chunk.rep_stop, chunk.whole)
                else:
                    ref = actor.run_cells.remote([(payload_refs[c.cell], c.rep_start, c.rep_stop) for c in call])
                in_flight[ref] = (call, actor, attempts)
                load[id(actor)] = load.get(id(actor), 0) + 1
            hungry = [actor for actor in hungry if load[id(actor)] < most]

    try:
        while pending or in_flight:
            stop_signals.check()
            submit(limit)
            if idle is not None and not idle():
                idle = None
            ready, _ = ray.wait(
                list(in_flight), num_returns=1, timeout=0 if idle is not None else stop_signals.POLL_SECONDS
            )
            for ref in ready:
                call, actor, attempts = in_flight.pop(ref)
                if id(actor) in load:
                    load[id(actor)] -= 1
                try:
                    result = ray.get(ref)
                except RayTaskError as err:
                    if isinstance(err.cause, _WORKER_DEATHS):
                        result = err
                    else:
                        raise SweepFailed(f"a simulation of {_describe(call)} raised:\n{err}") from None
                except _WORKER_DEATHS as err:
                    result = err
                if isinstance(result, Exception):
                    if attempts >= runner.max_retries:
                        raise SweepFailed(
                            f"{_describe(call)}: the worker died {attempts + 1} times ({type(result).__name__}); "
                            f"giving up (runner.max_retries={runner.max_retries})"
                        )
                    log.warning(
                        "a worker died (%s); retrying %s on a new worker", type(result).__name__, _describe(call)
                    )
                    if actor in pool.actors:
                        load.pop(id(actor), None)
                        pool.replace(actor)
                        load.update({id(a): load.get(id(a), 0) for a in pool.actors})
                    pending.appendleft((call, attempts + 1))
                    continue
                if PARTS_KEY in result:
                    sizer.record(sum(chunk.simulations for chunk in call), result["seconds"])
                    results = result[PARTS_KEY]
                else:
                    results = unpack(result) if len(call) > 1 else [result]
                for chunk, columns in zip(call, results):
                    chunks_left[chunk.cell] -= 1
                    if chunks_left[chunk.cell] or not pending:
                        on_done(chunk, columns)
                        continue
                    # the driver finishes the cell now: first give the workers work for that long
                    submit(limit + sizer.calls_to_cover(finish_seconds))
                    start = time.perf_counter()
                    on_done(chunk, columns)
                    finish_seconds = time.perf_counter() - start
    finally:
        if in_flight:  # interrupted or failed: cancel the rest and start afresh next time
            for ref in in_flight:
                try:
                    ray.cancel(ref, force=True)
                except Exception:
                    pass
            close_pool()


_POOL: ActorPool | None = None


def pool_size(runner: RunnerConfig, cpus: int, chunks: int | None = None) -> int:
    """The number of actors: ``runner.num_workers`` or every CPU Ray offers (no more than a
    cluster's CPUs), and no more than there are chunks (then it warns of a cluster too small,
    once: not when the pool is started early)."""
    workers = runner.num_workers or cpus
    if runner.kind == "cluster" and workers > cpus:
        if chunks is not None:
            log.warning("runner.num_workers=%d but the cluster offers %d CPUs: using %d workers", workers, cpus, cpus)
        workers = cpus
    return max(1, min(workers, chunks) if chunks is not None else workers)


def prestart_pool(runner: RunnerConfig, cpus: int, cells: int | None = None) -> None:
    """Create the actors now, so that their processes start (and import the engine) while the
    driver still composes cells; ``run_chunks`` resizes the pool to the chunks it has.

    No more actors than ``cells``, the chunks there will be at least: an actor that gets no work
    still costs a process's start-up, which a busy machine's CPUs pay for the run."""
    size = pool_size(runner, cpus)
    _pool(min(size, cells) if cells else size)


def _pool(size: int) -> ActorPool:
    global _POOL
    if _POOL is None:
        _POOL = ActorPool(size)
    else:
        _POOL.resize(size)
    return _POOL


def close_pool() -> None:
    global _POOL
    if _POOL is not None:
        _POOL.close()
        _POOL = None


def shutdown_own_ray() -> None:
    """End the Ray this process started (``runner=local``) once the sweep is done; nothing for a
    joined cluster, or when Ray was never started.

    Ray's exit hook takes about 1.5 s here: it sleeps 0.5 s for late log lines, and its autoscaler
    monitor, asked to stop after the GCS is gone, spends the full second Ray grants it trying to
    report its end to that GCS before it is killed. After the sweep no log line is due and this
    Ray has no autoscaling, so the monitor is killed first and Ray shut down at once (about 0.1 s).
    """
    if not ray.is_initialized() or getattr(connect, "_target", "unknown") is not None:
        return
    close_pool()
    node = getattr(ray._private.worker, "_global_node", None)
    for info in getattr(node, "all_processes", {}).get("monitor", []):
        info.process.kill()
        info.process.wait()
    ray.shutdown()
