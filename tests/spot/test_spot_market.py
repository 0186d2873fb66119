"""SpotMarket and the synthetic market generator (reading notes `spot`, paper 000 Sec. II-B, VI-A)."""

import dataclasses

import numpy as np
import pytest

from market.spot.spot_market import SpotMarket, SyntheticMarketParams, ar1_paths

LONG = 20_000


@pytest.fixture(scope="module")
def long_sample():
    return SyntheticMarketParams().sample(np.random.default_rng(2024), LONG)


def test_spot_market_validates_and_freezes():
    m = SpotMarket([0.5, 0.7], [3, 16])
    assert len(m) == 2 and m.availability.dtype == np.int64
    with pytest.raises(ValueError):
        m.price[0] = 1.0
    with pytest.raises(ValueError, match="> 0"):
        SpotMarket([0.5, 0.0], [1, 1])
    with pytest.raises(ValueError, match=r"\[0, 16\]"):
        SpotMarket([0.5, 0.5], [1, 17])
    with pytest.raises(ValueError, match="integers"):
        SpotMarket([0.5, 0.5], [1.5, 1])
    with pytest.raises(ValueError, match="equal length"):
        SpotMarket([0.5], [1, 1])


def test_window_slices():
    m = SpotMarket(np.arange(1, 11) / 10, np.arange(10), on_demand_price=2.0, capacity=12)
    w = m.window(3, 4)
    assert w.price.tolist() == [0.4, 0.5, 0.6, 0.7]
    assert w.availability.tolist() == [3, 4, 5, 6]
    assert (w.on_demand_price, w.capacity) == (2.0, 12)
    with pytest.raises(ValueError, match="does not fit"):
        m.window(8, 3)


def test_sample_ranges_and_types(long_sample):
    m = long_sample
    assert len(m) == LONG
    assert m.availability.dtype == np.int64
    assert m.availability.min() >= 0 and m.availability.max() <= 16
    p = SyntheticMarketParams
    assert m.price.min() >= p.PRICE_FLOOR and m.price.max() <= p.PRICE_CAP
    assert m.on_demand_price == 1.0 and m.capacity == 16


def test_default_statistics_match_the_paper(long_sample):
    m = long_sample
    # Sec. II-B: "the median instance price is only about 60% of the P90 price".
    ratio = np.median(m.price) / np.quantile(m.price, 0.9)
    assert ratio == pytest.approx(0.60, abs=0.03)
    assert m.availability.mean() == pytest.approx(8.0, rel=0.05)
    assert m.price.mean() == pytest.approx(0.5, rel=0.05)


def test_daily_cycle_more_availability_and_lower_price_by_day():
    s = SyntheticMarketParams().sample(np.random.default_rng(7), LONG, start=0)
    hour = np.arange(LONG) % 48
    day = (hour >= 12) & (hour < 36)
    assert s.availability[day].mean() > 1.5 * s.availability[~day].mean()
    assert s.price[day].mean() < 0.8 * s.price[~day].mean()


def test_noise_is_autocorrelated():
    p = SyntheticMarketParams(availability_amplitude=0.0, price_amplitude=0.0)
    m = p.sample(np.random.default_rng(3), LONG)
    x = np.log(m.price)
    lag1 = np.corrcoef(x[:-1], x[1:])[0, 1]
    assert lag1 == pytest.approx(p.ar_coef, abs=0.05)


def test_ar1_paths_are_stationary_with_the_given_sigma():
    paths = ar1_paths(np.random.default_rng(0), 2, 50_000, 0.8, np.array([0.25, 1.0]))
    assert paths[0].std() == pytest.approx(0.25, rel=0.05)
    assert paths[1].std() == pytest.approx(1.0, rel=0.05)
    assert np.corrcoef(paths[1][:-1], paths[1][1:])[0, 1] == pytest.approx(0.8, abs=0.02)


def test_ar1_blocks_equal_the_plain_recursion():
    n, ar, sigma = 150, 0.8, np.array([0.3, 0.5])  # 150 slots span three 64-slot blocks
    paths = ar1_paths(np.random.default_rng(4), 2, n, ar, sigma)
    z = np.random.default_rng(4).standard_normal((2, n + 1))
    x = z[:, 0] * sigma
    for k in range(n):
        x = ar * x + np.sqrt(1 - ar * ar) * sigma * z[:, k + 1]
        assert np.allclose(paths[:, k], x)


