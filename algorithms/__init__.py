"""Scheduling and pricing mechanisms, one subpackage per family (spot, auction, core, iaas, sow)
and `common`: NumPy and SciPy, Numba for the hot loops, OR-Tools CP-SAT for the offline optima;
never Ray, MLflow or Hydra."""
