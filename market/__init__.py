"""Market and workload models (pure Python + NumPy): the fine-tuning job and
spot market of paper 000_17f647b6e3bf630a.txt, Sec. III and VI-A."""

from market.finetune_job import FineTuneJob
from market.spot_market import SpotMarket, SyntheticMarketParams
from market.spot_trace import TraceError, load_spot_trace, sample_window

__all__ = [
    "FineTuneJob",
    "SpotMarket",
    "SyntheticMarketParams",
    "TraceError",
    "load_spot_trace",
    "sample_window",
]
