"""Hydra's and OmegaConf's config errors in the project's voice: one line that names the key or
the config group option and says what works instead (docs/usage.md, "Bad input").

Hydra reports a command line it cannot compose in several lines of its own and exits 1; its
advice often leads to a second error (``+job.deadline=5`` on an auction cell) and its list of
options leaves out sub-groups (``experiment=<family>/<name>``). :func:`config_error_message`
turns such an exception, and the overrides that caused it, into one line:

    job.deadline is not a key of the auction family's cells (job is a section of the spot family: add family=spot)
    experiment=nope is not an option of experiment; the options: demo, smoke; arena/exponential, ...

It looks the answer up by composing the project's configs (each family of ``conf/family/``,
each option of the cell's other groups) on the Hydra instance that is running, so this module
names no family. It is called where the project meets Hydra's errors: :func:`install` for the
composition Hydra does before the task function or the sweeper (``sweep/__main__.py``), the
`checked` sweeper, and the `ray_queue` launcher's composition of each cell.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hydra.errors import HydraException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
CONFIG_NAME = "config"  # the primary config of `python -m sweep` (sweep/__main__.py)
# Groups whose options are not part of a cell's world or that pick everything at once: never
# offered as the way to get a key.
_NOT_OFFERED = ("family", "experiment", "debug")

_OVERRIDE = re.compile(r"Could not override '([^']+)'\.\s*To append to your config use \+(\S.*)$", re.S)
_NO_GROUP = re.compile(r"^(?:In '([^']+)': )?Could not override '([^']+)'\. No match in the defaults list")
_APPEND = re.compile(r"Could not append to config\. An item is already at '([^']+)'")
_DELETE = re.compile(r"Could not delete from config\. '([^']+)' does not exist")
_AMBIGUOUS = re.compile(r"Ambiguous value for argument '([^']+)'")
_NEEDS_MULTIRUN = re.compile(r"Sweep parameters '([^']+)' requires --multirun")


def config_error_message(
    err: BaseException, overrides: Sequence[str], *, multirun: bool = False, sweep: Sequence[str] | None = None
) -> str:
    """One line for a Hydra or OmegaConf error raised while composing the config of
    ``overrides`` (a single run's command line, or one cell of a multirun).

    ``multirun``: the overrides may hold sweeps (``a=1,2``); ``sweep``: the multirun's own
    command line when ``overrides`` are one of its cells (advice then speaks of the sweep)."""
    try:
        return _Explainer(list(overrides), multirun, list(sweep) if sweep is not None else None).explain(err)
    except Exception:  # looking the answer up failed: Hydra's own words, on one line
        return _flat(err)


def install() -> None:
    """Make Hydra's command-line errors before the project takes over (a key or group typo, a
    missing option, an override that does not parse) one ``Error:`` line with exit status 2.

    Hydra runs each step of its command line through ``hydra._internal.utils.run_and_report``,
    which prints any exception its own way and exits 1. This wraps that function: a
    HydraException or OmegaConf error raised before the task function or the sweeper started
    (``sweep.cli.engine_reached``) is reported by :func:`config_error_message` instead; anything
    else, and everything with ``HYDRA_FULL_ERROR=1``, is left to Hydra as before."""
    import hydra._internal.utils as hydra_utils

    report = hydra_utils.run_and_report
    if getattr(report, "project_one_line", False):
        return

    def run_and_report(func: Callable[[], Any]) -> Any:
        return report(lambda: _one_line_unless_engine_reached(func))

    run_and_report.project_one_line = True  # type: ignore[attr-defined]
    hydra_utils.run_and_report = run_and_report


def _one_line_unless_engine_reached(func: Callable[[], Any]) -> Any:
    from .cli import engine_reached, exit_with_error

    try:
        return func()
    except (HydraException, OmegaConfBaseException) as err:
        if engine_reached() or os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        overrides, multirun = _command_line()
        exit_with_error(config_error_message(err, overrides, multirun=multirun, sweep=overrides if multirun else None))


def _command_line() -> tuple[list[str], bool]:
    """The overrides and --multirun of this process's command line, as Hydra parsed them."""
    from hydra._internal.utils import get_args_parser

    try:
        args, _ = get_args_parser().parse_known_args(sys.argv[1:])
    except SystemExit:  # not a command line Hydra parses: no overrides to explain
        return [], False
    return list(args.overrides or []), bool(args.multirun)


