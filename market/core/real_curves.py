"""Real learning curves as thread loss curves (paper 002, Sec. 2.1 and 3.1; docs/core/real_curves.md).

The data: `data/core_lcdb_curves.csv`, validation log-loss against training-set size (anchors)
of five scikit-learn learners on ten OpenML data sets, five repetitions (seeds) each, from
LCDB 1.0 (data/README.md; `data/derive_lcdb_curves.py` regenerates it). Any file with the same
columns can be used instead.

File format (UTF-8, BOM and CRLF allowed; `market.common.csv_trace`): required columns `curve`
(an id), `anchor` (training-set size, integer >= 1), `seed` (the repetition, integer) and
`loss` (finite, > 0); optional `dataset`, `learner` (the same on every row of a curve) and
`fit_seconds` (finite, >= 0). Within a curve and seed the anchors strictly increase in file
order and there are at least two; other columns are ignored.

Mapping to a thread (`RealCurve`):

- data: a thread's data s (data units, market/core/threads.py) is s / units_per_sample
  training samples; `units_per_sample` = 1 makes a data unit one sample.
- shape: between two anchors log(loss) is linear in log(size) (a power law per segment, the
  form of eq. 3.1); beyond the last anchor the loss is held at the last anchor's value (a
  thread reaches a threshold only if the real curve does). The head: with `head="peak"`
  (default) the loss is held at the curve's largest value for every size up to the anchor
  where it occurs (half the LCDB seed curves rise over their first anchors: the validation
  log-loss of a learner fitted on 16-64 samples is erratic, and a thread must not reach its
  threshold by learning less); with `head="clamp"` it is held at the first anchor's value
  below the first anchor. Neither extrapolates below the data.
- noise: the observed curve is one seed's curve, picked when the world is built
  (`noise="seed"`): the real spread between training runs, deterministic in s. `true_loss`
  is the mean curve: at every anchor of any seed, the mean over the seeds of their raw
  curves (each interpolated log-log), then shaped as above. `noise="none"` observes the mean.

`real_bundle` draws K threads from a table with the paper's Sec. 4.3 rule (docs/core/real_curves.md).
"""

from __future__ import annotations

import bisect
import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from market.common import fields as F
from market.common.csv_trace import TraceError, parse_int, read_rows, read_text
from market.core.threads import Bundle, Thread

__all__ = [
    "DEFAULT_PATH",
    "CurveTable",
    "SeedCurve",
    "RealCurve",
    "RealBundleParams",
    "load_curves",
    "real_bundle",
]

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "data" / "core_lcdb_curves.csv"
REQUIRED_COLUMNS = ("curve", "anchor", "seed", "loss")
OPTIONAL_COLUMNS = ("dataset", "learner", "fit_seconds")
NOISES = ("seed", "none")
HEADS = ("peak", "clamp")
CALIBRATIONS = ("observed", "mean")
THRESHOLD_MARGIN = 1e-9
DEADLINE_RULES = ("cumulative", "solo")


# --- the table -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SeedCurve:
    """One repetition of one curve: strictly increasing anchors (samples) and their losses."""

    seed: int
    anchors: np.ndarray  # int64 (m,), m >= 2
    loss: np.ndarray  # float (m,), > 0
    fit_seconds: np.ndarray | None  # float (m,), or None when the file has no times


@dataclass(frozen=True, eq=False)
class CurveTable:
    """All repetitions of one curve (one learner on one data set)."""

    curve: str
    dataset: str
    learner: str
    seeds: tuple[SeedCurve, ...]  # sorted by seed
    mean_anchors: np.ndarray = field(init=False)  # int64: every anchor of any seed
    mean_loss: np.ndarray = field(init=False)  # float: the mean curve there

    def __post_init__(self) -> None:
        anchors = np.unique(np.concatenate([s.anchors for s in self.seeds]))
        values = np.mean(
            [_Piecewise(s.anchors.astype(float), s.loss).many(anchors.astype(float)) for s in self.seeds], axis=0
        )
        object.__setattr__(self, "mean_anchors", anchors)
        object.__setattr__(self, "mean_loss", np.asarray(values, dtype=float))

    @property
    def seed_ids(self) -> tuple[int, ...]:
        return tuple(s.seed for s in self.seeds)

    @property
    def first_anchor(self) -> int:
        return int(self.mean_anchors[0])

    @property
    def last_anchor(self) -> int:
        return int(self.mean_anchors[-1])

    def seed_curve(self, seed: int) -> SeedCurve:
        for s in self.seeds:
            if s.seed == seed:
                return s
        raise KeyError(f"curve {self.curve!r} has no seed {seed!r} (seeds: {list(self.seed_ids)})")


