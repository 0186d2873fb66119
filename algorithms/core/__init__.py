"""The `core` family (paper 002, Learning with Adaptive Resource Allocation): the allocation
loop, LARA (weighted RLS, Alg. 1, Alg. 2), the baselines UA / STF / LRF / ETF and the offline
optimum."""
