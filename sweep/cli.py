"""Shared pieces of the command-line entry points: error exits and output clean-up."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

# Files Hydra writes before any work starts; a folder holding only these holds no results.
_HYDRA_ONLY = {".hydra", "multirun.yaml", "main.log"}
_ENGINE_REACHED = False
_COMMAND: list[str] | None = None  # the command line as typed (with --extend), for the resume command
_EXTEND = False


def take_command_line(argv: list[str]) -> list[str]:
    """Remember the command line as typed and return it without the project's own flags
    (``--extend``), which Hydra's parser does not know."""
    global _COMMAND, _EXTEND
    from .sweep_dir import strip_extend_flag

    _COMMAND = list(argv)
    kept, _EXTEND = strip_extend_flag(argv[1:])
    return [argv[0], *kept]


def extend_requested() -> bool:
    return _EXTEND


def mark_engine_reached() -> None:
    """Called where Hydra hands over to the project (task function, sweeper, launcher): an exit
    before it means Hydra rejected the command line or the config."""
    global _ENGINE_REACHED
    _ENGINE_REACHED = True


def engine_reached() -> bool:
    return _ENGINE_REACHED


def check_output_dirs(argv: list[str]) -> list[Path]:
    """`hydra.run.dir` / `hydra.sweep.dir` given on the command line must not name a file;
    returns the folders named."""
    folders = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+") in ("hydra.run.dir", "hydra.sweep.dir"):
            exit_if_not_a_folder(key.lstrip("+"), Path(value))
            folders.append(Path(value))
    return folders


def exit_if_not_a_folder(key: str, path: Path) -> None:
    """An output dir that exists must be a folder."""
    if path.exists() and not path.is_dir():
        exit_with_error(f"{key}: {path} exists and is not a folder")


def run_cells_or_exit(cells, out_dir: Path, runner, tracking, **kwargs) -> None:
    """`engine.run_cells`; a config error found only once running (a Ray cluster refusing the
    driver) exits with status 2 and leaves no output dir without results; Ctrl-C ends with one
    line saying how many cells are complete and how to resume."""
    from .engine import run_cells
    from .errors import ConfigError
    from .sweep_dir import completion

    try:
        run_cells(cells, out_dir, runner, tracking, extend=_EXTEND, return_results=False, **kwargs)
    except ConfigError as err:
        remove_if_no_results(out_dir)
        exit_with_error(str(err))
    except KeyboardInterrupt as err:
        complete, total = completion(Path(out_dir)) or (0, len(cells))
        interrupted(
            f"{complete:,} of {counted(total, 'cell')} complete in {out_dir}; "
            f"resume with: {resume_command(_COMMAND or sys.argv, Path(out_dir))}",
            err,
        )


def resume_command(argv: list[str], out_dir: Path) -> str:
    """The command that reruns this one into ``out_dir`` (complete cells are reused)."""
    args = list(argv[1:])
    key = "hydra.sweep.dir" if any(arg in ("-m", "--multirun") for arg in args) else "hydra.run.dir"
    args = [arg for arg in args if not arg.lstrip("+").startswith(f"{key}=")] + [f"{key}={out_dir}"]
    return shlex.join([Path(sys.executable).name, "-m", "sweep", *args])


def counted(number: int, noun: str) -> str:
    """``1 cell``, ``2 cells``, ``1,200 cells``."""
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def interrupted(message: str, err: KeyboardInterrupt | None = None) -> None:
    """End a stop signal with one line instead of a traceback, and the status a shell reports for
    it (130 SIGINT, 143 SIGTERM, 129 SIGHUP; sweep/stop_signals.py)."""
    from .stop_signals import as_interrupted

    stop = as_interrupted(err if err is not None else KeyboardInterrupt())
    sep = " " if message.startswith("while") else ": "
    sys.stderr.write(f"\nInterrupted ({stop.name}){sep}{message}\n")
    sys.stderr.flush()
    # No ray.shutdown(): Ray's own processes may have got the signal too (`timeout` and a terminal's
    # Ctrl-C reach the process group) and its shutdown would wait on them. The entry point ends the
    # process (stop_signals.exit_now), and a local Ray's processes share the driver's fate.
    raise SystemExit(stop.exit_code)


def remove_if_no_results(folder: Path) -> None:
    """Remove an output folder that holds nothing but Hydra's own bookkeeping, and empty parents."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    if any(child.name not in _HYDRA_ONLY and not child.name.endswith(".log") for child in folder.iterdir()):
        return
    shutil.rmtree(folder, ignore_errors=True)
    # outputs/DATE/ and outputs/ (or multirun/...) when left empty; never a folder outside the
    # launch directory, which the user may have made
    cwd = Path.cwd().resolve()
    for parent in list(folder.resolve().parents)[:2]:
        if parent != cwd and cwd in parent.parents and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def exit_with_error(message: str, code: int = 2) -> None:
    sys.stderr.write(f"Error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)
