"""Paper 004's mechanisms: truthful posted-price scheduling of stochastic statements of work (docs/sow/mechanisms.md)."""
