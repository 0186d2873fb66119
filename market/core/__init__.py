"""The world of the `core` family (paper 002, LARA): task bundles of learning threads and their
loss curves (parametric, real learning curves, live scikit-learn learners)."""