def test_deterministic_for_a_fixed_seed():
    p = SyntheticMarketParams()
    a = p.sample(np.random.default_rng(11), 30)
    b = p.sample(np.random.default_rng(11), 30)
    assert np.array_equal(a.price, b.price)
    assert np.array_equal(a.availability, b.availability)
    c = p.sample(np.random.default_rng(12), 30)
    assert not np.array_equal(a.price, c.price)


def test_start_sets_the_time_of_day():
    p = SyntheticMarketParams(availability_noise=0.0, price_noise=0.0)
    night = p.sample(np.random.default_rng(5), 1, start=0)
    noon = p.sample(np.random.default_rng(5), 1, start=24)
    next_noon = p.sample(np.random.default_rng(5), 1, start=72)
    assert night.availability[0] == 4 and noon.availability[0] == 12  # 8 (1 -/+ 0.5)
    assert night.price[0] == pytest.approx(0.65) and noon.price[0] == pytest.approx(0.35)
    assert next_noon.availability[0] == 12


def test_means_move_with_the_parameters():
    rng = np.random.default_rng(9)
    base = SyntheticMarketParams().sample(rng, LONG)
    cheap = SyntheticMarketParams(mean_price=0.25).sample(np.random.default_rng(9), LONG)
    scarce = SyntheticMarketParams(mean_availability=3.0).sample(np.random.default_rng(9), LONG)
    assert cheap.price.mean() == pytest.approx(0.25, rel=0.05)
    assert scarce.availability.mean() == pytest.approx(3.0, rel=0.06)
    assert cheap.price.mean() < base.price.mean()
    assert scarce.availability.mean() < base.availability.mean()


def test_on_demand_price_scales_spot_prices():
    a = SyntheticMarketParams().sample(np.random.default_rng(1), 20)
    b = SyntheticMarketParams(on_demand_price=3.0).sample(np.random.default_rng(1), 20)
    assert np.allclose(b.price, 3.0 * a.price)
    assert b.on_demand_price == 3.0


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("capacity", 0, "market.capacity must be a positive integer"),
        ("capacity", 4.5, "market.capacity must be a positive integer"),
        ("mean_availability", 20.0, r"market.mean_availability must be in \[0, market.capacity"),
        ("availability_amplitude", 1.5, "market.availability_amplitude"),
        ("mean_price", 0.0, "market.mean_price must be > 0"),
        ("price_amplitude", 1.0, "market.price_amplitude"),
        ("ar_coef", 1.0, "market.ar_coef"),
        ("price_noise", -0.1, "market.price_noise"),
        ("availability_noise", "x", "market.availability_noise must be a finite number"),
        ("slots_per_day", 0, "market.slots_per_day"),
        ("on_demand_price", -1.0, "market.on_demand_price"),
        ("outage_fraction", 1.0, "market.outage_fraction"),
        ("outage_fraction", -0.1, "market.outage_fraction"),
        ("outage_slots", 0.5, "market.outage_slots"),
    ],
)
def test_check_names_the_key(field, value, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SyntheticMarketParams(), **{field: value}).check()


def test_from_dict_rejects_unknown_keys():
    with pytest.raises(ValueError, match=r"market: unknown key\(s\) 'mean_prize'"):
        SyntheticMarketParams.from_dict({"mean_prize": 0.4})
    assert SyntheticMarketParams.from_dict({"mean_price": 0.4}).mean_price == 0.4


def test_outage_chain_by_hand():
    """f = 0.2, L = 4: up -> down with 0.2 / (0.8 * 4) = 0.0625, down -> up with 0.25; the first
    slot is down when its uniform is below f."""
    p = SyntheticMarketParams(outage_fraction=0.2, outage_slots=4.0)

    class Uniforms:
        def __init__(self, values):
            self.values = np.array(values)

        def random(self, n):
            return self.values[:n]

    # slot:      0 starts up, 1 stays up, 2 goes down, 3 stays down, 4 goes up, 5 goes down, 6 stays down
    uniforms = [0.5, 0.07, 0.06, 0.25, 0.24, 0.0624, 0.9]
    assert p.outages(Uniforms(uniforms), 7).tolist() == [False, False, True, True, False, True, True]
    assert p.outages(Uniforms([0.19]), 1).tolist() == [True]


