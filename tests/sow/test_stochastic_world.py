"""The stochastic variant's world (`births.kind: prior`, market/sow/prior_births.py), its config rules
in the family (Stochastic needs it; the oracle accuracy warning) and the Theorem 5.2 report's checks
(reproduction/sow/theorem52.py) on hand-made frames."""

import warnings

import numpy as np
import pandas as pd
import pytest

from algorithms.sow import family
from algorithms.sow.config import OracleAccuracyWarning
from market.sow.birth_sequences import BirthParams, bounds_from_config, draw_births
from market.sow.prior_births import PriorBirthSequence
from market.sow.statement_of_work import Bounds
from reproduction.experiment import Context
from reproduction.sow.theorem52 import cell_ratios, checks, slope
from tests.sweep_dirs import write_cell_config

PRIOR_BOUNDS = Bounds(2, 4, 24, 64.0)


def prior(config=None, bounds=PRIOR_BOUNDS, seed=0):
    return draw_births(
        BirthParams.from_config({"kind": "prior", "signal": "duration", **(config or {})}, bounds),
        bounds,
        np.random.default_rng(seed),
    )


def test_priors_births_and_the_drawn_variant():
    seq = prior({"jobs": 20, "pipelines": 5, "variants": 3, "rounds": 8, "lead": 3})
    assert isinstance(seq, PriorBirthSequence) and len(seq) == 20 and seq.signal == "duration"
    earliest = min(int(v.arrival.min()) for p in seq.priors for v in p.variants)
    assert earliest >= 3 - 1 - 1 and max(s.birth for s in seq.jobs) <= earliest  # every birth precedes every arrival
    for sow, p in zip(seq.jobs, seq.priors):
        assert p.variants[p.drawn] is sow and len(p.variants) == 3
        assert p.probability.sum() == pytest.approx(1.0) and np.all(p.probability >= 0.5 / 4.5 - 1e-12)
        assert len({v.concurrency for v in p.variants}) == 1


def test_swept_bounds_keep_the_same_stream_and_quantiles():
    small, large = prior(bounds=Bounds(2, 2, 24, 4.0), seed=5), prior(bounds=Bounds(2, 8, 24, 1024.0), seed=5)
    assert [s.birth for s in small.jobs] == [s.birth for s in large.jobs]
    assert [p.drawn for p in small.priors] == [p.drawn for p in large.priors]
    for a, b in zip(small.priors, large.priors):
        assert np.array_equal(a.probability, b.probability)
        for va, vb in zip(a.variants, b.variants):
            assert va.concurrency == vb.concurrency and va.arrival.min() == vb.arrival.min()
            # log-uniform values: ln V / ln V_bar is the same quantile (up to the 3-decimal floor)
            assert np.log(va.values.max()) / np.log(4.0) == pytest.approx(
                np.log(vb.values.max()) / np.log(1024.0), abs=2e-3
            )
            assert vb.duration.max() >= va.duration.max()


def test_ascending_order_submits_low_expected_values_first():
    seq = prior({"jobs": 12, "order": "ascending"})
    worth = [float(p.probability @ [v.values.max() for v in p.variants]) for p in seq.priors]
    assert worth == sorted(worth)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"signal": "none"}, r"^births\.signal must be 'duration' for births\.kind 'prior', got 'none'$"),
        ({"lead": 1}, r"^births\.lead must be >= births\.shift \+ births\.arrival_jitter"),
        ({"rounds": 30}, r"^births\.lead \+ births\.rounds - 1 \+ .* must be < bounds\.horizon = 16"),
        ({"value": [1, 99]}, r"^births\.value must lie within \[1, 16\] \(bounds\.max_value = 16\)"),
        ({"order": "descending"}, r"^births\.order must be one of random, ascending, got 'descending'$"),
        ({"period": [1, 2]}, r"^births: unknown key\(s\) 'period' for kind 'prior'"),
    ],
)
def test_prior_config_errors_name_the_key(config, message):
    with pytest.raises(ValueError, match=message):
        BirthParams.from_config({"kind": "prior", "signal": "duration", **config}, bounds_from_config({}))


BASE = {
    "bounds": {"max_concurrency": 2, "max_duration": 3, "horizon": 16, "max_value": 16.0},
    "births": {"kind": "prior", "signal": "duration", "jobs": 10},
    "cluster": {"nodes": 8},
    "oracle": {"samples": 20},
}


