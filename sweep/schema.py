"""Dataclass schemas of the engine's config groups and the validation of a whole cell.

The family's own sections are checked by the family's ``prepare`` (sweep/family.py); this
module checks the engine's groups (`runner`, `tracking`), the top-level keys (each must be an
engine key or a section the cell's family owns) and the mechanism names, and turns every
problem into a :class:`ConfigError` that names the key.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, fields
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from algorithms.common.optional_keys import without_null_keys

from .errors import ConfigError
from .family import ENGINE_KEYS, EXECUTION_KEYS, FamilySpec, family_of
from .seeding import get_dotted, set_dotted

RUNNER_KINDS = ("local", "cluster")
TRACKING_KINDS = ("sqlite", "server", "off")


@dataclass
class RunnerConfig:
    kind: str = "local"
    address: str | None = None
    num_workers: int | None = None
    chunk_size: int = 256
    in_flight_per_worker: int = 2
    max_retries: int = 3
    ship_code: bool = False
    progress: bool = True
    connect_timeout: float = 20.0  # seconds for runner.address to answer (sweep/ray_address.py)

    def check(self) -> None:
        if self.kind not in RUNNER_KINDS:
            raise ConfigError(f"runner.kind must be one of {', '.join(RUNNER_KINDS)}, got '{self.kind}'")
        if self.kind == "cluster" and not self.address:
            raise ConfigError("runner.address is required for runner=cluster (auto, HOST:PORT or ray://HOST:PORT)")
        if self.num_workers is not None and self.num_workers < 1:
            raise ConfigError(
                f"runner.num_workers must be at least 1 (or null for one per CPU), got {self.num_workers}"
            )
        if self.chunk_size < 1:
            raise ConfigError(f"runner.chunk_size must be at least 1, got {self.chunk_size}")
        if self.in_flight_per_worker < 1:
            raise ConfigError(f"runner.in_flight_per_worker must be at least 1, got {self.in_flight_per_worker}")
        if self.max_retries < 0:
            raise ConfigError(f"runner.max_retries must be at least 0, got {self.max_retries}")
        timeout = self.connect_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ConfigError(f"runner.connect_timeout must be a positive number of seconds, got {timeout!r}")


@dataclass
class TrackingConfig:
    kind: str = "sqlite"
    uri: str | None = None
    child_runs: int = 20  # cells logged as child runs (with their mechanism runs); every cell is in the parent's table

    def check(self) -> None:
        if self.kind not in TRACKING_KINDS:
            raise ConfigError(f"tracking.kind must be one of {', '.join(TRACKING_KINDS)}, got '{self.kind}'")
        if isinstance(self.child_runs, bool) or self.child_runs < 0:
            raise ConfigError(f"tracking.child_runs must be a non-negative integer, got {self.child_runs!r}")
        if self.kind == "off":
            return
        if not self.uri:
            raise ConfigError(f"tracking.uri is required for tracking={self.kind}")
        if not self.uri.startswith(("sqlite:///", "http://", "https://", "file:", "postgresql", "mysql")):
            raise ConfigError(
                f"tracking.uri '{self.uri}' is not a tracking store URI "
                "(sqlite:///PATH, http://HOST:PORT, file:PATH, postgresql://...)"
            )
        if self.uri.startswith("sqlite:///"):
            check_sqlite_store(os.path.abspath(self.uri[len("sqlite:///") :]))


def check_sqlite_store(path: str) -> None:
    """A SQLite store the sweep can write: its folder exists and takes a new file, and the file,
    if there, opens for writing. Checked by trying (permissions alone do not tell, e.g. as root
    on /proc), before any work: MLflow would otherwise retry for minutes and the sweep end
    without tracking."""
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise ConfigError(f"tracking.uri: the folder of the SQLite store does not exist: {parent}")
    if os.path.isdir(path):
        raise ConfigError(f"tracking.uri: {path} is a folder, not a SQLite file")
    try:
        if os.path.exists(path):
            os.close(os.open(path, os.O_RDWR))
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".mlflow-probe-"):
            pass
    except OSError as err:
        raise ConfigError(
            f"tracking.uri: cannot write the SQLite store {path} ({err.strerror or err}); "
            "pick a writable place (tracking.uri=sqlite:///PATH) or tracking=off"
        ) from None


def _typed(schema: type, section: Any, key: str):
    """Merge one section into its dataclass schema; type errors name the full key."""
    if not isinstance(section, DictConfig):
        raise ConfigError(f"{key} must be a config group, got {section!r}")
    try:
        merged = OmegaConf.merge(OmegaConf.structured(schema), section)
    except OmegaConfBaseException as err:
        sub = getattr(err, "full_key", None) or ""
        full = f"{key}.{sub}" if sub and not sub.startswith(key) else (sub or key)
        raise ConfigError(f"{full}: {getattr(err, 'msg', str(err)).splitlines()[0]}") from None
    return OmegaConf.to_object(merged)


def runner_config(cfg: DictConfig) -> RunnerConfig:
    runner = _typed(RunnerConfig, cfg.get("runner"), "runner")
    runner.check()
    return runner


def tracking_config(cfg: DictConfig) -> TrackingConfig:
    tracking = _typed(TrackingConfig, cfg.get("tracking"), "tracking")
    tracking.check()
    return tracking


def world_config(cfg: DictConfig) -> dict:
    """The resolved config minus the execution keys: what a cell computes from."""
    keys = [key for key in cfg.keys() if key not in EXECUTION_KEYS]
    try:
        return OmegaConf.to_container(OmegaConf.masked_copy(cfg, keys), resolve=True)
    except OmegaConfBaseException as err:
        raise ConfigError(f"{getattr(err, 'full_key', '') or 'config'}: {err.msg}") from None


def _absolute_input_paths(world: dict, spec: FamilySpec) -> None:
    """The family's input files are resolved against the launch directory, since Ray workers
    run elsewhere."""
    for key in spec.input_files:
        value = get_dotted(world, key)
        if isinstance(value, str) and value:
            set_dotted(world, key, os.path.abspath(value))


def _check_top_level(world: dict, spec: FamilySpec) -> None:
    unknown = sorted(str(key) for key in world if key not in ENGINE_KEYS and key not in spec.sections)
    if unknown:
        raise ConfigError(
            f"{unknown[0]}: not a key of the {spec.name} family's cells (its sections: {', '.join(spec.sections)}; "
            f"the engine's keys: {', '.join(ENGINE_KEYS)}). A key of another family's config? Pick that family "
            f"with family=... or experiment=<family>/<name>"
        )


NEVER_EXCLUDED = ("seed", "replicates", "seed_excludes", "family")


def _check_seed_excludes(world: dict) -> None:
    """`seed_excludes`: dotted keys of this config left out of the world hash."""
    keys = world.get("seed_excludes")
    if keys is None:
        return
    if isinstance(keys, str) or not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) for k in keys):
        raise ConfigError(f"seed_excludes must be a list of dotted keys, got {keys!r}")
    for key in keys:
        if key.split(".")[0] in NEVER_EXCLUDED:
            raise ConfigError(
                f"seed_excludes: {key!r} cannot be excluded from the world's seed "
                f"({', '.join(NEVER_EXCLUDED)} always count)"
            )
        if get_dotted(world, key) is None:
            raise ConfigError(f"seed_excludes: {key!r} is not a key of this cell's config")


def _check_mechanism_names(names: Any, spec: FamilySpec) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(name, str) for name in names) or not names:
        raise ConfigError(f"mechanisms: family {spec.name} named no mechanisms or not as strings: {names!r}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigError(f"mechanisms: '{name}' is listed twice")
        seen.add(name)
    return tuple(names)


def validate_cell(cfg: DictConfig) -> tuple[dict, FamilySpec, tuple[str, ...]]:
    """Check every key of one composed config; return its resolved world config, its family
    and the names of its mechanisms.

    Raises ConfigError naming the key (or the input file and line) on the first problem.
    """
    visible = OmegaConf.masked_copy(cfg, [key for key in cfg.keys() if key != "hydra"])
    missing = sorted(OmegaConf.missing_keys(visible))
    if missing:
        raise ConfigError(missing_message(missing[0]))
    runner_config(cfg)
    tracking_config(cfg)
    return validate_world(world_config(cfg))


def missing_message(key: str) -> str:
    return f"{key}: a value is required (set it on the command line, e.g. {key}=...)"


def validate_world(world: dict) -> tuple[dict, FamilySpec, tuple[str, ...]]:
    """The checks of `validate_cell` on a resolved world (the config minus `runner`, `tracking`
    and `hydra`); the family's input paths are made absolute in place."""
    seed, replicates = world.get("seed"), world.get("replicates")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(replicates, int) or isinstance(replicates, bool) or replicates < 1:
        raise ConfigError(f"replicates must be a positive integer, got {replicates!r}")
    spec = family_of(world)
    _check_top_level(world, spec)
    _check_seed_excludes(world)
    if spec.optional_keys:  # a null optional key is as if the YAML did not list it (hashes, seeds)
        world.update(without_null_keys(world, spec.optional_keys))
    _absolute_input_paths(world, spec)
    try:
        spec.prepare(world)
        names = spec.mechanism_names(world)
    except ConfigError:
        raise
    except (ValueError, TypeError, OSError) as err:
        raise ConfigError(str(err)) from None
    return world, spec, _check_mechanism_names(names, spec)


def schema_fields(schema: type) -> list[str]:
    return [f.name for f in fields(schema)]
