"""Paper 004's world: statements of work and birth sequences (docs/sow/world.md)."""
