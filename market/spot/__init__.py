"""The world of the `spot` family (paper 000): the fine-tuning job, the spot market, traces,
forecasts and prediction noise."""
