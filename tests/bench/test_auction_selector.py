"""bench/auction_selector.py on a tiny world: the report's structure and what must hold whatever
the numbers (the DP's F never above the exact maximum). No timing assertion."""

from bench.auction_selector import VARIANTS, measure


def test_selector_report_on_a_tiny_world():
    report = measure(nodes=2, load=2, days=1)
    assert [row["variant"] for row in report["rows"]] == list(VARIANTS)
    for row in report["rows"]:
        assert row["dp_above_exact"] == 0
        assert 0 <= row["dp_below_exact"] <= row["decisions"] <= row["tasks"]
        assert row["admission_flips"] <= row["dp_below_exact"]
        assert row["largest_gap"] >= 0 and row["welfare_dp"] >= 0 and row["welfare_exact"] >= 0
