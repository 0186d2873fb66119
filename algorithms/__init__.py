"""Scheduling mechanisms, one family per subpackage (pure Python + NumPy)."""