def _header(path) -> list[str]:
    text = read_text(path)
    first = next(csv.reader(io.StringIO(text, newline="")), [])
    return [name.strip() for name in first]


def _positive_float(text: str, minimum_ok_zero: bool = False) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0 or (value == 0 and not minimum_ok_zero):
        return None
    return value


def load_curves(path=None) -> dict[str, CurveTable]:
    """Every curve of the file (default: the shipped `data/core_lcdb_curves.csv`), keyed and
    ordered by curve id. The whole file is validated before anything is returned; a bad file
    raises TraceError naming the file and the line."""
    path = os.fspath(DEFAULT_PATH if path is None else path)
    header = _header(path)
    optional = tuple(c for c in OPTIONAL_COLUMNS if c in header)
    names: dict[str, dict[str, tuple[str, int]]] = {}  # curve -> column -> (value, line)
    rows: dict[tuple[str, int], dict] = {}  # (curve, seed) -> lists
    for line, values in read_rows(path, REQUIRED_COLUMNS + optional):
        curve = values["curve"]
        anchor = parse_int(values["anchor"])
        if anchor is None or anchor < 1:
            raise TraceError(path, line, f"anchor must be an integer >= 1, got {values['anchor']!r}")
        seed = parse_int(values["seed"])
        if seed is None:
            raise TraceError(path, line, f"seed must be an integer, got {values['seed']!r}")
        loss = _positive_float(values["loss"])
        if loss is None:
            raise TraceError(path, line, f"loss must be a finite number > 0, got {values['loss']!r}")
        fit = None
        if "fit_seconds" in values:
            fit = _positive_float(values["fit_seconds"], minimum_ok_zero=True)
            if fit is None:
                raise TraceError(path, line, f"fit_seconds must be a finite number >= 0, got {values['fit_seconds']!r}")
        seen = names.setdefault(curve, {})
        for column in ("dataset", "learner"):
            if column in values:
                first = seen.setdefault(column, (values[column], line))
                if first[0] != values[column]:
                    raise TraceError(
                        path,
                        line,
                        f"curve {curve!r}: {column} {values[column]!r} differs from {first[0]!r} on line {first[1]}",
                    )
        entry = rows.setdefault((curve, seed), {"line": line, "anchors": [], "loss": [], "fit": [], "lines": {}})
        if anchor in entry["lines"]:
            raise TraceError(
                path,
                line,
                f"duplicate row: curve {curve!r} seed {seed} anchor {anchor} "
                f"is already on line {entry['lines'][anchor]}",
            )
        if entry["anchors"] and anchor <= entry["anchors"][-1]:
            previous = entry["anchors"][-1]
            raise TraceError(
                path,
                line,
                f"anchors must increase within curve {curve!r} seed {seed}: "
                f"{anchor} after {previous} (line {entry['lines'][previous]})",
            )
        entry["lines"][anchor] = line
        entry["anchors"].append(anchor)
        entry["loss"].append(loss)
        entry["fit"].append(fit)
    for (curve, seed), entry in rows.items():
        if len(entry["anchors"]) < 2:
            raise TraceError(
                path, entry["line"], f"curve {curve!r} seed {seed} has a single anchor (a curve needs at least 2)"
            )
    by_curve: dict[str, list[SeedCurve]] = {}
    for curve, seed in sorted(rows):
        entry = rows[(curve, seed)]
        fit = np.array(entry["fit"], dtype=float) if "fit_seconds" in optional else None
        by_curve.setdefault(curve, []).append(
            SeedCurve(seed, np.array(entry["anchors"], dtype=np.int64), np.array(entry["loss"], dtype=float), fit)
        )
    return {
        curve: CurveTable(
            curve, names[curve].get("dataset", ("", 0))[0], names[curve].get("learner", ("", 0))[0], tuple(seeds)
        )
        for curve, seeds in by_curve.items()
    }


# --- piecewise power law ----------------------------------------------------------------------


