"""Regenerate data/core_lcdb_curves.csv (real learning curves for the `core` family) from the
LCDB 1.0 package's source distribution, without installing or importing the package.

Source: the `lcdb` package on PyPI, version 0.1.0 (MIT licence, Felix Mohr; the data of Mohr
et al., "LCDB 1.0: An Extensive Learning Curves Database for Classification Tasks", ECML PKDD
2022), file lcdb-0.1.0.tar.gz (sha256 450ea69b249866298653f718d66a825e3d19a4024dd4ff140b89f2e04d4777ae,
68,153,129 bytes). Get it with the ordinary client, no install:

    pip download lcdb==0.1.0 --no-deps -d .

then, from the repository root (the tarball's path defaults to lcdb-0.1.0.tar.gz in the
current directory):

    python data/derive_lcdb_curves.py write [lcdb-0.1.0.tar.gz]   # writes data/core_lcdb_curves.csv
    python data/derive_lcdb_curves.py check [lcdb-0.1.0.tar.gz]   # byte-compares with the shipped file

The package's __init__ imports packages it does not declare (openml, func_timeout), so the
script never imports it: it reads two members of the tarball with `tarfile`:

- lcdb-0.1.0/lcdb/database-logloss.csv (153,374,453 bytes, 1,953,371 rows): openmlid, learner,
  size_train (the anchor: training-set size), size_test, outer_seed, inner_seed, traintime
  (seconds to fit at that anchor), score_train, score_valid, score_test (log-loss, rounded to
  4 decimals by LCDB).
- lcdb-0.1.0/lcdb/datasets.csv: openmlid -> Name (the OpenML data set name).

Selection (constants below; data/README.md explains why):

- loss = score_valid, the validation log-loss. The training log-loss of these batch-fitted
  learners is not a learning curve: it is measured on the learner's own training sample and
  rises with the anchor (logistic regression: median 0.09 at 16 samples, 0.35 at the last
  anchor) or is 0 throughout (trees). The paper's training loss is the cross-entropy of each
  new batch before the model has fitted it, which is what a held-out loss measures.
- learners: the five in LEARNERS (predict_proba, so the log-loss is a real probability loss;
  learners without it get 0/1 "probabilities" in LCDB and a log-loss of about 34.5 x error).
- repetitions: outer_seed 0..4 with inner_seed 0 (five train/validation/test splits; within
  one, the training set at an anchor is the first `anchor` rows of one shuffled order, so the
  anchors of a seed are one growing training set).
- a curve (data set, learner) qualifies when all five seeds have the same anchors, every loss
  is >= MIN_LOSS, and the mean over the seeds strictly decreases over at least MIN_RUN
  consecutive anchors; a data set qualifies when its last anchor is in LAST_ANCHOR and the
  curves of all five learners qualify (45 of the 248 data sets pass without the anchor window,
  22 with it).
- the DATASETS qualifying data sets with the longest decreasing run (the smallest over its five
  learners), ties by OpenML id.

Output: columns curve, openmlid, dataset, learner, anchor, seed, loss, fit_seconds; rows sorted
by openmlid, learner, seed, anchor; loss and fit_seconds with 4 decimals (LCDB's own
precision); comma-separated with CRLF after every line, no BOM (as the other files in data/).
Needs pandas only.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import io
import sys
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parent


def compare_bytes(name: str, made: bytes, against) -> bool:
    """The sibling script's byte comparison (data/derive_traces.py `_compare`), loaded by path:
    data/ is not a package, and this script is run as a file or loaded by path in tests."""
    spec = importlib.util.spec_from_file_location("derive_traces", DATA / "derive_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._compare(name, made, against)


OUTPUT = DATA / "core_lcdb_curves.csv"
SDIST = "lcdb-0.1.0.tar.gz"
SDIST_SHA256 = "450ea69b249866298653f718d66a825e3d19a4024dd4ff140b89f2e04d4777ae"
MEMBER_CURVES = "lcdb-0.1.0/lcdb/database-logloss.csv"
MEMBER_DATASETS = "lcdb-0.1.0/lcdb/datasets.csv"

LEARNERS = (
    "sklearn.linear_model.LogisticRegression",
    "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
    "sklearn.ensemble.GradientBoostingClassifier",
    "sklearn.ensemble.RandomForestClassifier",
    "sklearn.neural_network.MLPClassifier",
)
OUTER_SEEDS = (0, 1, 2, 3, 4)
INNER_SEED = 0
MIN_LOSS = 1e-3  # 4-decimal values below this carry too few digits for a log scale
MIN_RUN = 6  # anchors over which the mean curve strictly decreases
LAST_ANCHOR = (2000, 70000)  # training-set sizes that fit the paper's horizons (N_k d_k)
DATASETS = 10
COLUMNS = ("curve", "openmlid", "dataset", "learner", "anchor", "seed", "loss", "fit_seconds")
USECOLS = ["openmlid", "learner", "size_train", "outer_seed", "inner_seed", "traintime", "score_valid"]


def short_name(learner: str) -> str:
    """sklearn.linear_model.LogisticRegression -> LogisticRegression."""
    return learner.rsplit(".", 1)[-1]


def read_sdist(path) -> tuple[pd.DataFrame, dict[int, str]]:
    """The log-loss rows of LEARNERS and the seeds used, and the data set names."""
    with tarfile.open(path, "r:gz") as tar:
        names = pd.read_csv(tar.extractfile(MEMBER_DATASETS), usecols=["openmlid", "Name"])
        parts = []
        for chunk in pd.read_csv(tar.extractfile(MEMBER_CURVES), usecols=USECOLS, chunksize=500_000):
            keep = (
                chunk["learner"].isin(LEARNERS)
                & chunk["outer_seed"].isin(OUTER_SEEDS)
                & (chunk["inner_seed"] == INNER_SEED)
            )
            parts.append(chunk[keep])
    rows = pd.concat(parts, ignore_index=True)
    return rows, {int(i): str(n) for i, n in zip(names["openmlid"], names["Name"])}


def longest_decreasing_run(values) -> int:
    """The most consecutive points over which `values` strictly decreases (1 for no decrease)."""
    best = run = 1
    for before, after in zip(values[:-1], values[1:]):
        run = run + 1 if after < before else 1
        best = max(best, run)
    return best


def curve_run(frame: pd.DataFrame) -> int | None:
    """The decreasing run of one (data set, learner) curve's mean, or None if it does not
    qualify (a seed missing, anchors differing between seeds, a loss below MIN_LOSS)."""
    table = frame.pivot_table(index="size_train", columns="outer_seed", values="score_valid", aggfunc="count")
    if sorted(table.columns) != list(OUTER_SEEDS) or (table != 1).to_numpy().any():
        return None
    loss = frame.pivot(index="size_train", columns="outer_seed", values="score_valid")
    if not np.isfinite(loss.to_numpy()).all() or loss.to_numpy().min() < MIN_LOSS:
        return None
    return longest_decreasing_run(loss.mean(axis=1).to_numpy())


def select(rows: pd.DataFrame) -> list[int]:
    """The OpenML ids of the selected data sets, in selection order."""
    ranked = []
    for openmlid, frame in rows.groupby("openmlid", sort=True):
        last = int(frame["size_train"].max())
        if not LAST_ANCHOR[0] <= last <= LAST_ANCHOR[1]:
            continue
        runs = []
        for learner in LEARNERS:
            part = frame[frame["learner"] == learner]
            run = curve_run(part) if len(part) else None
            if run is None or run < MIN_RUN:
                break
            runs.append(run)
        else:
            ranked.append((-min(runs), int(openmlid)))
    ranked.sort()
    return [openmlid for _, openmlid in ranked[:DATASETS]]


def curve_table(rows: pd.DataFrame, names: dict[int, str]) -> pd.DataFrame:
    """The shipped table: the selected data sets x LEARNERS x seeds x anchors, sorted."""
    chosen = select(rows)
    part = rows[rows["openmlid"].isin(chosen)].copy()
    part["learner"] = part["learner"].map(short_name)
    part = part.sort_values(["openmlid", "learner", "outer_seed", "size_train"], kind="stable")
    return pd.DataFrame(
        {
            "curve": [f"openml_{i}/{learner}" for i, learner in zip(part["openmlid"], part["learner"])],
            "openmlid": part["openmlid"].astype(int).to_numpy(),
            "dataset": [names.get(int(i), f"openml_{int(i)}") for i in part["openmlid"]],
            "learner": part["learner"].to_numpy(),
            "anchor": part["size_train"].astype(int).to_numpy(),
            "seed": part["outer_seed"].astype(int).to_numpy(),
            "loss": part["score_valid"].to_numpy(dtype=float),
            "fit_seconds": part["traintime"].to_numpy(dtype=float),
        }
    )


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """Header, comma-separated rows (quoted only where needed), floats with 4 decimals, CRLF."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for row in frame[list(COLUMNS)].itertuples(index=False):
        writer.writerow(
            [
                row.curve,
                int(row.openmlid),
                row.dataset,
                row.learner,
                int(row.anchor),
                int(row.seed),
                f"{row.loss:.4f}",
                f"{row.fit_seconds:.4f}",
            ]
        )
    return out.getvalue().encode("utf-8")


def sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def summary(frame: pd.DataFrame) -> str:
    """One line per data set: id, name, anchors, last anchor."""
    lines = []
    for openmlid, part in frame.groupby("openmlid", sort=True):
        anchors = sorted(set(part["anchor"]))
        lines.append(
            f"  openml_{openmlid} {part['dataset'].iloc[0]}: {len(anchors)} anchors {anchors[0]}..{anchors[-1]}"
        )
    return "\n".join(lines)


def make(sdist) -> tuple[bytes, pd.DataFrame]:
    digest = sha256(sdist)
    if digest != SDIST_SHA256:
        print(f"warning: {sdist} has sha256 {digest}, not the {SDIST_SHA256} this file was made from", file=sys.stderr)
    rows, names = read_sdist(sdist)
    frame = curve_table(rows, names)
    return csv_bytes(frame), frame


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The source and the selection are in this file's docstring and data/README.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("write", help="write data/core_lcdb_curves.csv (or -o)")
    check = sub.add_parser("check", help="regenerate in memory and byte-compare with the shipped file")
    for p in (write, check):
        p.add_argument("sdist", nargs="?", default=SDIST, help=f"the lcdb sdist (default {SDIST})")
    write.add_argument("-o", "--output", type=Path, default=OUTPUT)
    check.add_argument("--against", type=Path, default=OUTPUT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not Path(args.sdist).is_file():
        parser.error(f"{args.sdist}: not found (pip download lcdb==0.1.0 --no-deps -d .)")
    made, frame = make(args.sdist)
    if args.command == "check":
        return 0 if compare_bytes(OUTPUT.name, made, args.against) else 1
    args.output.write_bytes(made)
    print(
        f"wrote {args.output} ({len(made)} bytes, {len(frame)} rows, "
        f"{frame['curve'].nunique()} curves)\n{summary(frame)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