def _flat(err: BaseException) -> str:
    """Hydra's message on one line, without its search path and its `HYDRA_FULL_ERROR` hint."""
    text = str(err).split("\nConfig search path:")[0].split("\nSearch path:")[0]
    cause = err.__cause__
    if isinstance(cause, OmegaConfBaseException) and not isinstance(err, OmegaConfBaseException):
        text += ": " + str(cause).splitlines()[0]
    return " ".join(text.split())


def _plural(names: Sequence[str]) -> str:
    """``the F family``, ``the F and G families``."""
    names = list(names)
    if len(names) == 1:
        return f"the {names[0]} family"
    return f"the {', '.join(names[:-1])} and {names[-1]} families"


def _either(texts: Sequence[str]) -> str:
    return " or ".join(texts)


@contextmanager
def _running_hydra() -> Iterator[Any]:
    """The Hydra instance of this process (the command line's), else one over conf/ for the
    time of the look-up (the Python API, tests)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        yield GlobalHydra.instance().hydra
        return
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield GlobalHydra.instance().hydra


def _dotted_keys(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every dotted key of a plain config tree (sections and values) -> its value."""
    keys: dict[str, Any] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}{key}"
            keys[path] = value
            keys.update(_dotted_keys(value, f"{path}."))
    return keys


class _Config:
    """One composed config as the look-ups need it: its dotted keys and its group choices."""

    def __init__(self, cfg: DictConfig):
        plain = OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]), resolve=False)
        self.top = set(plain)
        self.keys = _dotted_keys(plain)
        choices = OmegaConf.to_container(cfg.hydra.runtime.choices, resolve=False) if "hydra" in cfg else {}
        self.choices = {str(k): v for k, v in choices.items() if isinstance(v, str)}
        self.family = self.choices.get("family") or str(OmegaConf.select(cfg, "family.name", default="?"))