def test_outages_cover_their_fraction_in_spells_of_their_length():
    p = SyntheticMarketParams(outage_fraction=0.2, outage_slots=4.0)
    down = p.outages(np.random.default_rng(3), 200_000)
    assert down.mean() == pytest.approx(0.2, abs=0.01)
    edges = np.diff(np.concatenate([[0], down.astype(int), [0]]))
    spells = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    assert spells.mean() == pytest.approx(4.0, rel=0.05)
    market = p.sample(np.random.default_rng(3), 20_000)
    assert np.mean(market.availability == 0) == pytest.approx(0.2, abs=0.02)


def test_no_outage_draws_the_earlier_market_exactly():
    """outage_fraction = 0 uses the rng as before: the earlier market's numbers are unchanged."""
    plain = SyntheticMarketParams().sample(np.random.default_rng(11), 300)
    rng = np.random.default_rng(11)
    again = SyntheticMarketParams(outage_slots=9.0).sample(rng, 300)
    assert np.array_equal(plain.price, again.price) and np.array_equal(plain.availability, again.availability)
    reference = np.random.default_rng(11)
    reference.integers(48), reference.standard_normal((2, 301))
    assert rng.random() == reference.random()


def test_too_many_outages_for_their_length_is_an_error():
    with pytest.raises(ValueError, match="market.outage_fraction .* too large"):
        SyntheticMarketParams(outage_fraction=0.9, outage_slots=1.0).check()


def test_vast_like_preset_statistics():
    """conf/market/vast_like.yaml, the market paper 000's text describes: spot below
    on-demand in at least 90% of slots ("significantly more cost-effective", Sec. II-B), median
    0.60 +- 0.03 of P90 (Sec. II-B), availability higher by day (Sec. II-C), within [0, 16] and
    zero on at most 2% of slots, and no daily price cycle."""
    import yaml

    from sweep.api import CONF_DIR

    preset = yaml.safe_load((CONF_DIR / "market" / "vast_like.yaml").read_text())
    assert preset.pop("kind") == "synthetic" and preset["price_amplitude"] == 0.0
    params = SyntheticMarketParams.from_dict({key: value for key, value in preset.items() if value is not None})
    market = params.sample(np.random.default_rng(2024), LONG, start=0)
    price, avail = market.price, market.availability
    assert np.mean(price < params.on_demand_price) >= 0.90
    assert np.median(price) / np.quantile(price, 0.9) == pytest.approx(0.60, abs=0.03)
    assert avail.min() >= 0 and avail.max() <= 16 and np.mean(avail == 0) <= 0.02
    hour = np.arange(LONG) % params.slots_per_day
    day = (hour >= 12) & (hour < 36)
    assert avail[day].mean() > 1.5 * avail[~day].mean()
    assert price[day].mean() == pytest.approx(price[~day].mean(), rel=0.05)
    assert np.std(avail) > 2  # it fluctuates


def test_paper_like_preset_statistics():
    """conf/market/paper_like.yaml: the level around on-demand (median about 60% of P90 and P90
    above on-demand, Sec. II-B), zero-availability spells on 10-30% of the slots, several slots
    long, and a mean availability of 8-12 of 16."""
    import yaml

    from sweep.api import CONF_DIR

    preset = yaml.safe_load((CONF_DIR / "market" / "paper_like.yaml").read_text())
    assert preset.pop("kind") == "synthetic"
    params = SyntheticMarketParams.from_dict(preset)
    market = params.sample(np.random.default_rng(2024), LONG, start=0)
    price, avail = market.price, market.availability
    assert np.median(price) / np.quantile(price, 0.9) == pytest.approx(0.60, abs=0.03)
    assert np.quantile(price, 0.9) > 1.0 and 0.85 < np.median(price) < 1.0
    assert 0.10 <= np.mean(avail == 0) <= 0.30
    assert 8 <= avail.mean() <= 12
    edges = np.diff(np.concatenate([[0], (avail == 0).astype(int), [0]]))
    assert (np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).mean() >= 3
