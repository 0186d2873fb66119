"""Market and workload models, one subpackage per family and `common`: NumPy, with statsmodels
for the spot price forecasts and scikit-learn for the core family's live learners; never Ray,
MLflow or Hydra."""