class _Explainer:
    def __init__(self, overrides: list[str], multirun: bool, sweep: list[str] | None):
        from hydra.core.override_parser.overrides_parser import OverridesParser

        self.overrides = overrides
        self.multirun = multirun
        self.sweep = sweep
        self._parser = OverridesParser.create()
        self._configs: dict[tuple[str, ...], _Config | None] = {}

    # -- the errors --------------------------------------------------------------------------
    def explain(self, err: BaseException) -> str:
        text = str(err)
        if isinstance(err, MissingConfigException) and err.missing_cfg_file and "/" in err.missing_cfg_file:
            return self._missing_option(err.missing_cfg_file)
        if isinstance(err, OverrideParseException):
            return self._unparsable(err)
        match = _OVERRIDE.search(text)
        if match:
            return self._unknown_key(match.group(1))
        match = _DELETE.search(text)
        if match:
            return self._unknown_key(match.group(1), deleting=True)
        match = _NO_GROUP.search(text)
        if match:
            return self._foreign_group(match.group(2), match.group(1))
        match = _APPEND.search(text)
        if match:
            key = match.group(1)
            line = next((o for o in self.overrides if o.startswith("+") and o[1:].split("=")[0] == key), f"+{key}=...")
            return f"{line}: {key} is already a key of the config: set it without + ({line.lstrip('+')})"
        match = _AMBIGUOUS.search(text)
        if match:
            line = match.group(1)
            key, _, value = line.partition("=")
            return (
                f"{line} is a sweep, which needs a multirun: add -m to run one cell per value "
                f"(or, for one value that is a list, write {key}=[{value}])"
            )
        match = _NEEDS_MULTIRUN.search(text)
        if match:
            return f"{match.group(1)} is a sweep, which needs a multirun: add -m to run one cell per value"
        return _flat(err)

    def _missing_option(self, missing: str) -> str:
        """``experiment=nope``: the override and every option of its group, sub-groups included."""
        key, value = self._override_of(missing)
        with _running_hydra() as hydra:
            repository = hydra.config_loader.repository
            options = _options(repository, key)
        if not options:
            return f"{key}={value} is not an option of {key} (conf/{key}/ holds none)"
        close = _closest(value, options, cutoff=0.6)
        hint = f"did you mean {_either(close)}? " if close else ""
        groups: dict[str, list[str]] = {}
        for option in options:
            groups.setdefault(option.rpartition("/")[0], []).append(option)
        listing = "; ".join(", ".join(group) for group in groups.values())
        return f"{key}={value} is not an option of {key}; {hint}the options (conf/{key}/): {listing}"

    def _override_of(self, missing: str) -> tuple[str, str]:
        """The group override that names the missing config file ``group/option``."""
        for text in self.overrides:
            key, sep, value = text.lstrip("+~").partition("=")
            if sep and "@" not in key:
                for item in self._values(text):
                    if f"{key}/{item}" == missing:
                        return key, item
        group, _, option = missing.rpartition("/")
        return group, option

    def _values(self, text: str) -> list[str]:
        """The values of one override as strings (each of a sweep's)."""
        try:
            override = self._parser.parse_override(text)
        except Exception:
            return [text.partition("=")[2]]
        if override.is_sweep_override():
            return list(override.sweep_string_iterator())
        return [override.get_value_element_as_str()]

    def _unparsable(self, err: OverrideParseException) -> str:
        line = getattr(err, "override", None) or next((text for text in self.overrides if not self._parses(text)), None)
        hydra_says = " ".join(re.sub(r"\s*See (https://\S+) for details", "", str(err)).split())
        grammar = re.search(r"https://\S+", str(err))
        where = f"; the grammar: {grammar.group(0)}" if grammar else ""
        if not line:
            return f"{hydra_says}{where}"
        return (
            f"{line}: not an override Hydra can read ({hydra_says}{where}); quote a value that holds "
            f"commas, brackets or parentheses: key='value'"
        )

    def _parses(self, text: str) -> bool:
        try:
            self._parser.parse_override(text)
        except Exception:
            return False
        return True

    def _foreign_group(self, group: str, where: str | None) -> str:
        """``market=trace`` on an auction cell: a group that is not in this cell's defaults list."""
        if where and where.startswith("experiment/"):
            experiment = where[len("experiment/") :]
            picked = [o for o in self.overrides if o.lstrip("+").split("=")[0] == "family"]
            drop = f": drop {', '.join(picked)} (the experiment picks its family)" if picked else ""
            return (
                f"experiment={experiment} sets the config group {group}, which this cell's family does not have{drop}"
            )
        line = next((o for o in self.overrides if o.lstrip("+").split("=")[0] == group), f"{group}=...")
        base = self._base([group])
        if base is None:
            raise LookupError(group)
        owners = [name for name, cfg in self._families().items() if name != base.family and group in cfg.choices]
        where = f"{line}: {group} is not a config group of the {base.family} family's cells"
        if not owners:
            return where
        return f"{where} ({group} is a config group of {_plural(owners)}: {self._switch(owners, base, group)})"

    def _unknown_key(self, key: str, deleting: bool = False) -> str:
        """A key the cell's config does not have: the family or the group option that has it,
        else the closest keys of the cell."""
        shown = f"~{key}" if deleting else key
        if key == "hydra" or key.startswith("hydra."):
            return f"{shown} is not a key of Hydra's config (hydra.*; python -m sweep --cfg hydra shows them)"
        base = self._base([key])
        if base is None:
            raise LookupError(key)
        family, section = base.family, key.split(".")[0]
        where = f"{shown} is not a key of the {family} family's cells"
        others = {name: cfg for name, cfg in self._families().items() if name != family}
        holders = [name for name, cfg in others.items() if key in cfg.keys]
        if section not in base.top:
            if holders:
                return f"{where} ({section} is a section of {_plural(holders)}: {self._switch(holders, base, key)})"
            sections = [name for name, cfg in others.items() if section in cfg.top]
            if sections:
                return f"{where}, nor of {_plural(sections)}, whose section {section} does not have it either"
            return where + _suggestion(key, base)
        options = self._group_options_with(key, base)
        if options:
            adds = _either([f"{group}={option}" for group, option in options])
            return f"{where} with {_current(base, options)} ({key} is one with {adds}: add {adds})"
        if holders:
            return f"{where} ({key} is a key of {_plural(holders)}: {self._switch(holders, base, key)})"
        return where + _suggestion(key, base)

    # -- advice ------------------------------------------------------------------------------
    def _switch(self, families: list[str], base: _Config, what: str) -> str:
        """How to run with one of ``families`` instead of the family of ``base``."""
        swept = self.sweep is not None and any(
            text.split("=")[0] == "family" and self._is_sweep(text) for text in self.sweep
        )
        if swept:
            return f"run the {base.family} cells without {what}, in a multirun of their own"
        experiment = base.choices.get("experiment")
        adds = _either([f"family={name}" for name in families])
        if experiment:
            return f"{adds} without experiment={experiment}"
        return f"add {adds}"

    def _is_sweep(self, text: str) -> bool:
        try:
            return self._parser.parse_override(text).is_sweep_override()
        except Exception:
            return False

    # -- compositions ------------------------------------------------------------------------
    def _compose(self, overrides: Sequence[str]) -> _Config | None:
        """The config of ``overrides`` (no sweeps), None if it does not compose; each composed once."""
        from hydra.types import RunMode

        key = tuple(overrides)
        if key not in self._configs:
            try:
                with _running_hydra() as hydra:
                    cfg = hydra.compose_config(
                        CONFIG_NAME, overrides=list(overrides), run_mode=RunMode.RUN, with_log_configuration=False
                    )
                self._configs[key] = _Config(cfg)
            except Exception:
                self._configs[key] = None
        return self._configs[key]

    def _plain(self, texts: Sequence[str]) -> list[str]:
        """``texts`` with each sweep at its first value (the config of the multirun's first cell)."""
        plain = []
        for text in texts:
            if self.multirun and self._is_sweep(text):
                plain.append(f"{text.split('=')[0]}={self._values(text)[0]}")
            else:
                plain.append(text)
        return plain

    def _base(self, keys: Sequence[str]) -> _Config | None:
        """The config without the overrides of ``keys``, nor any other override that does not
        compose on its own (a second typo): what the cell would be without its mistakes."""
        kept = [text for text in self._plain(self.overrides) if text.lstrip("+~").partition("=")[0] not in keys]
        base = self._compose(kept)
        while base is None and kept:
            bad = next((text for text in kept if self._compose([text]) is None), None)
            if bad is None:
                return None
            kept.remove(bad)
            base = self._compose(kept)
        return base

    def _families(self) -> dict[str, _Config]:
        """Each family of conf/family/ as it composes with nothing else."""
        with _running_hydra() as hydra:
            names = hydra.config_loader.repository.get_group_options("family")
        families = {name: self._compose([f"family={name}"]) for name in names}
        return {name: cfg for name, cfg in families.items() if cfg is not None}

    def _group_options_with(self, key: str, base: _Config) -> list[tuple[str, str]]:
        """(group, option) of the cell's other config groups whose option has ``key``."""
        found = []
        with _running_hydra() as hydra:
            repository = hydra.config_loader.repository
            for group, current in base.choices.items():
                if group in _NOT_OFFERED or "/" in group or "@" in group:
                    continue
                for option in repository.get_group_options(group):
                    if option == current:
                        continue
                    kept = [
                        text
                        for text in self._plain(self.overrides)
                        if text.lstrip("+~").partition("=")[0] not in (key, group)
                    ]
                    cfg = self._compose([*kept, f"{group}={option}"])
                    if cfg is not None and key in cfg.keys:
                        found.append((group, option))
        return found


