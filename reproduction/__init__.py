"""Paper reproduction: one module per family (its experiments, checks and figures) and one
generic driver (`python -m reproduction <family>`)."""

import sweep.common_env  # noqa: F401,E402  (before numpy: the pinned arithmetic of the reports)
