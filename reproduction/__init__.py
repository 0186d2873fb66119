"""Paper reproduction: one module per family (its experiments, checks and figures) and one
generic driver (`python -m reproduction <family>`)."""