def _current(base: _Config, options: list[tuple[str, str]]) -> str:
    return ", ".join(dict.fromkeys(f"{group}={base.choices.get(group)}" for group, _ in options))


def _options(repository: Any, group: str) -> list[str]:
    """Every option of ``group``, then each sub-group's as ``sub/option``."""
    from hydra.core.object_type import ObjectType

    options = sorted(repository.get_group_options(group, results_filter=ObjectType.CONFIG))
    for sub in sorted(repository.get_group_options(group, results_filter=ObjectType.GROUP)):
        options += [f"{sub}/{option}" for option in _options(repository, f"{group}/{sub}")]
    return options


def _closest(word: str, candidates: Sequence[str], cutoff: float) -> list[str]:
    """The candidates most like ``word`` (difflib's ratio at least ``cutoff`` and within 0.05 of the
    best), best first, at most three."""
    scored = sorted(((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in candidates), reverse=True)
    scored = [(score, c) for score, c in scored if score >= cutoff]
    return [c for score, c in scored if score >= scored[0][0] - 0.05][:3] if scored else []


def _suggestion(key: str, base: _Config) -> str:
    """``; did you mean job.deadline?`` from the cell's own keys, else the keys of the section."""
    depth = key.count(".")
    close = _closest(key, [k for k in base.keys if k.count(".") == depth], cutoff=0.7)
    if close:
        return f"; did you mean {_either(close)}?"
    parent = key.rpartition(".")[0]
    if parent and isinstance(base.keys.get(parent), dict):
        return f" ({parent}'s keys: {', '.join(base.keys[parent])})"
    if not parent:
        return f" (its top-level keys: {', '.join(sorted(base.top - {'hydra'}))})"
    return ""
