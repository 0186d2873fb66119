"""Shared pieces of the command-line entry points: error exits and output clean-up."""
from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

# Files Hydra writes before any work starts; a folder holding only these holds no results.
_HYDRA_ONLY = {".hydra", "multirun.yaml", "main.log"}
_ENGINE_REACHED = False


def mark_engine_reached() -> None:
    """Called where Hydra hands over to the project (task function, sweeper, launcher): an exit
    before it means Hydra rejected the command line or the config."""
    global _ENGINE_REACHED
    _ENGINE_REACHED = True


def engine_reached() -> bool:
    return _ENGINE_REACHED


def check_output_dirs(argv: list[str]) -> None:
    """`hydra.run.dir` / `hydra.sweep.dir` given on the command line must not name a file."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+") in ("hydra.run.dir", "hydra.sweep.dir"):
            exit_if_not_a_folder(key.lstrip("+"), Path(value))


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
    from .results import CELL_META

    try:
        run_cells(cells, out_dir, runner, tracking, **kwargs)
    except ConfigError as err:
        remove_if_no_results(out_dir)
        exit_with_error(str(err))
    except KeyboardInterrupt:
        complete = sum((Path(out_dir) / cell.subdir / CELL_META).exists() for cell in cells)
        interrupted(f"{complete:,} of {len(cells):,} cells are complete in {out_dir}; resume with: "
                    f"{resume_command(sys.argv, Path(out_dir))}")


def resume_command(argv: list[str], out_dir: Path) -> str:
    """The command that reruns this one into ``out_dir`` (complete cells are reused)."""
    args = list(argv[1:])
    key = "hydra.sweep.dir" if any(arg in ("-m", "--multirun") for arg in args) else "hydra.run.dir"
    args = [arg for arg in args if not arg.lstrip("+").startswith(f"{key}=")] + [f"{key}={out_dir}"]
    return shlex.join([Path(sys.executable).name, "-m", "sweep", *args])


def interrupted(message: str) -> None:
    """End a Ctrl-C with one line instead of a traceback (status 130, as a shell reports SIGINT)."""
    sys.stderr.write(f"\nInterrupted {message}\n" if message.startswith("while") else f"\nInterrupted: {message}\n")
    sys.stderr.flush()
    raise SystemExit(130)


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