class _Piecewise:
    """A continuous curve through (x_i, y_i), x strictly increasing, y > 0: log y linear in log x
    between knots, y_0 below x_0, y_{m-1} beyond x_{m-1}. Exact at the knots. head="peak" first
    drops the knots before the largest y (so the curve is held at its peak below that knot)."""

    __slots__ = ("xs", "ys", "lx", "ly", "slope", "neg_runmin", "_x", "_y")

    def __init__(self, xs, ys, head: str = "clamp"):
        xs = np.asarray(xs, dtype=float)
        ys = np.asarray(ys, dtype=float)
        if head == "peak":  # drop the knots before the largest value: held at the peak below it
            peak = int(np.argmax(ys))
            xs, ys = xs[peak:], ys[peak:]
        self._x = xs
        self._y = ys
        self.xs = [float(x) for x in self._x]
        self.ys = [float(y) for y in self._y]
        self.lx = [math.log(x) for x in self.xs]
        self.ly = [math.log(y) for y in self.ys]
        self.slope = [(self.ly[i + 1] - self.ly[i]) / (self.lx[i + 1] - self.lx[i]) for i in range(len(self.xs) - 1)]
        runmin, low = [], math.inf
        for y in self.ys:
            low = min(low, y)
            runmin.append(-low)  # non-decreasing, for bisect
        self.neg_runmin = runmin

    def __call__(self, s: float) -> float:
        xs = self.xs
        if s != s:
            raise ValueError(f"data must be a number >= 0, got {s!r}")
        if s <= xs[0]:
            if not s >= 0:
                raise ValueError(f"data must be a number >= 0, got {s!r}")
            return self.ys[0]
        if s >= xs[-1]:
            return self.ys[-1]
        i = bisect.bisect_right(xs, s) - 1
        if s == xs[i]:
            return self.ys[i]
        return self.ys[i] * math.exp(self.slope[i] * (math.log(s) - self.lx[i]))

    def many(self, s: np.ndarray) -> np.ndarray:
        """The curve at many points (the same formula as __call__, vectorised)."""
        s = np.asarray(s, dtype=float)
        if len(self.xs) == 1:
            return np.full(s.shape, self.ys[0])
        i = np.clip(np.searchsorted(self._x, s, side="right") - 1, 0, len(self.xs) - 2)
        slope = np.asarray(self.slope)[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._y[i] * np.exp(slope * (np.log(np.maximum(s, self._x[0])) - np.log(self._x[i])))
        out = np.where(s <= self._x[0], self._y[0], out)
        out = np.where(s >= self._x[-1], self._y[-1], out)
        hit = np.isin(s, self._x)
        if hit.any():
            out[hit] = self._y[np.searchsorted(self._x, s[hit])]
        return out

    def first_reach(self, threshold: float) -> float:
        """The least s > 0 with curve(s) <= threshold (0.0 if the value below the first knot is
        already there: any positive amount reaches it), or inf."""
        if not threshold > 0:
            return math.inf
        j = bisect.bisect_left(self.neg_runmin, -threshold)  # first knot with running min <= thr
        if j >= len(self.xs):
            return math.inf
        if j == 0:
            return 0.0
        lo, hi = self.xs[j - 1], self.xs[j]  # curve(lo) > threshold >= curve(hi), monotone between
        guess = lo * math.exp((math.log(threshold) - self.ly[j - 1]) / self.slope[j - 1])
        guess = min(max(guess, lo), hi)
        if self(guess) <= threshold:
            hi = guess
        else:
            lo = guess
        while True:  # bisection down to adjacent doubles: the least double that reaches it
            mid = lo + (hi - lo) / 2.0
            if not lo < mid < hi:
                break
            if self(mid) <= threshold:
                hi = mid
            else:
                lo = mid
        s = hi
        return s


# --- one thread's curve ------------------------------------------------------------------------


class RealCurve:
    """The `LossCurve` (market/core/curves.py) of one thread built from one real curve.

    `units_per_sample`: data units per training sample (a thread's data s is s /
    units_per_sample samples). `noise="seed"` observes one seed's curve, picked with `rng`
    (one draw, `rng.integers(number of seeds)`), or the given `seed`; `noise="none"` observes
    the mean curve (no draw). `true_loss` is always the mean curve. Shapes: module docstring.
    """

    def __init__(
        self,
        table: CurveTable,
        units_per_sample: float = 1.0,
        rng: np.random.Generator | None = None,
        *,
        noise: str = "seed",
        seed: int | None = None,
        head: str = "peak",
    ):
        F.choice(noise, "noise", NOISES)
        F.choice(head, "head", HEADS)
        self.units_per_sample = F.real(units_per_sample, "units_per_sample", 0, strict_min=True)
        self.table = table
        self.noise = noise
        self.head = head
        scale = self.units_per_sample
        self._mean = _Piecewise(table.mean_anchors * scale, table.mean_loss, head)
        if noise == "none":
            self.seed = None
            self._observed = self._mean
            return
        if seed is None:
            if rng is None:
                raise ValueError("RealCurve: noise='seed' needs an rng (or an explicit seed)")
            seed = table.seeds[int(rng.integers(len(table.seeds)))].seed
        chosen = table.seed_curve(seed)
        self.seed = chosen.seed
        self._observed = _Piecewise(chosen.anchors * scale, chosen.loss, head)

    def __repr__(self) -> str:
        return f"RealCurve({self.table.curve!r}, seed={self.seed!r}, units_per_sample={self.units_per_sample!r})"

    @property
    def curve(self) -> str:
        return self.table.curve

    @property
    def span(self) -> tuple[float, float]:
        """The observed curve's first and last knot in data units (after the head rule: with
        head="peak" the first knot is the peak's anchor)."""
        return self._observed.xs[0], self._observed.xs[-1]

    def loss(self, data: float) -> float:
        """The observed loss after `data` data units (exact at the anchors)."""
        return self._observed(data)

    def true_loss(self, data: float) -> float:
        """The mean curve at `data`."""
        return self._mean(data)

    def losses(self, data) -> np.ndarray:
        """`loss` at many amounts at once (the same numbers)."""
        return self._observed.many(np.asarray(data, dtype=float))

    def data_to_reach(self, threshold: float, limit: float = math.inf) -> float:
        """The least data s in (0, limit] with loss(s) <= threshold, or inf. 0.0 when the loss
        below the first anchor is already at or under the threshold (any positive data reaches
        it). Solved on the segment where the observed curve first reaches the threshold, to the
        double."""
        s = self._observed.first_reach(threshold)
        return s if s <= limit else math.inf


# --- bundles -----------------------------------------------------------------------------------


def _key(name: str) -> str:
    return f"bundle.{name}"


@dataclass(frozen=True)
class RealBundleParams:
    """The `bundle` config keys of a bundle of real curves (docs/core/real_curves.md).

    path: the curve file (null: the shipped data/core_lcdb_curves.csv; a relative path is
      relative to the working directory).
    threads: K. slack: deadline factor (1: the paper's Sec. 4.3 rule). budget: [low, high] of
      N_k (uniform; default the range of the paper's Table 1/2 N_k, 55..375). units_per_sample:
      data units per training sample. threshold_at: [low, high] in [0, 1], where on the
      log-size axis between the calibration curve's first knot (0; the peak with head="peak")
      and last anchor (1) its threshold is set.
    hard_share, hard_factor: that share of the threads get their threshold times hard_factor
      (paper Sec. 4.3: 1/3 of them, 1/10). deadlines: "cumulative" (paper Sec. 4.3) or "solo".
    noise: "seed" or "none", head: "peak" or "clamp" (RealCurve). calibrate: the curve the
      thresholds and solo times are set on, "observed" (the thread's own seed curve: the
      paper's "run each model to completion") or "mean" (the mean curve: another run than the
      one the thread reports). curve_ids: null (all curves) or the ids to draw from (with
      replacement).
    """

    path: str | None = None
    threads: int = 10
    slack: float = 1.0
    budget: tuple[float, float] = (55.0, 375.0)
    units_per_sample: float = 1.0
    threshold_at: tuple[float, float] = (0.5, 1.0)
    hard_share: float = 1.0 / 3.0
    hard_factor: float = 0.1
    deadlines: str = "cumulative"
    noise: str = "seed"
    head: str = "peak"
    calibrate: str = "observed"
    curve_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        def put(name, value):  # a frozen dataclass: fields normalised in place
            object.__setattr__(self, name, value)

        if self.path is not None:
            if isinstance(self.path, os.PathLike):
                put("path", os.fspath(self.path))
            if not isinstance(self.path, str) or not self.path.strip():
                raise ValueError(f"{_key('path')} must be null or a file path, got {self.path!r}")
        put("threads", F.integer(self.threads, _key("threads"), 1))
        put("slack", F.real(self.slack, _key("slack"), 0, strict_min=True))
        low, high = F.interval(self.budget, _key("budget"), float, 0, strict_min=True)
        if not math.isfinite(high):
            raise ValueError(f"{_key('budget')} must be finite, got {self.budget!r}")
        put("budget", (low, high))
        put("units_per_sample", F.real(self.units_per_sample, _key("units_per_sample"), 0, strict_min=True))
        low, high = F.interval(self.threshold_at, _key("threshold_at"), float, 0)
        if high > 1:
            raise ValueError(f"{_key('threshold_at')} must satisfy 0 <= low <= high <= 1, got {self.threshold_at!r}")
        put("threshold_at", (low, high))
        put("hard_share", F.real(self.hard_share, _key("hard_share"), 0, 1))
        put("hard_factor", F.real(self.hard_factor, _key("hard_factor"), 0, 1, strict_min=True))
        F.choice(self.deadlines, _key("deadlines"), DEADLINE_RULES)
        F.choice(self.noise, _key("noise"), NOISES)
        F.choice(self.head, _key("head"), HEADS)
        F.choice(self.calibrate, _key("calibrate"), CALIBRATIONS)
        ids = self.curve_ids
        if ids is not None:
            items = [ids] if isinstance(ids, str) else ids
            if (
                not isinstance(items, Sequence)
                or len(items) == 0
                or not all(isinstance(i, str) and i.strip() for i in items)
            ):
                raise ValueError(f"{_key('curve_ids')} must be null or a non-empty list of curve ids, got {ids!r}")
            put("curve_ids", tuple(items))

    @classmethod
    def from_config(cls, section, also_known: Sequence[str] = ("kind",)) -> RealBundleParams:
        """From the `bundle` config section (a dict; missing keys take the defaults). Keys not
        fields of this class are an error unless listed in `also_known` (default: `kind`)."""
        section = F.as_section(section, "bundle")
        F.reject_unknown_keys(cls, section, "bundle", also_known=tuple(also_known))
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in section.items() if k in known})

    def load(self) -> dict[str, CurveTable]:
        return load_curves(self.path)

    def bundle(self, rng: np.random.Generator, curves: Mapping[str, CurveTable] | None = None) -> Bundle:
        """A bundle drawn with these parameters (the table is loaded when not given)."""
        return _draw(self.load() if curves is None else curves, rng, self)


