"""Hydra launcher that sends a multirun's cells to one pool of Ray actors."""
