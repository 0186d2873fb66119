"""Compare two folders of reproduction reports (for example the committed `reports/auction/`
and a rerun after a change of seeds): for every CSV that both hold and that has `<x>_mean` and
`<x>_ci95` columns, the rows are matched on their key columns and each mean is compared with
the other within the two runs' 95% intervals combined (sqrt(ci_old^2 + ci_new^2), the half-width
of the difference of two independent means).

    python -m reproduction.compare OLD_DIR NEW_DIR [--csv out.csv]

Rows whose interval is missing (one replicate) are listed with `agree` empty. Exit status 0.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

KEY_COLUMNS_AFTER = ("mechanism", "group", "policy")


def measured(frame: pd.DataFrame) -> list[str]:
    """The `x` of every `x_mean` column with an `x_ci95` beside it."""
    return [
        c[: -len("_mean")]
        for c in frame.columns
        if c.endswith("_mean") and f"{c[: -len('_mean')]}_ci95" in frame.columns
    ]


def keys(frame: pd.DataFrame) -> list[str]:
    """The columns that name a row: everything up to the mechanism / group / policy columns."""
    last = max((i for i, c in enumerate(frame.columns) if c in KEY_COLUMNS_AFTER), default=-1)
    return list(frame.columns[: last + 1])


def compare_frames(name: str, old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    out = []
    on = keys(old)
    if not on or on != keys(new):
        return pd.DataFrame()
    merged = old.merge(new, on=on, suffixes=("_old", "_new"))
    for quantity in measured(old):
        if quantity not in measured(new):
            continue
        for _, row in merged.iterrows():
            mo, mn = row[f"{quantity}_mean_old"], row[f"{quantity}_mean_new"]
            co, cn = row[f"{quantity}_ci95_old"], row[f"{quantity}_ci95_new"]
            width = math.hypot(co, cn) if pd.notna(co) and pd.notna(cn) else math.nan
            diff = mn - mo
            out.append(
                {
                    "report": name,
                    "row": ", ".join(f"{k}={row[k]}" for k in on),
                    "quantity": quantity,
                    "old_mean": mo,
                    "old_ci95": co,
                    "new_mean": mn,
                    "new_ci95": cn,
                    "difference": diff,
                    "combined_ci95": width,
                    "agree": (abs(diff) <= width) if not math.isnan(width) else None,
                }
            )
    return pd.DataFrame(out)


def compare_dirs(old_dir: Path, new_dir: Path) -> pd.DataFrame:
    frames = []
    for path in sorted(Path(new_dir).glob("*.csv")):
        other = Path(old_dir) / path.name
        if other.is_file():
            frames.append(compare_frames(path.stem, pd.read_csv(other), pd.read_csv(path)))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reproduction.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("old_dir", type=Path)
    parser.add_argument("new_dir", type=Path)
    parser.add_argument("--csv", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    for folder in (args.old_dir, args.new_dir):
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
    table = compare_dirs(args.old_dir, args.new_dir)
    if table.empty:
        print("no report with <x>_mean and <x>_ci95 columns in both folders")
        return 0
    with pd.option_context("display.width", 200, "display.max_rows", None, "display.max_colwidth", 60):
        print(table.drop(columns=["quantity"]).to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    judged = table["agree"].dropna()
    print(
        f"{int(judged.sum())} of {len(judged)} means agree within the combined 95% interval"
        f" ({len(table) - len(judged)} without an interval)"
    )
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
