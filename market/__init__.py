"""Market and workload models (pure Python + NumPy), one subpackage per family and `common`."""