def test_stochastic_needs_the_prior_world_and_a_lane():
    with pytest.raises(
        ValueError,
        match=r"^mechanisms\[1\]: Stochastic needs the priors of births\.kind: prior .* "
        r"got births\.kind: recurring$",
    ):
        family.prepare({**BASE, "births": {"kind": "recurring"}, "mechanisms": ["OPT", "Stochastic"]})
    with pytest.raises(ValueError, match=r"^mechanisms\[0\] Stochastic: the stochastic variant's LP supply"):
        family.prepare({**BASE, "cluster": {"nodes": 3}, "mechanisms": ["Stochastic"]})
    with pytest.raises(
        ValueError, match=r": Stochastic takes the optional keys epsilon, slack, eviction, oracle, samples$"
    ):
        family.prepare({**BASE, "mechanisms": ["Stochastic(start=concurrency)"]})
    with pytest.raises(ValueError, match=r"^report: unknown key\(s\) 'limit'"):
        family.prepare({**BASE, "mechanisms": ["OPT"], "report": {"limit": 3}})


def test_the_family_runs_stochastic_and_its_audit():
    prepared = family.prepare(
        {**BASE, "oracle": {"kind": "exact"}, "mechanisms": ["Stochastic", "StochasticAudit", "Reduction", "OPT"]}
    )
    rows = family.simulate_replicate(prepared, 0, np.random.default_rng(2))
    stoch, audit = rows[0], rows[1]
    assert 0 < stoch["fua_share"] <= 1 and stoch["relaxed_peak"] <= 1 + 1e-9 and stoch["receptive_breaks"] == 0
    assert stoch["welfare"] == audit["welfare"]  # the audit's run is the mechanism's truthful run
    assert audit["misreports"] > 0 and audit["over_bound_mu"] == 0
    assert len(audit["tables"]["misreports"]["gain"]) == audit["misreports"] + 10  # and one truthful row per job


def test_the_oracle_accuracy_warning():
    with pytest.warns(OracleAccuracyWarning, match=r"Reduction: oracle\.eps0 = 0\.1 > reduction\.epsilon / 10 = 0\.01"):
        family.prepare({**BASE, "oracle": {}, "mechanisms": ["Reduction"]})
    with pytest.warns(
        OracleAccuracyWarning, match=r"Stochastic: Lemma F\.1's eps0 for R = 20 at oracle\.delta0 = 0\.1"
    ):
        family.prepare({**BASE, "mechanisms": ["Stochastic"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        family.prepare({**BASE, "oracle": {"kind": "exact"}, "mechanisms": ["Reduction", "Stochastic"]})
        family.prepare({**BASE, "oracle": {"eps0": 0.05}, "reduction": {"epsilon": 0.9}, "mechanisms": ["Reduction"]})


def frame(stochastic_ratio):
    """Two replicates per cell; OPT's welfare 10; Stochastic's 10 / ratio(V, D)."""
    rows = []
    for v in (4.0, 64.0, 1024.0):
        for d in (2, 8):
            for r in (0, 1):
                for mechanism, welfare in (
                    ("Stochastic", 10.0 / stochastic_ratio(v, d) + 0.01 * r),
                    ("Reduction", 10.0 / (1 + 0.1 * np.log(4 * v * d)) + 0.01 * r),
                    ("OPT", 10.0),
                ):
                    rows.append(
                        {
                            "bounds.max_value": v,
                            "bounds.max_duration": d,
                            "mechanism": mechanism,
                            "replicate": r,
                            "welfare": welfare,
                            "fua_share": 0.6,
                            "relaxed_peak": 0.5,
                            "receptive_breaks": 0,
                            "opt_proven": True,
                        }
                    )
    return pd.DataFrame(rows)


def test_the_theorem52_checks_can_fail(tmp_path):
    context = Context(tmp_path, tmp_path)
    write_cell_config(tmp_path / "theorem52", {"report": {"ratio_limit": 3.0}})
    flat = cell_ratios(frame(lambda v, d: 1.5))
    assert slope(flat, "Stochastic")["slope"] == pytest.approx(0.0, abs=1e-3)
    assert slope(flat, "Reduction")["slope"] == pytest.approx(0.1, rel=0.05)
    context.reports["theorem52"] = flat
    got = {c.check.split(" (")[0].split(":")[-1].strip(): c for c in checks(context)}
    assert all(c.holds in (True, None) for c in got.values())
    context.reports["theorem52"] = cell_ratios(frame(lambda v, d: 1 + 0.3 * np.log(4 * v * d)))
    bad = [c for c in checks(context) if c.holds is False]
    assert len(bad) == 2  # the slope (0.3 > 0.05, interval off 0) and the largest cell (4.0 > 3)