def real_bundle(curves: Mapping[str, CurveTable], rng: np.random.Generator, k: int = 10, **params) -> Bundle:
    """K threads drawn from `curves` (docs/core/real_curves.md, "The bundle rule"); `params` are
    the other RealBundleParams fields (checked as `bundle.<key>`; `path` is not used)."""
    return _draw(curves, rng, RealBundleParams(threads=k, **params))


def _draw(curves: Mapping[str, CurveTable], rng: np.random.Generator, p: RealBundleParams) -> Bundle:
    if not curves:
        raise ValueError("real_bundle: the curve table is empty")
    if p.curve_ids is None:
        ids = sorted(curves)
    else:
        unknown = [i for i in p.curve_ids if i not in curves]
        if unknown:
            raise ValueError(
                f"{_key('curve_ids')}: unknown curve id(s) "
                f"{', '.join(repr(i) for i in unknown)} ({len(curves)} in the table)"
            )
        ids = list(p.curve_ids)
    drawn = []
    for _ in range(p.threads):
        table = curves[ids[int(rng.integers(len(ids)))]]
        curve = RealCurve(table, p.units_per_sample, rng, noise=p.noise, head=p.head)
        budget = float(rng.uniform(*p.budget))
        position = float(rng.uniform(*p.threshold_at))
        basis = curve if p.calibrate == "observed" else RealCurve(table, p.units_per_sample, noise="none", head=p.head)
        first, last = basis.span
        target = first * (last / first) ** position  # data units
        units = max(1, round(target / budget))
        # a relative margin of 1e-9: the simulation adds N_k unit by unit, and the sum can differ
        # from units * budget in the last bits
        threshold = basis.loss(units * budget) * (1.0 + THRESHOLD_MARGIN)
        solo = _solo_units(basis, threshold, budget, units)
        drawn.append((table, curve, budget, threshold, solo))
    hard_count = int(math.floor(p.hard_share * p.threads + 0.5))
    hard = set(int(i) for i in rng.permutation(p.threads)[:hard_count])
    threads, used, total = [], [], 0
    for k, (table, curve, budget, threshold, solo) in enumerate(drawn):
        total += solo
        span = total if p.deadlines == "cumulative" else solo
        deadline = max(1, math.ceil(p.slack * span - 1e-9))
        label = f"{table.curve}#{curve.seed}" if curve.seed is not None else table.curve
        if k in hard:
            threshold *= p.hard_factor
            label += " hard"
        threads.append(Thread(0, deadline, budget, threshold, label))
        used.append(curve)
    return Bundle(tuple(threads), tuple(used))


def _solo_units(curve: RealCurve, threshold: float, budget: float, cap: int) -> int:
    """The first unit u with loss(u * budget) <= threshold: the thread alone at full compute
    (the paper's "run each model to completion"); u = cap reaches it by construction."""
    need = curve.data_to_reach(threshold)
    u = max(1, math.ceil(need / budget) - 1)
    while u < cap and curve.loss(u * budget) > threshold:
        u += 1
    return u
