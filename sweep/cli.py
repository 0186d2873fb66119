"""Shared pieces of the command-line entry points: error exits and output clean-up."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

# Files Hydra writes before any work starts; a folder holding only these holds no results.
_HYDRA_ONLY = {".hydra", "multirun.yaml", "main.log"}


def remove_if_no_results(folder: Path) -> None:
    """Remove an output folder that holds nothing but Hydra's own bookkeeping, and empty parents."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    if any(child.name not in _HYDRA_ONLY and not child.name.endswith(".log") for child in folder.iterdir()):
        return
    shutil.rmtree(folder, ignore_errors=True)
    # outputs/DATE/ and outputs/ themselves, when this run made them and left them empty
    for parent in list(folder.parents)[:2]:
        if parent.is_dir() and parent != Path.cwd() and not any(parent.iterdir()):
            parent.rmdir()


def exit_with_error(message: str, code: int = 2) -> None:
    sys.stderr.write(f"Error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(code)
